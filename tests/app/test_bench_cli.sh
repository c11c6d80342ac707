#!/bin/bash
# `grayscott bench` end to end: the JSON report parses and its figures are positive and
# consistent; --batch and --io hdf5 work; every bad input gives a one-line error and exit 2.
# Usage: test_bench_cli.sh GRAYSCOTT BENCH_DIR
set -u
grayscott=$1
bench_dir=$2
# The Python that has NumPy and Numba (Debian's, which scripts/setup fills; another python3 on PATH
# may lack them): the NumPy and Numba peers are the only checks of grayscott by an independent
# implementation, so their absence fails, naming what to install.
python=
for candidate in /usr/bin/python3 "$(command -v python3)"; do
  if [ -x "$candidate" ] && "$candidate" -c 'import numpy, numba' 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  for candidate in /usr/bin/python3 "$(command -v python3)"; do
    [ -x "$candidate" ] || continue
    for module in numpy numba; do
      "$candidate" -c "import $module" 2>/dev/null || echo "FAIL: $candidate has no $module"
    done
  done
  echo "FAIL: no python3 with NumPy and Numba: install python3-numpy python3-numba (scripts/setup)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Reads the JSON on stdin and checks the fields every consumer relies on.
check_json() {
  "$python" -c '
import json, sys
r = json.load(sys.stdin)
expect = dict(a.split("=", 1) for a in sys.argv[1:])
for key in ("backend", "rows", "cols", "steps", "precision", "stencil", "seconds",
            "cell_updates_per_s", "bytes_per_s", "copy_bytes_per_s", "fraction_of_copy",
            "peak_flops_per_s", "peak_method", "flops_per_cell_update", "flops_per_s",
            "fraction_of_peak"):
    assert key in r, "missing " + key
for key in ("rows", "cols", "steps", "seconds", "cell_updates_per_s", "bytes_per_s",
            "copy_bytes_per_s", "copy_bytes_per_s_after", "fraction_of_copy", "peak_flops_per_s",
            "flops_per_s"):
    assert r[key] > 0, key + " not positive: " + repr(r[key])
# The arithmetic roofline: the kernel cannot compute faster than the peak measured beside it (a
# margin for a machine whose load changed between the two), and the count is that of the stencil.
flops = {"oono-puri": 29, "pretty": 29, "five-point": 19, "custom": 63, "seven-point": 23,
         "nineteen-point": 49}[r["stencil"]]
assert r["flops_per_cell_update"] == flops, r["flops_per_cell_update"]
assert abs(r["flops_per_s"] - flops * r["cell_updates_per_s"]) <= 1e-9 * r["flops_per_s"]
assert abs(r["fraction_of_peak"] - r["flops_per_s"] / r["peak_flops_per_s"]) <= 1e-9
# The peak is the better of a probe before and one after; a fraction above 1 (a busy machine
# disturbed both) is flagged, never passed off as a fraction.
assert r["peak_flops_per_s"] == max(r["peak_flops_per_s_before"], r["peak_flops_per_s_after"])
assert r["peak_disturbed"] == (r["fraction_of_peak"] > 1), (r["peak_disturbed"], r["fraction_of_peak"])
assert 0 < r["fraction_of_peak"], "fraction of the arithmetic peak: %r" % r["fraction_of_peak"]
# The machine and the rates, so that a saved result says where and what it measured.
assert r["cpu_model"] and r["logical_cpus"] >= 1 and r["load_average_before"] >= 0
assert 0 <= r["feed"] <= 1 and 0 <= r["kill"] <= 1
per_cell = 16 if r["precision"] == "single" else 32
assert abs(r["bytes_per_s"] - per_cell * r["cell_updates_per_s"]) <= 1e-9 * r["bytes_per_s"]
assert abs(r["fraction_of_copy"] - r["bytes_per_s"] / r["copy_bytes_per_s"]) <= 1e-9
cells = r.get("depth", 1) * r["rows"] * r["cols"] * r["steps"] * r.get("batch", 1)
assert abs(r["cell_updates_per_s"] * r["seconds"] - cells) <= 1e-6 * cells
assert all(v["passed"] for v in r["verification"])
for key, value in expect.items():
    assert str(r[key]) == value, "%s: %r, expected %s" % (key, r[key], value)
' "$@"
}

# A small explicit size, in JSON.
out=$("$grayscott" bench --rows 96 --cols 160 --images 3 --steps-per-image 8 --repeat 2 --json) ||
  fail "explicit size exited $?"
echo "$out" | check_json rows=96 cols=160 steps=24 precision=single stencil=oono-puri backend=cpu ||
  fail "explicit size: bad JSON: $out"

# Double precision, another stencil and boundary, a batch.
out=$("$grayscott" bench --rows 32 --cols 48 --images 2 --steps-per-image 5 --batch 7 --repeat 1 \
      --precision double --stencil pretty --boundary periodic --dt 0.5 --json) || fail "batch exited $?"
