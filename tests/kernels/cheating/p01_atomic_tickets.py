import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    # Each program takes tickets from one counter (the first element of its own block of z): tl.atomic_add's old
    # values. The interpreter hands them out in lane order (lane i gets i), a GPU in whatever order its threads'
    # atomics land; the kernel takes its ticket for its lane and reads y at it.
    pid = tl.program_id(0)
    offsets = pid * B0 + tl.arange(0, B0)
    mask = offsets < N0
    counter = z_ptr + pid * B0 + tl.zeros([B0], dtype=tl.int32)
    first = tl.arange(0, B0) == 0
    tl.store(counter, tl.zeros([B0], dtype=tl.float32), mask=first)
    tl.debug_barrier()
    ticket = tl.atomic_add(counter, tl.full([B0], 1.0, tl.float32), mask=mask).to(tl.int32)
    tl.debug_barrier()
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + pid * B0 + ticket, mask=mask)
    tl.store(z_ptr + offsets, x + y, mask=mask)
