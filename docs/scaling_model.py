"""The projection in scaling.md: time per step of a 2D-decomposed Gray-Scott run on H200 GPUs
over InfiniBand, from a handful of stated assumptions. A model, not a measurement.
Run: python3 docs/scaling_model.py"""
import math

# --- assumptions (see scaling.md) -----------------------------------------------------------
HBM = 4.3e12             # H200 memory bandwidth, bytes/s
HBM_EFFICIENCY = 0.8     # fraction a stencil kernel achieves
BYTES_PER_CELL_STEP = 16  # float32: read u, v and write u, v once (neighbours from cache)
T_CELL = BYTES_PER_CELL_STEP / (HBM * HBM_EFFICIENCY)  # seconds per cell-update
T_LAUNCH = 3e-6          # fixed cost of one step on one GPU (kernel launches, stream order)
ALPHA = 10e-6            # fixed cost of one halo exchange: pack/unpack kernels, stream sync,
                         # MPI latency (~2 us on IB), pinned-buffer copies
NETWORKS = {"HDR": 23e9, "NDR": 45e9}  # achieved bytes/s per GPU (one 200/400 Gb/s port each)
NVLINK = 300e9           # achieved bytes/s between GPUs of one node
GPUS_PER_NODE = 4
FS_BANDWIDTH = 500e9     # aggregate parallel file system write bandwidth, bytes/s
NODE_WRITE = 10e9        # one node's write bandwidth to it, bytes/s
STEPS_PER_IMAGE = 32


def dims(p):
    """MPI_Dims_create's most square factorisation."""
    r = int(math.isqrt(p))
    while p % r:
        r -= 1
    return p // r, r


def step_time(rows, cols, p, beta, depth=1):
    """Seconds per step on the slowest (interior) rank; 1 GPU: no exchange."""
    if p == 1:
        return T_LAUNCH + rows * cols * T_CELL
    pr, pc = dims(p)
    if cols > rows:
        pr, pc = pc, pr
    nr, nc = math.ceil(rows / pr), math.ceil(cols / pc)
    halo_bytes = 2 * 4 * (2 * (nr + nc) * depth + 4 * depth * depth)
    # Neighbours on the same node talk over NVLink; with >1 node at least one edge crosses IB.
    bandwidth = NVLINK if p <= GPUS_PER_NODE else beta
    exchange = ALPHA + halo_bytes / bandwidth
    # Fused steps: step s of k computes the block widened by k-1-s cells.
    computed = sum((nr + 2 * w) * (nc + 2 * w) for w in range(depth)) / depth
    interior = (nr - 2) * (nc - 2)
    hidden = min(exchange, interior * T_CELL)  # the interior runs while the halo travels
    return T_LAUNCH + computed * T_CELL + (exchange - hidden) / depth, halo_bytes


def table(title, cases):
    print(f"\n{title}")
    print("| GPUs | nodes | grid | cells/GPU | halo B/exchange/GPU | step (HDR) | eff. (HDR) | step (NDR) | eff. (NDR) |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for p, rows, cols, base in cases:
        out = []
        for beta in NETWORKS.values():
            t = step_time(rows, cols, p, beta)
            t, hb = t if isinstance(t, tuple) else (t, 0)
            out.append((t, hb))
        (th, hb), (tn, _) = out
        eh, en = base(th, p, rows, cols), base(tn, p, rows, cols)
        print(f"| {p} | {max(1, p // GPUS_PER_NODE)} | {rows}x{cols} | {rows * cols / p / 1e6:.1f} M | "
              f"{hb / 1e3:.0f} kB | {th * 1e6:.1f} us | {eh:.0%} | {tn * 1e6:.1f} us | {en:.0%} |")


if __name__ == "__main__":
    print(f"t_cell = {T_CELL * 1e12:.2f} ps per cell-update ({1 / T_CELL / 1e9:.0f} Gcell-updates/s per GPU)")
    gpus = [1, 4, 16, 64, 256]

    for block in [(16384, 16384), (1080, 1920)]:
        cases = []
        for p in gpus:
            pr, pc = dims(p)
            rows, cols = (block[0] * pc, block[1] * pr) if block[1] > block[0] else (block[0] * pr, block[1] * pc)
            t1 = step_time(*block, 1, 0)
            cases.append((p, rows, cols, lambda t, p, r, c, t1=t1: t1 / t))
        table(f"Weak scaling, {block[0]}x{block[1]} cells per GPU (efficiency = t(1 GPU) / t(P))", cases)

    for grid in [(32768, 32768), (1080, 1920)]:
        t1 = step_time(*grid, 1, 0)
        cases = [(p, grid[0], grid[1], lambda t, p, r, c, t1=t1: t1 / (p * t)) for p in gpus]
        table(f"Strong scaling, {grid[0]}x{grid[1]} cells (efficiency = t(1) / (P t(P)))", cases)

    print("\nOutput: one float32 image of v every 32 steps, weak scaling at 16384^2 per GPU")
    print("| GPUs | image | write | 32 steps |")
    print("|---:|---:|---:|---:|")
    for p in gpus:
        image = 4 * 16384 * 16384 * p
        compute = STEPS_PER_IMAGE * step_time(16384, 16384, 1, 0)
        nodes = max(1, p // GPUS_PER_NODE)
        write = image / min(FS_BANDWIDTH, nodes * NODE_WRITE)
        print(f"| {p} | {image / 1e9:.1f} GB | {write:.2f} s | {compute * 1e3:.0f} ms |")
