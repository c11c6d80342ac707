#!/usr/bin/python3
"""JAX versions of grayscott's model on the GPU, as the course wrote them:
  --variant conv:    the Laplacian as a generic 2-D convolution (lax.conv_general_dilated) with
                     zero padding, minus the per-cell sum of the weights present (zero flux);
  --variant stencil: the 3x3 stencil spelled out as eight shifted slices of a zero-padded array;
  --variant vmap:    the stencil version over a batch of --batch simulations with their own feed
                     rates (jax.vmap), as a parameter sweep does; member 0 has the default rates.
Each image's steps run in one jitted lax.fori_loop. Checked against grayscott on a small grid, then
timed. Skips cleanly when JAX or a GPU is missing (--allow-cpu runs it on the CPU instead)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import (DT, DU, DV, FEED, KILL, WEIGHTS, parser, present_weight_sum, run,  # noqa: E402
                    seed_state, skip)

NAME = "jax"
try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError as error:
    skip(NAME, f"module jax not installed ({error})")


def react(u, v, lap_u, lap_v, feed=np.float32(FEED), feed_kill=np.float32(FEED + KILL)):
    f32 = jnp.float32
    uvv = u * v * v
    u_next = u + f32(DT) * (f32(DU) * lap_u - uvv + feed * (f32(1) - u))
    v_next = v + f32(DT) * (f32(DV) * lap_v + uvv - feed_kill * v)
    return u_next, v_next


def batch_feeds(members):
    """Member m's feed rate: the default for member 0, then a spread around it."""
    return np.array([FEED + 0.002 * m for m in range(members)], dtype=np.float32)


def conv_laplacian_factory(rows, cols):
    kernel = jnp.asarray(WEIGHTS.astype(np.float32)).reshape(1, 1, 3, 3)
    weight_sum = jnp.asarray(present_weight_sum(rows, cols))

    def laplacian(x):
        # Cross-correlation with zero padding: the neighbours outside the grid add nothing.
        # HIGHEST precision: no TF32 rounding of the operands on GPUs that have it.
        summed = lax.conv_general_dilated(x[None, None], kernel, window_strides=(1, 1),
                                          padding="SAME", precision=lax.Precision.HIGHEST)[0, 0]
        return summed - weight_sum * x
    return laplacian


def stencil_laplacian_factory(rows, cols):
    weight_sum = jnp.asarray(present_weight_sum(rows, cols))
    w_edge, w_corner = jnp.float32(WEIGHTS[0, 1]), jnp.float32(WEIGHTS[0, 0])

    def laplacian(x):
        p = jnp.pad(x, 1)  # zero halo
        edges = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
        corners = p[:-2, :-2] + p[:-2, 2:] + p[2:, :-2] + p[2:, 2:]
        return w_edge * edges + w_corner * corners - weight_sum * x
    return laplacian


class JaxBatchRunner:
    """`members` simulations stepped as one: jax.vmap of the stencil step over their states and
    feed rates."""

    def __init__(self, rows, cols, members, device):
        laplacian = stencil_laplacian_factory(rows, cols)
        feeds = batch_feeds(members)
        feed_kills = (feeds.astype(np.float64) + KILL).astype(np.float32)

        def step(u, v, feed, feed_kill):
            return react(u, v, laplacian(u), laplacian(v), feed, feed_kill)

        batched = jax.vmap(step)

        def body(_, state):
            u, v = state
            return batched(u, v, self.feeds, self.feed_kills)

        self.steps = jax.jit(lambda u, v, n: lax.fori_loop(0, n, body, (u, v)), static_argnums=2)
        u, v = seed_state(rows, cols)
        self.u = jax.device_put(np.broadcast_to(u, (members, rows, cols)).copy(), device)
        self.v = jax.device_put(np.broadcast_to(v, (members, rows, cols)).copy(), device)
        self.feeds = jax.device_put(feeds, device)
        self.feed_kills = jax.device_put(feed_kills, device)

    def advance(self, count):
        self.u, self.v = self.steps(self.u, self.v, count)

    def v_host(self):
        return np.asarray(jax.device_get(self.v.block_until_ready()))[0]


class JaxRunner:
    def __init__(self, rows, cols, variant, device):
        factory = conv_laplacian_factory if variant == "conv" else stencil_laplacian_factory
        laplacian = factory(rows, cols)

        def body(_, state):
            u, v = state
            return react(u, v, laplacian(u), laplacian(v))

        # The step count is static: one compiled loop per steps-per-image.
        self.steps = jax.jit(lambda u, v, n: lax.fori_loop(0, n, body, (u, v)), static_argnums=2)
        u, v = seed_state(rows, cols)
        self.u, self.v = jax.device_put(u, device), jax.device_put(v, device)

    def advance(self, count):
        self.u, self.v = self.steps(self.u, self.v, count)

    def v_host(self):
        return np.asarray(jax.device_get(self.v.block_until_ready()))


def main():
    p = parser(__doc__)
    p.add_argument("--variant", choices=("conv", "stencil", "vmap"), default="stencil")
    p.add_argument("--batch", type=int, default=4, help="simulations in the vmap variant's batch")
    p.add_argument("--allow-cpu", action="store_true", help="run on the CPU when there is no GPU")
    p.add_argument("--cpu", action="store_true", help="run on the CPU, GPU or not")
    args = p.parse_args()
    name = f"jax-{args.variant}"
    if args.cpu:
        device = jax.devices("cpu")[0]
    else:
        try:
            device = jax.devices("gpu")[0]
        except RuntimeError as error:
            if not args.allow_cpu:
                skip(name, f"no GPU for JAX ({error})")
            device = jax.devices("cpu")[0]
    if device.platform == "cpu":
        name += "-cpu"
    if args.variant == "vmap":
        run(name, lambda rows, cols: JaxBatchRunner(rows, cols, args.batch, device), args,
            members=args.batch)
    else:
        run(name, lambda rows, cols: JaxRunner(rows, cols, args.variant, device), args)


if __name__ == "__main__":
    main()
