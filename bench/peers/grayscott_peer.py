#!/usr/bin/python3
"""grayscott itself from Python: the course's loop written with the grayscott module,
`for image in range(images): sim.advance(steps_per_image)`, the state kept on the engine. Its time
against `grayscott bench` on the same workload is the cost of driving the engine from Python.
--batch N steps N simulations together (grayscott.Sweep), as JAX's vmap version does. Skips when
the module is not installed (scripts/python-package installs it)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import parser, run, skip  # noqa: E402

NAME = "grayscott-python"
try:
    import grayscott as gs
except ImportError as error:
    skip(NAME, f"module grayscott not installed ({error}); scripts/python-package installs it")


class ModuleRunner:
    def __init__(self, rows, cols, backend, threads):
        self.sim = gs.Simulation(rows=rows, cols=cols, backend=backend, threads=threads)

    def advance(self, count):
        self.sim.advance(count)

    def v_host(self):
        return np.asarray(self.sim.v)


class SweepRunner:
    def __init__(self, rows, cols, members, backend, threads):
        # The feed rates of jax_peer.py's vmap variant: member 0 has the default rates.
        feeds = [0.014 + 0.002 * m for m in range(members)]
        self.batch = gs.Sweep(feed=feeds, kill=0.054, rows=rows, cols=cols, backend=backend,
                              threads=threads)

    def advance(self, count):
        self.batch.advance(count)

    def v_host(self):
        return np.asarray(self.batch.v)[0]


def main():
    p = parser(__doc__)
    p.add_argument("--backend", default="auto")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--batch", type=int, default=1)
    args = p.parse_args()
    if args.batch > 1:
        run(f"{NAME}-sweep", lambda r, c: SweepRunner(r, c, args.batch, args.backend, args.threads),
            args, members=args.batch)
    else:
        run(NAME, lambda r, c: ModuleRunner(r, c, args.backend, args.threads), args)


if __name__ == "__main__":
    main()
