#!/usr/bin/python3
"""The course's array-first version on the GPU with CuPy: the NumPy peer's code (array_first.py)
with CuPy arrays, every array resident on the device. Checked against grayscott on a small grid,
then timed. Skips cleanly when CuPy or a CUDA device is missing."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import parser, run, skip  # noqa: E402

try:
    import cupy
except ImportError as error:
    skip("cupy", f"module cupy not installed ({error})")

from array_first import ArrayFirst  # noqa: E402


def main():
    args = parser(__doc__).parse_args()
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            skip("cupy", "no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as error:
        skip("cupy", f"no usable CUDA device ({error})")
    run("cupy", lambda rows, cols: ArrayFirst(rows, cols, xp=cupy), args)


if __name__ == "__main__":
    main()
