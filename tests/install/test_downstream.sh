#!/usr/bin/env bash
# A project of its own builds on an installed grayscott: `cmake --install` into a fresh prefix,
# then examples/cpp (find_package(grayscott), grayscott::grayscott) is configured against that
# prefix alone, built and run; the file it writes must hold its images, and the state the example
# read from its engine must be the file's last image. Every installed header must compile alone.
#   test_downstream.sh BUILD_DIR SOURCE_DIR WORK_DIR CMAKE CXX PYTHON
set -euo pipefail
build=$1 source=$2 work=$3 cmake=$4 cxx=$5 python=$6
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"
"$prefix/bin/grayscott" --version

configure() {  # SOURCE BINARY: a consumer that sees the installed prefix, not this build
  "$cmake" -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
    >"$2.configure.log" || { cat "$2.configure.log"; exit 1; }
  "$cmake" --build "$2" -j 2 >"$2.build.log" || { cat "$2.build.log"; exit 1; }
}

configure "$source/tests/install/headers" "$work/headers"
grep -o 'installed headers: .*' "$work/headers.configure.log"

configure "$source/examples/cpp" "$work/example"
grep -q "grayscott_DIR:PATH=$prefix/" "$work/example/CMakeCache.txt" ||
  { echo "the example did not find the installed package"; grep grayscott_DIR "$work/example/CMakeCache.txt"; exit 1; }
(cd "$work" && ./example/grayscott_example spots.h5) | tee "$work/example.out"
mean=$(sed -n 's/.*mean v after 200 steps = //p' "$work/example.out")
[[ -n $mean ]] || { echo "the example printed no mean"; exit 1; }

"$python" - "$work/spots.h5" "$mean" <<'PY'
import sys
import h5py
import numpy as np
path, mean = sys.argv[1], float(sys.argv[2])
with h5py.File(path, "r") as f:
    v = f["v"]
    assert v.shape == (4, 128, 128), v.shape
    assert list(f["step"][:]) == [50, 100, 150, 200], f["step"][:]
    assert f.attrs["status"] == "complete", f.attrs["status"]
    last = v[-1].astype(np.float64)
    assert np.isfinite(v[...]).all()
    assert last.max() > 0.1, "v did not grow from the seed"
    file_mean = last.sum() / last.size
    assert abs(file_mean - mean) <= 1e-9 * abs(mean), (file_mean, mean)
print(f"{path}: 4 images, the last one's mean v {file_mean:.12g} as the engine read it")
PY
