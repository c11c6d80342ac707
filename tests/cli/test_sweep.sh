#!/usr/bin/env bash
# End to end: the sweep example of docs/sweeps.md, its atlas, and the command's bad input.
# Usage: test_sweep.sh PATH/TO/grayscott
set -euo pipefail
grayscott="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# The documented example.
"$grayscott" sweep --feed 0.010:0.060:4 --kill 0.040:0.070:4 --rows 64 --cols 64 --images 5 \
  --steps-per-image 50 -o sweep.h5 --quiet
"$grayscott" render sweep.h5 --out atlas 2> render.log
grep -q "rendered 1 picture into atlas" render.log || fail "render: $(cat render.log)"
[ -s atlas/atlas.png ] || fail "no atlas/atlas.png"

/usr/bin/python3 - <<'PY'
import h5py, numpy as np, struct
with h5py.File("sweep.h5", "r") as f:
    assert f["v"].shape == (16, 5, 64, 64), f["v"].shape
    assert f["v"].chunks == (1, 1, 64, 64), f["v"].chunks
    assert "u" not in f
    feed, kill = f["feed"][:], f["kill"][:]
    assert np.allclose(np.unique(feed), [0.01, 0.01 + 0.05 / 3, 0.01 + 0.1 / 3, 0.06])
    assert np.allclose(np.unique(kill), [0.04, 0.05, 0.06, 0.07])
    assert list(f["step"][:]) == [50, 100, 150, 200, 250]
    assert (f["seed"][:] == 0).all()
    assert f.attrs["status"] == "complete" and f.attrs["kind"] == "sweep"
    assert np.isfinite(f["v"][:]).all()
# The XDMF companion: per image, at the time of its step, a spatial collection of one grid per
# member (member m at z = m) whose v is read from the bytes of that member's image in the file.
import xml.etree.ElementTree as ET
root = ET.parse("sweep.xmf").getroot()
series = root.find("Domain/Grid")
assert series.get("CollectionType") == "Temporal"
steps = series.findall("Grid")
assert len(steps) == 5, len(steps)
raw = open("sweep.h5", "rb").read()
with h5py.File("sweep.h5", "r") as f:
    v = f["v"][...]
    for i, step in enumerate(steps):
        assert step.get("CollectionType") == "Spatial"
        assert float(step.find("Time").get("Value")) == f["step"][i] * f.attrs["dt"]
        members = step.findall("Grid")
        assert len(members) == 16, len(members)
        for m, grid in enumerate(members):
            assert grid.find("Topology").get("Dimensions") == "1 64 64"
            origin = grid.find("Geometry").findall("DataItem")[0].text.split()
            assert origin == [str(m), "63", "0"], origin
            item = grid.find("Attribute[@Name='v']/DataItem")
            assert item.text == "sweep.h5" and item.get("Format") == "Binary"
            assert item.get("Precision") == "4" and item.get("Endian") == "Little"
            seek = int(item.get("Seek"))
            picked = np.frombuffer(raw[seek:seek + 64 * 64 * 4], dtype="<f4").reshape(64, 64)
            assert np.array_equal(picked, v[m, i]), (m, i)
with open("atlas/atlas.png", "rb") as png:
    head = png.read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n"
width, height = struct.unpack(">II", head[16:24])
assert width > 4 * 64 and height > 4 * 64, (width, height)
PY

# A noise ensemble: a member's images equal `grayscott run` with the same parameters and seed.
"$grayscott" sweep --feed 0.03,0.04 --kill 0.06 --init noise --seeds 2,3 --rows 32 --cols 48 \
  --images 2 --steps-per-image 30 --fields u,v -o ensemble.h5 --quiet --max-batch-memory 200K
"$grayscott" run --feed 0.04 --kill 0.06 --init noise --seed 3 --rows 32 --cols 48 --images 2 \
  --steps-per-image 30 --fields u,v -o single.h5 --quiet
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
with h5py.File("ensemble.h5", "r") as s, h5py.File("single.h5", "r") as r:
    members = [m for m in range(4) if s["feed"][m] == 0.04 and s["seed"][m] == 3]
    assert members == [3], members
    for field in ("u", "v"):
        assert np.array_equal(s[field][3], r[field][:]), field
    assert r.attrs["init"] == "noise" and r.attrs["seed"] == 3
PY
"$grayscott" render ensemble.h5 --out ens 2>/dev/null
[ -s ens/atlas_seed2.png ] && [ -s ens/atlas_seed3.png ] || fail "one atlas per seed"

# --scale sets a tile's pixels per cell: 4 x 4 members of 64 x 64 are enlarged twice by default
# (their grid about 512 pixels), once at --scale 1.
"$grayscott" render sweep.h5 --out atlas_scale1 --scale 1 2>/dev/null
"$grayscott" render sweep.h5 --out atlas_scale2 --scale 2 2>/dev/null
cmp -s atlas/atlas.png atlas_scale2/atlas.png || fail "the default atlas is not the one of --scale 2"
/usr/bin/python3 - <<'PY' || fail "render --scale 1 of a sweep did not draw smaller tiles"
import struct
def size(path):
    with open(path, "rb") as png:
        return struct.unpack(">II", png.read(24)[16:24])