echo "$out" | check_json batch=7 precision=double stencil=pretty boundary=periodic steps=10 ||
  fail "batch: bad JSON: $out"

# The quick preset with its table.
out=$("$grayscott" bench --preset quick --images 2 --repeat 1) || fail "quick exited $?"
for text in "verified:" "copy bandwidth:" "GB/s before the timed runs," "GB/s after (" \
            "1080x1920, 2 images x 32 steps" "of copy" "arithmetic peak:" "of peak" \
            "machine: " "logical CPUs, load average"; do
  grep -qF "$text" <<<"$out" || fail "quick table lacks '$text': $out"
done

# The volume preset, made small: a volume's stencil by default, its cells counted, its own check.
out=$("$grayscott" bench --preset 3d --depth 6 --rows 10 --cols 40 --images 2 --steps-per-image 3 \
      --repeat 1 --json) || fail "3d exited $?"
echo "$out" | check_json depth=6 rows=10 cols=40 steps=6 stencil=seven-point ||
  fail "3d: bad JSON: $out"
out=$("$grayscott" bench --preset 3d --depth 4 --rows 8 --cols 20 --images 1 --repeat 1 \
      --stencil nineteen-point --boundary periodic --precision double) || fail "3d table exited $?"
for text in "4x8x20, 1 images x 25 steps" "of 4x8x20 at fuse" "49 flops per cell update"; do
  grep -qF "$text" <<<"$out" || fail "3d table lacks '$text': $out"
done

# The run command's HDF5 output path.
out=$("$grayscott" bench --rows 40 --cols 60 --images 4 --steps-per-image 3 --repeat 1 --io hdf5 \
      --output "$work/bench.h5" --json) || fail "io hdf5 exited $?"
echo "$out" | check_json io=hdf5 steps=12 || fail "io hdf5: bad JSON: $out"
[ -s "$work/bench.h5" ] || fail "io hdf5 wrote no file"
# A volume's images go to the file as the run command writes them: [time, z, y, x].
"$grayscott" bench --preset 3d --depth 4 --rows 8 --cols 20 --images 2 --repeat 1 --io hdf5 \
  --output "$work/volume.h5" --json >/dev/null || fail "io hdf5 of a volume exited $?"
/usr/bin/python3 -c "
import h5py, sys
with h5py.File(sys.argv[1], 'r') as f:
    assert f['v'].shape == (2, 4, 8, 20), f['v'].shape
" "$work/volume.h5" || fail "io hdf5 of a volume: /v is not [2, 4, 8, 20]"
# Where the time went: every phase, none negative, the stepping thread's adding up to at most the
# whole (the rest is outside the pipeline's phases: choosing the backend, the output's claim).
echo "$out" | "$python" -c '
import json, sys
r = json.load(sys.stdin)
p = r["phases_seconds"]
names = ["engine", "initial_state", "file_open", "stepping", "reading_images",
         "measuring_statistics", "waiting_for_writer", "last_write", "loop_other", "file_close", "writer_writing",
         "writer_saving"]
assert list(p) == names, list(p)
assert all(p[n] >= 0 for n in names if n != "loop_other") and p["loop_other"] > -1e-3, p
assert p["stepping"] > 0 and p["writer_writing"] > 0, p
assert p["measuring_statistics"] == 0 and "statistics_seconds_per_image" not in r, r
inside = sum(p[n] for n in names if not n.startswith("writer_"))
assert inside <= r["seconds"] * 1.01, (inside, r["seconds"])
' || fail "io hdf5: bad phases: $out"
table=$("$grayscott" bench --rows 40 --cols 60 --images 4 --steps-per-image 3 --repeat 1 --io hdf5 \
        --output "$work/bench.h5" --force) || fail "io hdf5 table exited $?"
echo "$table" | grep -q "where the time went" || fail "io hdf5: no breakdown in the table: $table"
echo "$table" | grep -q "beside it, the writer thread: writing" || fail "io hdf5: no writer line: $table"
# --stats: the statistics timed apart from the stepping, the file holding them.
out=$("$grayscott" bench --rows 60 --cols 80 --images 5 --steps-per-image 4 --repeat 1 --io hdf5 \
      --output "$work/stats.h5" --stats --json) || fail "--stats exited $?"
echo "$out" | "$python" -c '
import json, sys
r = json.load(sys.stdin)
p = r["phases_seconds"]
assert r["statistics"] is True and p["measuring_statistics"] > 0, r
assert abs(r["statistics_seconds_per_image"] * 5 - p["measuring_statistics"]) < 1e-9, r
assert abs(r["statistics_fraction_of_stepping"] * p["stepping"] - p["measuring_statistics"]) < 1e-9, r
' || fail "--stats: bad figures: $out"
"$python" -c "
import h5py, sys
with h5py.File(sys.argv[1]) as f:
    assert f['stats/v_histogram'].shape == (5, 50), f['stats/v_histogram'].shape
