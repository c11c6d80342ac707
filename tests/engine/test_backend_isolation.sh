#!/usr/bin/env bash
# The registry's promise (docs/backends.md): outside src/engine/, no source names a concrete
# backend: no backend namespace (cpu::, cuda::), header (engine/cpu/, engine/cuda/) or type
# (CpuEngine, CudaSubdomain, ...). The front ends, the pipeline, the MPI driver and the Python
# module ask engine/registry.hpp. Tests and micro-benchmarks of one backend may name it. The
# backends are the folders that register themselves, so a new one is checked without an edit here.
set -euo pipefail
root=${1:?usage: test_backend_isolation.sh SOURCE_DIR}
cd "$root"
# Each backend registers itself, once, in its own folder, under the folder's name.
names=()
for cmake_file in src/engine/*/CMakeLists.txt; do
  folder=$(basename "$(dirname "$cmake_file")")
  registered=$(grep -hoE 'grayscott_register_backend\([a-z0-9_]+\)' "$cmake_file" || true)
  [[ -z "$registered" ]] && continue
  if [[ "$registered" != "grayscott_register_backend($folder)" ]]; then
    echo "FAIL: src/engine/$folder registers '$registered', not itself once: grayscott_register_backend($folder)"
    exit 1
  fi
  names+=("$folder")
done
if [[ " ${names[*]} " != *" cpu "* || " ${names[*]} " != *" cuda "* ]]; then
  echo "FAIL: expected the cpu and cuda folders among those that register themselves: ${names[*]}"
  exit 1
fi
alternatives=$(IFS='|'; echo "${names[*]}")
types=$(for n in "${names[@]}"; do printf '%s|' "${n^}"; done)
pattern="(^|[^:[:alnum:]_])($alternatives)::|engine/($alternatives)/|\\b(${types%|})(Engine|Subdomain|Backend)\\b"
found=$(grep -rnE "$pattern" src python/src --include='*.cpp' --include='*.hpp' \
          --include='*.cu' --include='*.cuh' --include='*.in' | grep -v '^src/engine/' || true)
if [[ -n "$found" ]]; then
  echo "FAIL: a backend is named outside src/engine/:"
  echo "$found"
  exit 1
fi
echo "PASS: no backend (${names[*]}) is named outside src/engine/, and each registers itself in its folder"