(w1, h1), (w2, h2) = size("atlas_scale1/atlas.png"), size("atlas_scale2/atlas.png")
assert w2 - w1 >= 4 * 64 and h2 - h1 >= 4 * 64, ((w1, h1), (w2, h2))
PY

# --image picks the atlas's image, from the end when negative: -1 is the default, the last.
"$grayscott" render sweep.h5 --out atlas_last --image -1 2>/dev/null
cmp -s atlas/atlas.png atlas_last/atlas.png || fail "render --image -1 is not the last image's atlas"
"$grayscott" render sweep.h5 --out atlas_first --image -5 2>/dev/null
"$grayscott" render sweep.h5 --out atlas_zero --image 0 2>/dev/null
cmp -s atlas_zero/atlas.png atlas_first/atlas.png || fail "render --image -5 is not image 0's atlas"
if "$grayscott" render sweep.h5 --out atlas_none --image -6 2> err.txt; then
  fail "render --image -6 of 5 images was accepted"
fi
grep -q "image -6 is out of range" err.txt || fail "render --image -6: $(cat err.txt)"
[ ! -e atlas_none ] || fail "a refused atlas made its folder"

# Bad input: one line on stderr, exit status 2, no file.
expect_error() {
  local pattern="$1"; shift
  set +e
  "$grayscott" "$@" -o bad.h5 --quiet 2> err.txt
  local status=$?
  set -e
  [ "$status" -eq 2 ] || fail "$* exited with $status"
  [ "$(wc -l < err.txt)" -eq 1 ] || fail "$*: not one line: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "$*: expected '$pattern', got: $(cat err.txt)"
  [ ! -e bad.h5 ] || fail "$* wrote a file"
}
# Seeds draw noise: given alone, they make the start noise, the same sweep as with --init noise.
"$grayscott" sweep --seeds 1,2 --rows 16 --cols 16 --images 2 --steps-per-image 5 -o seeded.h5 --quiet
"$grayscott" sweep --init noise --seeds 1,2 --rows 16 --cols 16 --images 2 --steps-per-image 5 \
  -o seeded-noise.h5 --quiet
/usr/bin/python3 - <<'PY' || fail "--seeds alone is not --init noise --seeds"
import h5py, numpy as np
with h5py.File("seeded.h5", "r") as a, h5py.File("seeded-noise.h5", "r") as b:
    assert a.attrs["init"] == "noise" and list(a["seed"][:]) == [1, 2]
    assert np.array_equal(a["v"][...], b["v"][...])
PY
expect_error "count must be at least 1" sweep --feed 0.01:0.06:0
expect_error "reversed" sweep --kill 0.07:0.04:4
expect_error "not a number" sweep --feed 0.01,abc
expect_error "feed: the count '1e9' in '0.01:0.06:1e9' is not a whole number in decimal digits" \
  sweep --feed 0.01:0.06:1e9
expect_error "appears twice" sweep --feed 0.01,0.01
expect_error "seeds: seeds draw the noise of --init noise; the start here is rectangle" sweep --init rectangle --seeds 1,2
expect_error "seeds: seeds draw the noise of --init noise; the start here is box" sweep --preset course-numpy --seeds 1,2
expect_error "not both" sweep --init noise --seed 1 --seeds 1,2
expect_error "init: expected rectangle, noise, box, box-bordered, drop or cube" sweep --init stripes
expect_error "needs --init noise" run --seed 4
expect_error "one member needs" sweep --rows 512 --cols 512 --max-batch-memory 1M
expect_error "max-batch-memory" sweep --max-batch-memory lots
# A limit beyond the machine's memory would let the batch be killed for memory mid-run: refused first.
rm -f bad.h5
expect_error "max-batch-memory: 97.7 TiB is more than the .* of host memory available" \
  sweep --rows 64 --cols 64 --max-batch-memory 100000G
[[ ! -e bad.h5 ]] || fail "a refused batch limit left its file"
expect_error "feed must be" sweep --feed=-0.01,0.02
# The largest sweep (a million members) is validated and refused at once, not member by member.
expect_error "output needs" sweep --feed 0.01:0.06:1000 --kill 0.04:0.07:1000
expect_error "kill must be" sweep --feed 0.01:0.06:1000 --kill=-0.07:0.04:1000
# Members that became non-finite: the sweep completes and warns, naming how many and where.
"$grayscott" sweep --feed 0.02,0.03 --kill 0.06 --rows 16 --cols 16 --images 2 --init-values=-1,2 \
  -o nonfinite.h5 --quiet 2>err.txt || fail "a sweep whose members became non-finite failed"
grep -qx "grayscott: warning: 2 members became non-finite (see /nonfinite_image in nonfinite.h5)" \
  err.txt || fail "no warning of the non-finite members: $(cat err.txt)"
echo "sweep CLI: all checks passed"