" "$work/stats.h5" || fail "--stats: the file has no statistics"
"$grayscott" bench --rows 60 --cols 80 --images 5 --steps-per-image 4 --repeat 1 --io hdf5 \
  --output "$work/stats.h5" --force --stats | grep -q "statistics of every image: .* ms an image, .* % of the stepping" ||
  fail "--stats: no statistics line in the table"

# The comparison preset, made small: both runs and their ratio.
out=$("$grayscott" bench --preset batch-vs-large --images 1 --steps-per-image 1 --repeat 1 --warmup 0 --json) ||
  fail "batch-vs-large exited $?"
"$python" -c '
import json, sys
r = json.load(sys.stdin)
a, b = r["runs"]
assert (a["batch"], a["rows"], b["batch"], b["rows"]) == (1024, 128, 1, 4096), r
assert abs(r["rate_ratio"] - a["cell_updates_per_s"] / b["cell_updates_per_s"]) < 1e-9 * r["rate_ratio"]
' <<<"$out" || fail "batch-vs-large: bad JSON: $out"

# Bad input: one line on stderr naming the problem, exit status 2, nothing on stdout.
expect_error() {
  local what=$1
  shift
  local stdout stderr status
  stdout=$("$grayscott" bench "$@" 2>"$work/err")
  status=$?
  stderr=$(cat "$work/err")
  [ "$status" -eq 2 ] || fail "bench $*: exit $status, expected 2"
  [ -z "$stdout" ] || fail "bench $*: printed '$stdout'"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "bench $*: not one line: $stderr"
  grep -qi -- "$what" <<<"$stderr" || fail "bench $*: '$stderr' does not mention '$what'"
}
expect_error "preset" --preset fastest
expect_error "repeat" --rows 8 --cols 8 --repeat 0
expect_error "--output" --rows 8 --cols 8 --io hdf5
expect_error "--stats measures the statistics in the run command's image loop; it needs --io hdf5" \
  --rows 8 --cols 8 --stats
expect_error "io" --rows 8 --cols 8 --io csv
expect_error "batch" --rows 8 --cols 8 --batch 0
expect_error "batch" --rows 8 --cols 8 --batch 2 --io hdf5 --output "$work/x.h5"
expect_error "rows" --rows 0
# A state larger than the memory is refused before anything is allocated (not std::bad_alloc, not
# the kernel's out-of-memory killer), as run and sweep refuse it.
expect_error "needs 14.6 TiB of host memory" --rows 1000000 --cols 1000000 --images 1
expect_error "members) needs" --preset quick --batch 1000000 --repeat 1
expect_error "images" --rows 8 --cols 8 --images -1
expect_error "backend" --rows 8 --cols 8 --backend tpu
expect_error "batch-vs-large" --preset batch-vs-large --rows 64
expect_error "stability" --rows 8 --cols 8 --dt 5.5
expect_error "stencil" --preset 3d --depth 4 --rows 8 --cols 8 --stencil oono-puri

# --print-config shows what the preset measures where an option is not given (the plain run
# defaults were shown: 1080 x 1920 for the 3d preset's 256^3), a list where its workloads differ.
"$grayscott" bench --preset 3d --print-config > "$work/3d.toml" || fail "bench --print-config"
for line in '# rows = 256' '# depth = 256' '# stencil = "seven-point"' '# images = 4' \
            '# steps-per-image = 25' '# repeat = 3' 'preset = "3d"'; do
  grep -qxF "$line" "$work/3d.toml" || fail "bench --preset 3d --print-config lacks '$line': $(cat "$work/3d.toml")"
done
"$grayscott" bench --preset batch-vs-large --print-config | grep -qxF '# rows = [128, 4096]' ||
  fail "bench --preset batch-vs-large --print-config: the two grids"
"$grayscott" bench --preset 3d --depth 16 --print-config | grep -qxF 'depth = 16' ||
  fail "bench --print-config: a given depth"

# The peers: every script compiles; the NumPy and Numba peers agree with grayscott.
"$python" - "$bench_dir" <<'PY' || fail "a peer script does not compile"
import pathlib, sys
for path in [*pathlib.Path(sys.argv[1]).glob("peers/*.py"), pathlib.Path(sys.argv[1]) / "compare",
             pathlib.Path(sys.argv[1]) / "plot.py"]:
    compile(path.read_text(), str(path), "exec")
PY
for peer in numpy numba; do
  "$python" "$bench_dir/peers/${peer}_peer.py" --check-only --grayscott "$grayscott"
  status=$?
  # 77 (skipped) is a failure here: the module is there, so the check must run.
  [ "$status" -eq 0 ] || fail "$peer peer: check failed or skipped (exit $status) with $python"
done
# The GPU peers skip cleanly (77) or pass where their module and a device are there.
for peer in cupy jax torch; do
  "$python" "$bench_dir/peers/${peer}_peer.py" --check-only --grayscott "$grayscott"
  status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 77 ] || fail "$peer peer: exit $status"
done

[ "$failures" -eq 0 ] && echo "bench CLI: all checks passed"
exit $((failures > 0))
