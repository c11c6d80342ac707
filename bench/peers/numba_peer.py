#!/usr/bin/python3
"""A Numba version of grayscott's model as its users write a stencil loop: @njit(parallel=True,
fastmath=True), rows in parallel (prange), the interior of each row in a branch-free loop the
compiler can vectorise, the edges through the general neighbour rule. Checked against grayscott on
a small grid, then timed."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import DT, DU, DV, FEED, KILL, WEIGHTS, parser, run, seed_state, skip  # noqa: E402

try:
    import numba
    from numba import njit, prange
except ImportError as error:
    skip("numba", f"module numba not installed ({error})")

F32 = np.float32
# Every constant is float32: a Python float would promote the arithmetic to float64.
W = WEIGHTS.astype(F32)
COEFFICIENTS = np.array([FEED, KILL, DU, DV, DT], dtype=F32)


@njit(inline="always", fastmath=True)
def _edge_laplacian(x, r, c, w):
    """The general rule: sum over the neighbours inside the grid of w * (x_n - x_centre)."""
    rows, cols = x.shape
    centre = x[r, c]
    total = F32(0)
    for dr in range(-1, 2):
        for dc in range(-1, 2):
            if dr == 0 and dc == 0:
                continue
            rr, cc = r + dr, c + dc
            if 0 <= rr < rows and 0 <= cc < cols:
                total += w[dr + 1, dc + 1] * (x[rr, cc] - centre)
    return total


@njit(inline="always", fastmath=True)
def _react(u, v, lap_u, lap_v, k):
    feed, kill, du, dv, dt = k[0], k[1], k[2], k[3], k[4]
    uvv = u * v * v
    return (u + dt * (du * lap_u - uvv + feed * (F32(1) - u)),
            v + dt * (dv * lap_v + uvv - (feed + kill) * v))


@njit(parallel=True, fastmath=True)
def one_step(u, v, u_next, v_next, w, k):
    rows, cols = u.shape
    we, wc = w[0, 1], w[0, 0]
    feed, kill, du, dv, dt = k[0], k[1], k[2], k[3], k[4]
    for r in prange(rows):
        # Cells with a neighbour outside the grid: every cell of the first and last rows, the
        # first and last cells of the others (a stride of cols - 1 visits just those two).
        edge_stride = 1
        if 0 < r < rows - 1:
            edge_stride = max(cols - 1, 1)
            # The interior of the row: the eight neighbours are all there.
            ua, um, ub = u[r - 1], u[r], u[r + 1]
            va, vm, vb = v[r - 1], v[r], v[r + 1]
            uo, vo = u_next[r], v_next[r]
            for c in range(1, cols - 1):
                cu, cv = um[c], vm[c]
                lu = (wc * (ua[c - 1] - cu) + we * (ua[c] - cu) + wc * (ua[c + 1] - cu)
                      + we * (um[c - 1] - cu) + we * (um[c + 1] - cu)
                      + wc * (ub[c - 1] - cu) + we * (ub[c] - cu) + wc * (ub[c + 1] - cu))
                lv = (wc * (va[c - 1] - cv) + we * (va[c] - cv) + wc * (va[c + 1] - cv)
                      + we * (vm[c - 1] - cv) + we * (vm[c + 1] - cv)
                      + wc * (vb[c - 1] - cv) + we * (vb[c] - cv) + wc * (vb[c + 1] - cv))
                uvv = cu * cv * cv
                uo[c] = cu + dt * (du * lu - uvv + feed * (F32(1) - cu))
                vo[c] = cv + dt * (dv * lv + uvv - (feed + kill) * cv)
        for c in range(0, cols, edge_stride):
            lu = _edge_laplacian(u, r, c, w)
            lv = _edge_laplacian(v, r, c, w)
            u_next[r, c], v_next[r, c] = _react(u[r, c], v[r, c], lu, lv, k)


class NumbaRunner:
    def __init__(self, rows, cols):
        self.u, self.v = seed_state(rows, cols)
        self.u_next, self.v_next = np.empty_like(self.u), np.empty_like(self.v)

    def advance(self, count):
        for _ in range(count):
            one_step(self.u, self.v, self.u_next, self.v_next, W, COEFFICIENTS)
            self.u, self.u_next = self.u_next, self.u
            self.v, self.v_next = self.v_next, self.v

    def v_host(self):
        return self.v


def main():
    args = parser(__doc__).parse_args()
    run(f"numba ({numba.get_num_threads()} threads)", NumbaRunner, args)


if __name__ == "__main__":
    main()
