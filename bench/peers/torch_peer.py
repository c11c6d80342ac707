#!/usr/bin/python3
"""A PyTorch version of grayscott's model on the GPU: the Laplacian as a 3x3 conv2d with zero
padding minus the per-cell sum of the weights present (zero flux), the reaction with in-place
tensor operations, under no_grad. Checked against grayscott on a small grid, then timed. Skips
cleanly when PyTorch or a CUDA device is missing (--allow-cpu runs it on the CPU instead)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import (DT, DU, DV, FEED, KILL, WEIGHTS, parser, present_weight_sum, run,  # noqa: E402
                    seed_state, skip)

try:
    import torch
    import torch.nn.functional as F
except ImportError as error:
    skip("torch", f"module torch not installed ({error})")


class TorchRunner:
    def __init__(self, rows, cols, device):
        def tensor(a):
            return torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float32, device=device)
        u, v = seed_state(rows, cols)
        # Shape [1, 1, rows, cols] for conv2d; updated in place.
        self.u, self.v = tensor(u)[None, None], tensor(v)[None, None]
        self.kernel = tensor(WEIGHTS)[None, None]
        self.weight_sum = tensor(present_weight_sum(rows, cols))[None, None]
        self.lap_u, self.lap_v = torch.empty_like(self.u), torch.empty_like(self.v)
        self.uvv, self.tmp = torch.empty_like(self.u), torch.empty_like(self.u)
        self.device = device

    def laplacian(self, x, out):
        out.copy_(F.conv2d(x, self.kernel, padding=1))
        out.sub_(self.weight_sum * x)

    @torch.no_grad()
    def advance(self, count):
        u, v, uvv, tmp = self.u, self.v, self.uvv, self.tmp
        for _ in range(count):
            self.laplacian(u, self.lap_u)
            self.laplacian(v, self.lap_v)
            torch.mul(u, v, out=uvv)
            uvv.mul_(v)
            # u += dt * (du * lap_u - uvv + feed * (1 - u))
            torch.mul(u, -FEED, out=tmp)
            tmp.add_(FEED)
            self.lap_u.mul_(DU).sub_(uvv).add_(tmp).mul_(DT)
            # v += dt * (dv * lap_v + uvv - (feed + kill) * v)
            torch.mul(v, FEED + KILL, out=tmp)
            self.lap_v.mul_(DV).add_(uvv).sub_(tmp).mul_(DT)
            u.add_(self.lap_u)
            v.add_(self.lap_v)

    def v_host(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return self.v[0, 0].cpu().numpy()


def main():
    p = parser(__doc__)
    p.add_argument("--allow-cpu", action="store_true", help="run on the CPU when there is no GPU")
    args = p.parse_args()
    # Full float32 convolutions: TF32 would round the operands to 10 mantissa bits.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    if torch.cuda.is_available():
        device = torch.device("cuda", 0)
    elif args.allow_cpu:
        device = torch.device("cpu")
    else:
        skip("torch", "no CUDA device for PyTorch")
    run("torch", lambda rows, cols: TorchRunner(rows, cols, device), args)


if __name__ == "__main__":
    main()
