#!/usr/bin/env python3
"""What driving grayscott from Python costs: the course's loop `for image in range(images):
sim.advance(steps_per_image)` against `grayscott bench` stepping the same workload (the same engine,
the same loop in C++), measured interleaved in one invocation; and the cost of one `advance` call
and one `sim.v` access, in microseconds.

Run it with the Python that has the module: build/venv/bin/python bench/python_overhead.py."""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import grayscott as gs

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def per_call_microseconds(calls, backend):
    """One call's cost on a tiny grid, on the CPU and, when another backend is measured, on it too
    (on a GPU, advance(1) queues a launch and returns; sim.v waits for the queued steps and makes a
    device view)."""
    results = {}
    for where in dict.fromkeys(("cpu", backend)):
        sim = gs.Simulation(rows=8, cols=8, backend=where, threads=1 if where == "cpu" else None)
        suffix = "" if where == "cpu" else f" ({where})"
        for label, action in (("advance(0)", lambda: sim.advance(0)),
                              ("advance(1) on 8x8", lambda: sim.advance(1)),
                              ("sim.v", lambda: sim.v)):
            for _ in range(calls // 10):  # warm-up
                action()
            start = time.perf_counter()
            for _ in range(calls):
                action()
            results[label + suffix] = (time.perf_counter() - start) / calls * 1e6
    return results


def python_loop_seconds(a):
    """The loop's time on a warmed engine, and the first advance's on a fresh one (which, on a GPU,
    includes recording the engine's launch graphs: bench keeps that out of its clock too)."""
    sim = gs.Simulation(rows=a.rows, cols=a.cols, backend=a.backend, threads=a.threads)
    start = time.perf_counter()
    sim.advance(a.steps_per_image)
    np.asarray(sim.v)  # waits for the steps on a GPU
    first = time.perf_counter() - start
    for _ in range(max(1, a.images // 10)):
        sim.advance(a.steps_per_image)
    sim.reset()  # the same engine from its initial state: as bench, construction and graphs stay out
    start = time.perf_counter()
    for _ in range(a.images):
        sim.advance(a.steps_per_image)
    v = np.asarray(sim.v)  # as bench reads the final v back
    seconds = time.perf_counter() - start
    if not np.isfinite(v).all():
        sys.exit("python_overhead: non-finite values")
    return seconds, first


def bench_seconds(a):
    command = [a.grayscott, "bench", "--preset", "seed", "--rows", str(a.rows), "--cols",
               str(a.cols), "--images", str(a.images), "--steps-per-image",
               str(a.steps_per_image), "--repeat", "1", "--backend", a.backend, "--json"]
    if a.threads:
        command += ["--threads", str(a.threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"python_overhead: grayscott bench failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["seconds"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1080)
    p.add_argument("--cols", type=int, default=1920)
    p.add_argument("--images", type=int, default=1000, help="1000: the course's workload")
    p.add_argument("--steps-per-image", type=int, default=32)
    p.add_argument("--repeat", type=int, default=3, help="interleaved pairs; medians are kept")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--calls", type=int, default=200000, help="calls timed for the per-call costs")
    p.add_argument("--grayscott", default=os.path.join(HERE, "..", "build", "grayscott"))
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    a.threads = a.threads or None

    costs = per_call_microseconds(a.calls, a.backend)
    loop, bench, first = [], [], []
    for _ in range(a.repeat):
        bench.append(bench_seconds(a))
        seconds, first_advance = python_loop_seconds(a)
        loop.append(seconds)
        first.append(first_advance)
    result = {
        "machine": f"{cpu_model()}, {os.cpu_count()} CPUs",
        "workload": f"{a.rows}x{a.cols} float32, {a.images} images x {a.steps_per_image} steps",
        "backend": a.backend,
        "python_loop_seconds": statistics.median(loop), "python_loop_each": loop,
        "bench_seconds": statistics.median(bench), "bench_each": bench,
        "ratio": statistics.median(loop) / statistics.median(bench),
        "first_advance_seconds": statistics.median(first),
        "per_call_microseconds": costs,
    }
    if a.json:
        print(json.dumps(result))
        return
    print(f"machine: {result['machine']}\nworkload: {result['workload']} ({a.backend})")
    print(f"grayscott bench:  {result['bench_seconds']:.3f} s (median of {a.repeat})")
    print(f"Python loop:      {result['python_loop_seconds']:.3f} s (median of {a.repeat})")
    print(f"Python / bench:   {result['ratio']:.4f}")
    print(f"a fresh Simulation's first advance({a.steps_per_image}): "
          f"{1e3 * result['first_advance_seconds']:.2f} ms (not in the loop's time)")
    for label, us in costs.items():
        print(f"one {label:25} {us:8.2f} us")


if __name__ == "__main__":
    main()
