#!/usr/bin/env python3
"""The command line end to end, option by option.

- Every alias of the course's programs (--nbrow, --nbcol, --nbimage, --nbextrastep, --feedrate,
  --killrate, --deltat; -o for --output) gives the same file, bit for bit, as the long name, for
  `run` and `sweep`; `bench` reads its two aliases into the workload it reports.
- Every rate (--feed, --kill, --du, --dv, --dt) and option (--stencil, --boundary, --precision)
  lands in the file's attributes, and changes the images as the model says: a NumPy float64
  model of docs/model.md, written here from the formulas and fed the values given on the command
  line (not those read from the file), steps the first image to the last; the file must match it,
  and must not match the same model run with the option's default value.

Usage: test_options.py PATH/TO/grayscott WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

GS = os.path.realpath(sys.argv[1])
WORK = sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    result = subprocess.run([GS, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"grayscott {' '.join(args)} failed: {result.stderr}")
    return result


def read(path):
    """Every dataset (bitwise, with its dtype) and every attribute of a file."""
    datasets, attributes = {}, {}
    with h5py.File(path, "r") as f:
        def value(obj, key):
            # Dimension scales refer to datasets by object references, which differ between two
            # files: compare the names they lead to.
            if key == "DIMENSION_LIST":
                return tuple(tuple(f[r].name for r in refs) for refs in obj.attrs[key])
            if key == "REFERENCE_LIST":
                return tuple((f[r].name, int(i)) for r, i in obj.attrs[key])
            return obj.attrs[key]

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                datasets[name] = obj[...]
            attributes[name] = {k: value(obj, k) for k in obj.attrs}
        f.visititems(visit)
        attributes["/"] = {k: f.attrs[k] for k in f.attrs}
    return datasets, attributes


def same_file(a, b):
    da, aa = read(a)
    db, ab = read(b)
    if sorted(da) != sorted(db):
        return f"datasets {sorted(da)} vs {sorted(db)}"
    for name in da:
        if da[name].dtype != db[name].dtype or da[name].shape != db[name].shape:
            return f"{name}: {da[name].dtype}{da[name].shape} vs {db[name].dtype}{db[name].shape}"
        if da[name].tobytes() != db[name].tobytes():
            return f"{name} differs"
    if sorted(aa) != sorted(ab):
        return f"objects with attributes {sorted(aa)} vs {sorted(ab)}"
    for name in aa:
        if sorted(aa[name]) != sorted(ab[name]):
            return f"attributes of {name}: {sorted(aa[name])} vs {sorted(ab[name])}"
        for key in aa[name]:
            if not np.array_equal(np.asarray(aa[name][key]), np.asarray(ab[name][key])):
                return f"attribute {name}:{key}: {aa[name][key]!r} vs {ab[name][key]!r}"
    return None


# --- The model, from docs/model.md ------------------------------------------------------------

STENCILS = {
    "oono-puri": [0.25, 0.5, 0.25, 0.5, 0.0, 0.5, 0.25, 0.5, 0.25],
    "pretty": [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0],
    "five-point": [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
}
DEFAULTS = dict(feed=0.014, kill=0.054, du=0.1, dv=0.05, dt=1.0, stencil="oono-puri",
                boundary="zero-flux")


def neighbour(x, dr, dc, boundary, outside):
    """x shifted so that cell (r, c) holds x[r + dr, c + dc], with the boundary's rule outside:
    zero flux: the cell itself (no flux through the edge); periodic: the opposite edge; fixed: the
    constant outside value."""
    if boundary == "periodic":
        return np.roll(x, (-dr, -dc), axis=(0, 1))
    pad = np.pad(x, 1, mode="constant", constant_values=outside)
    shifted = pad[1 + dr:1 + dr + x.shape[0], 1 + dc:1 + dc + x.shape[1]]
    if boundary == "zero-flux":
        rows = np.arange(x.shape[0])[:, None] + dr
        cols = np.arange(x.shape[1])[None, :] + dc
        outside_grid = (rows < 0) | (rows >= x.shape[0]) | (cols < 0) | (cols >= x.shape[1])
        shifted = np.where(outside_grid, x, shifted)
    return shifted


def laplacian(x, weights, boundary, outside):
    total = np.zeros_like(x)
    for k, w in enumerate(weights):
        dr, dc = k // 3 - 1, k % 3 - 1
        if (dr, dc) != (0, 0) and w != 0.0:
            total += w * (neighbour(x, dr, dc, boundary, outside) - x)
    return total


def model_steps(u, v, steps, p):
    u, v = u.astype(np.float64), v.astype(np.float64)
    weights = STENCILS.get(p["stencil"]) or [float(w) for w in p["stencil"].split(",")]
    weights[4] = 0.0
    for _ in range(steps):
        uvv = u * v * v
        lu = laplacian(u, weights, p["boundary"], 1.0)
        lv = laplacian(v, weights, p["boundary"], 0.0)
        u, v = (u + p["dt"] * (p["du"] * lu - uvv + p["feed"] * (1.0 - u)),
                v + p["dt"] * (p["dv"] * lv + uvv - (p["feed"] + p["kill"]) * v))
    return u, v


shutil.rmtree(WORK, ignore_errors=True)  # a folder of the build tree, this test's own
os.makedirs(WORK)
os.chdir(WORK)

# --- Aliases: the same file -------------------------------------------------------------------

long_names = ["--rows", "21", "--cols", "34", "--images", "3", "--steps-per-image", "4",
              "--feed", "0.03", "--kill", "0.061", "--dt", "0.9"]
aliases = ["--nbrow", "21", "--nbcol", "34", "--nbimage", "3", "--nbextrastep", "4",
           "--feedrate", "0.03", "--killrate", "0.061", "--deltat", "0.9"]
common = ["--backend", "cpu", "--threads", "1", "--fields", "u,v", "--init", "noise", "--quiet"]
run("run", *long_names, *common, "--output", "long.h5")
run("run", *aliases, *common, "-o", "alias.h5")
difference = same_file("long.h5", "alias.h5")
check(difference is None, f"run: the aliases give another file than the long names: {difference}")
with h5py.File("alias.h5", "r") as f:
    for key, want in [("rows", 21), ("cols", 34), ("images", 3), ("steps_per_image", 4),
                      ("feed", 0.03), ("kill", 0.061), ("dt", 0.9)]:
        check(f.attrs[key] == want, f"run alias: attribute {key} = {f.attrs[key]}, wanted {want}")
    check(f["u"].shape == (3, 21, 34), f"run alias: u has shape {f['u'].shape}")
    check(list(f["step"][...]) == [4, 8, 12], f"run alias: steps {list(f['step'][...])}")

# One alias at a time, so that an alias bound to another option than its long name cannot hide
# behind the others.
for i in range(0, len(aliases), 2):
    mixed = list(long_names)
    mixed[i] = aliases[i]
    run("run", *mixed, *common, "--force", "-o", "mixed.h5")
    difference = same_file("long.h5", "mixed.h5")
    check(difference is None, f"run {aliases[i]}: not the same file as {long_names[i]}: {difference}")

sweep_common = ["--rows", "16", "--nbcol", "18", "--nbimage", "2", "--nbextrastep", "3",
                "--backend", "cpu", "--threads", "1", "--quiet"]
run("sweep", "--feed", "0.02,0.03", "--kill", "0.05,0.06", *sweep_common, "--output", "s1.h5")
run("sweep", "--feedrate", "0.02,0.03", "--killrate", "0.05,0.06", *sweep_common, "-o", "s2.h5")
difference = same_file("s1.h5", "s2.h5")
check(difference is None, f"sweep: --feedrate/--killrate give another file: {difference}")

bench = ["bench", "--preset", "quick", "--rows", "16", "--cols", "24", "--backend", "cpu",
         "--threads", "1", "--repeat", "1", "--json"]
for images, steps in [("--images", "--steps-per-image"), ("--nbimage", "--nbextrastep")]:
    report = json.loads(run(*bench, images, "2", steps, "5").stdout)
    measured = report["runs"][0]
    check(measured["images"] == 2 and measured["steps_per_image"] == 5 and measured["steps"] == 10,
          f"bench {images} {steps}: the workload measured is {measured}")

# --- Every rate and option: in the attributes, and in the images as the model says -------------

base = ["--rows", "19", "--cols", "27", "--images", "4", "--steps-per-image", "1", "--init",
        "noise", "--fields", "u,v", "--backend", "cpu", "--threads", "1", "--quiet"]
cases = [
    ("feed", "0.035"), ("kill", "0.062"), ("du", "0.16"), ("dv", "0.09"), ("dt", "0.6"),
    ("stencil", "pretty"), ("stencil", "five-point"), ("stencil", "0.1,0.3,0.1,0.2,0,0.2,0.1,0.3,0.1"),
    ("boundary", "periodic"), ("boundary", "fixed"),
]
for option, value in cases:
    name = f"{option}_{len(failures)}_{value.replace(',', '_')}.h5"
    run("run", *base, f"--{option}", value, "-o", name)
    given = dict(DEFAULTS)
    given[option] = value if option in ("stencil", "boundary") else float(value)
    with h5py.File(name, "r") as f:
        u, v = f["u"][...], f["v"][...]
        if option == "stencil":
            expected = STENCILS.get(value) or [float(w) for w in value.split(",")]
            expected[4] = 0.0
            check(np.array_equal(f.attrs["stencil"], expected),
                  f"--stencil {value}: attribute {f.attrs['stencil']}")
        elif option == "boundary":
            check(f.attrs["boundary"] == value, f"--boundary {value}: attribute {f.attrs['boundary']}")
        else:
            check(f.attrs[option] == float(value),
                  f"--{option} {value}: attribute {f.attrs[option]}")
    # Image 0 is the state after one step; three more steps of the model must give image 3.
    mu, mv = model_steps(u[0], v[0], 3, given)
    worst = max(np.abs(u[3] - mu).max(), np.abs(v[3] - mv).max())
    check(worst < 2e-6, f"--{option} {value}: the images differ from the model by {worst:.2e}")
    # ... and the option made a difference the check can see.
    du_, dv_ = model_steps(u[0], v[0], 3, DEFAULTS)
    effect = max(np.abs(u[3] - du_).max(), np.abs(v[3] - dv_).max())
    check(effect > 1e-4, f"--{option} {value}: no visible effect on the images ({effect:.2e})")

# --precision double: float64 images, the model to float64 rounding.
run("run", *base, "--precision", "double", "--kill", "0.058", "-o", "double.h5")
with h5py.File("double.h5", "r") as f:
    check(f.attrs["precision"] == "double", f"--precision double: attribute {f.attrs['precision']}")
    check(f["u"].dtype == np.float64 and f["v"].dtype == np.float64,
          f"--precision double: datasets {f['u'].dtype}, {f['v'].dtype}")
    given = dict(DEFAULTS, kill=0.058)
    mu, mv = model_steps(f["u"][0], f["v"][0], 3, given)
    worst = max(np.abs(f["u"][3] - mu).max(), np.abs(f["v"][3] - mv).max())
    check(worst < 1e-13, f"--precision double: the images differ from the model by {worst:.2e}")

# What a run says before it writes: a name that is not .h5 is warned about (and written as
# HDF5), and an output beyond 1 GB is announced with its size before the first step. That run is
# stopped by SIGINT as soon as it has said so.
r = run("run", "--rows", "16", "--cols", "16", "--images", "1", "--steps-per-image", "1",
        "-o", "named.txt")
check("named.txt does not end in .h5 or .hdf5" in r.stderr and h5py.is_hdf5("named.txt"),
      f"-o named.txt: warned and written as HDF5: {r.stderr}")
r = run("run", "--rows", "16", "--cols", "16", "--images", "1", "--steps-per-image", "1",
        "-o", "quiet.txt", "--quiet")
check(r.stderr == "", f"--quiet silences the name warning: {r.stderr!r}")
r = run("run", "--rows", "16", "--cols", "16", "--images", "1", "--steps-per-image", "1",
        "-o", "small.h5")
check("GB on disk" not in r.stderr and "warning" not in r.stderr, f"a small run: {r.stderr!r}")
import signal  # noqa: E402
big = subprocess.Popen([GS, "run", "--rows", "4096", "--cols", "4096", "--images", "16",
                        "--steps-per-image", "1000", "-o", "big.h5"], stderr=subprocess.PIPE,
                       text=True)
first = big.stderr.readline()
big.send_signal(signal.SIGINT)
rest = big.communicate(timeout=120)[1]
check(first.startswith("grayscott: writing 16 images of 4096x4096 (v) to big.h5: 1.") and
      first.endswith(" GB on disk\n"),
      f"a run beyond 1 GB says so first: {first!r}")
check(big.returncode == 130 and "interrupted" in rest, f"and stops on SIGINT: {rest!r}")

# Config files: sections per command over shared top-level keys, types checked, and
# --print-config's output read back by --config gives the same file, bit for bit.
with open("shared.toml", "w") as f:
    f.write('rows = 24\ncols = 20\nseeds = [1, 2]\ninit = "noise"\n'
            '[run]\nimages = 3\nsteps-per-image = 7\nseed = 5\n'
            '[sweep]\nfeed = [0.02, 0.03]\nimages = 2\nsteps-per-image = 4\n')
run("run", "--config", "shared.toml", "-o", "sectioned.h5", "--quiet")
with h5py.File("sectioned.h5", "r") as f:
    check((f.attrs["rows"], f.attrs["cols"], f.attrs["images"], f.attrs["steps_per_image"],
           f.attrs["seed"]) == (24, 20, 3, 7, 5),
          "run --config: the top level and the [run] section apply, [sweep] does not")
run("sweep", "--config", "shared.toml", "-o", "sectioned-sweep.h5", "--quiet")
with h5py.File("sectioned-sweep.h5", "r") as f:
    check(f.attrs["members"] == 4 and f.attrs["images"] == 2 and f.attrs["rows"] == 24,
          "sweep --config: 2 feeds x 2 seeds from the shared keys and its own section")
for text, wanted in (('rows = "128"\n', "expected a whole number"),
                     ('feed = "0.02"\n', "expected a number"),
                     ('[run]\nseeds = [1]\n', "key 'run.seeds': unknown key"),
                     ('[plot]\nrows = 3\n', "unknown section"),
                     ('colour = 1\n', "key 'colour': unknown key")):
    with open("wrong.toml", "w") as f:
        f.write(text)
    r = subprocess.run([GS, "run", "--config", "wrong.toml", "-o", "wrong.h5"], capture_output=True,
                       text=True)
    check(r.returncode == 2 and wanted in r.stderr and not os.path.exists("wrong.h5"),
          f"config {text.strip()!r}: refused with '{wanted}': {r.stderr.strip()}")
# Given twice, the later value is printed (as the run uses it); a leading zero is decimal.
given = ["--cols", "7", "--fields", "v", "--rows", "030", "--cols", "18", "--images", "4", "--steps-per-image", "9", "--boundary",
         "periodic", "--stencil", "five-point", "--init", "noise", "--seed", "11", "--fields", "u,v",
         "--feed", "0.03", "--dt", "0.5", "--precision", "double"]
printed = run("run", *given, "-o", "printed.h5", "--print-config")
check(not os.path.exists("printed.h5") and printed.stdout.startswith("[run]\n"),
      "--print-config prints a [run] section and runs nothing")
for line in ("rows = 30\n", "cols = 18\n", "seed = 11\n", 'fields = "u,v"\n'):
    check(line in printed.stdout, f"--print-config prints {line.strip()}: {printed.stdout}")
with open("printed.toml", "w") as f:
    f.write(printed.stdout)
run("run", *given, "-o", "direct.h5", "--quiet")
run("run", "--config", "printed.toml", "-o", "from-config.h5", "--quiet")
different = same_file("direct.h5", "from-config.h5")
check(different is None,
      f"the printed config reproduces the run bit for bit: {different}")

# A preset's choices survive the round trip: the defaults it overrides are comments, not keys
# (printed as keys, read back as given, they replaced the preset's stencil and boundary).
preset = ["--preset", "course-numpy", "--rows", "24", "--cols", "20", "--images", "2"]
printed = run("run", *preset, "--print-config")
with open("preset.toml", "w") as f:
    f.write(printed.stdout)
run("run", *preset, "-o", "preset-direct.h5", "--quiet")
run("run", "--config", "preset.toml", "-o", "preset-config.h5", "--quiet")
different = same_file("preset-direct.h5", "preset-config.h5")
check(different is None, f"a preset's printed config reproduces its run bit for bit: {different}")

shutil.rmtree(WORK, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all option checks passed")
