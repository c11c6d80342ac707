"""Shared pieces of the Python module's tests: the command-line program to compare with, a float64
NumPy step of the model written from docs/model.md (independent of the engines), file helpers."""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _grayscott_program():
    explicit = os.environ.get("GRAYSCOTT_BIN")
    if explicit:
        return explicit
    for candidate in (ROOT / "build" / "grayscott", ROOT / "build-dev" / "grayscott"):
        if candidate.exists():
            return str(candidate)
    return shutil.which("grayscott")


@pytest.fixture(scope="session")
def grayscott_bin():
    program = _grayscott_program()
    if program is None:
        pytest.fail("no grayscott program to compare with: build it (scripts/build) or set GRAYSCOTT_BIN")
    return program


def run_cli(program, *args):
    done = subprocess.run([program, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


OONO_PURI = np.array([[0.25, 0.5, 0.25], [0.5, 0.0, 0.5], [0.25, 0.5, 0.25]])


def reference_step(u, v, feed=0.014, kill=0.054, du=0.1, dv=0.05, dt=1.0, weights=OONO_PURI,
                   boundary="zero-flux"):
    """One explicit-Euler step in float64: the Laplacian is sum_n w_n (x_n - x_centre) over the
    eight neighbours; a neighbour outside the grid contributes nothing (zero-flux), wraps
    (periodic) or holds u = 1, v = 0 (fixed)."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)

    def laplacian(x, outside):
        if boundary == "periodic":
            padded = np.pad(x, 1, mode="wrap")
        elif boundary == "fixed":
            padded = np.pad(x, 1, mode="constant", constant_values=outside)
        else:
            padded = np.pad(x, 1, mode="edge")  # placeholder, corrected below
        rows, cols = x.shape
        total = np.zeros_like(x)
        for dr in range(3):
            for dc in range(3):
                w = weights[dr, dc]
                if (dr, dc) == (1, 1) or w == 0:
                    continue
                neighbour = padded[dr:dr + rows, dc:dc + cols]
                diff = neighbour - x
                if boundary == "zero-flux":
                    r = np.arange(rows)[:, None] + dr - 1
                    c = np.arange(cols)[None, :] + dc - 1
                    inside = (r >= 0) & (r < rows) & (c >= 0) & (c < cols)
                    diff = np.where(inside, diff, 0.0)
                total += w * diff
        return total

    uvv = u * v * v
    u_next = u + dt * (du * laplacian(u, 1.0) - uvv + feed * (1.0 - u))
    v_next = v + dt * (dv * laplacian(v, 0.0) + uvv - (feed + kill) * v)
    return u_next, v_next
