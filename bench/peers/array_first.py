"""The course's array-first formulation: preallocated float32 arrays, shifted slices over a
zero halo, in-place ufuncs, no Python loop over cells. Written against the NumPy API so that the
same code runs on NumPy (CPU) and CuPy (GPU): `xp` is the array module."""

import numpy as np

from common import DT, DU, DV, FEED, KILL, WEIGHTS, present_weight_sum, seed_state


class ArrayFirst:
    def __init__(self, rows, cols, xp=np):
        self.xp = xp
        f32 = np.float32
        # Two padded buffers per field (ping-pong); the halo stays zero, so a neighbour outside
        # the grid adds nothing to the weighted sum.
        self.u = [xp.zeros((rows + 2, cols + 2), dtype=f32) for _ in range(2)]
        self.v = [xp.zeros((rows + 2, cols + 2), dtype=f32) for _ in range(2)]
        u0, v0 = seed_state(rows, cols, xp)
        self.u[0][1:-1, 1:-1] = u0
        self.v[0][1:-1, 1:-1] = v0
        self.current = 0
        self.weight_sum = xp.asarray(present_weight_sum(rows, cols))
        shape = (rows, cols)
        self.edges, self.corners = xp.empty(shape, f32), xp.empty(shape, f32)
        self.lap_u, self.lap_v = xp.empty(shape, f32), xp.empty(shape, f32)
        self.uvv, self.tmp = xp.empty(shape, f32), xp.empty(shape, f32)
        self.w_edge, self.w_corner = f32(WEIGHTS[0, 1]), f32(WEIGHTS[0, 0])
        self.feed, self.kill, self.du, self.dv, self.dt = (f32(x) for x in (FEED, KILL, DU, DV, DT))
        self.rows, self.cols = rows, cols

    def laplacian(self, padded, out):
        xp, e, c = self.xp, self.edges, self.corners
        xp.add(padded[:-2, 1:-1], padded[2:, 1:-1], out=e)
        xp.add(e, padded[1:-1, :-2], out=e)
        xp.add(e, padded[1:-1, 2:], out=e)
        xp.add(padded[:-2, :-2], padded[:-2, 2:], out=c)
        xp.add(c, padded[2:, :-2], out=c)
        xp.add(c, padded[2:, 2:], out=c)
        xp.multiply(e, self.w_edge, out=e)
        xp.multiply(c, self.w_corner, out=c)
        xp.add(e, c, out=out)
        xp.multiply(self.weight_sum, padded[1:-1, 1:-1], out=c)
        xp.subtract(out, c, out=out)

    def step(self):
        xp, src, dst = self.xp, self.current, 1 - self.current
        u, v = self.u[src][1:-1, 1:-1], self.v[src][1:-1, 1:-1]
        u_next, v_next = self.u[dst][1:-1, 1:-1], self.v[dst][1:-1, 1:-1]
        self.laplacian(self.u[src], self.lap_u)
        self.laplacian(self.v[src], self.lap_v)
        uvv, tmp = self.uvv, self.tmp
        xp.multiply(u, v, out=uvv)
        xp.multiply(uvv, v, out=uvv)
        # u_next = u + dt * (du * lap_u - uvv + feed * (1 - u))
        xp.multiply(self.lap_u, self.du, out=self.lap_u)
        xp.subtract(self.lap_u, uvv, out=self.lap_u)
        xp.subtract(np.float32(1), u, out=tmp)
        xp.multiply(tmp, self.feed, out=tmp)
        xp.add(self.lap_u, tmp, out=self.lap_u)
        xp.multiply(self.lap_u, self.dt, out=self.lap_u)
        xp.add(u, self.lap_u, out=u_next)
        # v_next = v + dt * (dv * lap_v + uvv - (feed + kill) * v)
        xp.multiply(self.lap_v, self.dv, out=self.lap_v)
        xp.add(self.lap_v, uvv, out=self.lap_v)
        xp.multiply(v, self.feed + self.kill, out=tmp)
        xp.subtract(self.lap_v, tmp, out=self.lap_v)
        xp.multiply(self.lap_v, self.dt, out=self.lap_v)
        xp.add(v, self.lap_v, out=v_next)
        self.current = dst

    def advance(self, steps):
        for _ in range(steps):
            self.step()

    def v_host(self):
        v = self.v[self.current][1:-1, 1:-1]
        return v.get() if hasattr(v, "get") else np.array(v)
