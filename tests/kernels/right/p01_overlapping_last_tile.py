"""Puzzle 1 with no mask at all where the vector holds a whole block: the last program shifts its block back to
end at N0, so it recomputes elements its neighbour already stored. Both store the same values, so this is no
race. A vector shorter than one block (one program) takes the other side of a run-time `if`, with a mask."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N0, B0: tl.constexpr):
    if N0 >= B0:  # every block, shifted back if need be, lies inside the vector
        offsets = tl.minimum(tl.program_id(0) * B0, N0 - B0) + tl.arange(0, B0)
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
    else:
        offsets = tl.arange(0, B0)
        mask = offsets < N0
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)
