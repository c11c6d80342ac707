"""Compares two run or sweep files: the same datasets, attributes, shapes and chunks, and every
dataset bitwise equal. Exit status 0 when identical, 1 with one line per difference otherwise.
Attributes named after the files may differ (e.g. backend, when a GPU run is compared with a CPU
one). Datasets under the groups `to_rounding` names (e.g. stats: sums over ranks, added in another
order) need only agree to rounding. Usage: compare_runs.py SERIAL.h5 PARALLEL.h5 [ATTRIBUTE...]"""
import sys

import h5py
import numpy as np


def datasets(group, prefix=""):
    """Every dataset below `group`, by path (groups such as /checkpoint included)."""
    out = {}
    for key in group.keys():
        obj = group[key]
        if isinstance(obj, h5py.Group):
            out.update(datasets(obj, prefix + key + "/"))
        else:
            out[prefix + key] = obj
    return out


def main(a_path, b_path, may_differ=(), to_rounding=()):
    problems = []
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        da, db = datasets(a), datasets(b)
        if sorted(da) != sorted(db):
            problems.append(f"datasets differ: {sorted(da)} vs {sorted(db)}")
        for name in sorted(set(da) & set(db)):
            x, y = da[name], db[name]
            if x.shape != y.shape or x.dtype != y.dtype or x.chunks != y.chunks:
                problems.append(f"/{name}: {x.shape} {x.dtype} {x.chunks} vs "
                                f"{y.shape} {y.dtype} {y.chunks}")
                continue
            xb, yb = x[...].tobytes(), y[...].tobytes()
            if name.split("/")[0] in to_rounding:
                if not np.allclose(x[...], y[...], rtol=1e-12, atol=1e-15, equal_nan=True):
                    problems.append(f"/{name}: differs beyond rounding")
            elif xb != yb:
                differing = int(np.count_nonzero(x[...].view(np.uint8) != y[...].view(np.uint8)))
                problems.append(f"/{name}: {differing} differing bytes")
        if sorted(a.attrs.keys()) != sorted(b.attrs.keys()):
            problems.append("root attributes differ in name")
        for key in a.attrs.keys():
            if key in b.attrs and key not in may_differ and not np.array_equal(a.attrs[key], b.attrs[key]):
                problems.append(f"attribute {key}: {a.attrs[key]!r} vs {b.attrs[key]!r}")
        if a.attrs.get("kind") != "sweep" and "v" in a and a["v"].id != a["matrix"].id:
            problems.append("/matrix is not /v")
    for p in problems:
        print(f"{b_path}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
