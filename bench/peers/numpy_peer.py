#!/usr/bin/python3
"""The course's array-first NumPy version of grayscott's model, checked against grayscott on a
small grid, then timed on the workload given."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import parser, run  # noqa: E402
from array_first import ArrayFirst  # noqa: E402


def main():
    args = parser(__doc__).parse_args()
    run("numpy", lambda rows, cols: ArrayFirst(rows, cols), args)


if __name__ == "__main__":
    main()
