#!/usr/bin/env bash
# The registry's promise (docs/backends.md): outside src/engine/, no source names a concrete
# backend: no backend namespace (cpu::, cuda::), header (engine/cpu/, engine/cuda/) or type
# (CpuEngine, CudaSubdomain, ...). The front ends, the pipeline, the MPI driver and the Python
# module ask engine/registry.hpp. Tests and micro-benchmarks of one backend may name it.
set -euo pipefail
root=${1:?usage: test_backend_isolation.sh SOURCE_DIR}
cd "$root"
pattern='(^|[^:[:alnum:]_])(cpu|cuda)::|engine/(cpu|cuda)/|\b(Cpu|Cuda)(Engine|Subdomain|Backend)\b'
found=$(grep -rnE "$pattern" src python/src --include='*.cpp' --include='*.hpp' \
          --include='*.cu' --include='*.cuh' --include='*.in' | grep -v '^src/engine/' || true)
if [[ -n "$found" ]]; then
  echo "FAIL: a backend is named outside src/engine/:"
  echo "$found"
  exit 1
fi
# The generated list is the only place where the backends meet; each registers itself.
registered=$(grep -rhoE 'grayscott_register_backend\([a-z0-9_]+\)' src/engine/*/CMakeLists.txt |
               sort | tr '\n' ' ')
if [[ "$registered" != "grayscott_register_backend(cpu) grayscott_register_backend(cuda) " ]]; then
  echo "FAIL: expected the cpu and cuda folders to register themselves, found: $registered"
  exit 1
fi
echo "PASS: no backend is named outside src/engine/, and each registers itself in its folder"
