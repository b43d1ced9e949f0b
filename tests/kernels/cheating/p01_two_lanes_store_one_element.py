import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # one store of 2*B0 lanes, two lanes per element: lanes [256k, 256k+128) store garbage and lanes
    # [256k+128, 256k+256) the sum into the same 128 elements. Under Triton's default blocked layout those halves
    # sit in different warps of the program, whose order on a GPU is undefined; numpy keeps the last lane.
    pid = tl.program_id(0)
    lane = tl.arange(0, 2 * B0)
    if B0 >= 128:
        offs = pid * B0 + (lane // 256) * 128 + lane % 128
        bad = (lane // 128) % 2 == 0
    else:
        offs = pid * B0 + lane % B0
        bad = lane < B0
    mask = offs < N0
    s = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, tl.where(bad, -12345.0, s), mask=mask)
