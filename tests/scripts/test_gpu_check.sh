#!/usr/bin/env bash
# scripts/gpu-check without a GPU: it says so and still writes its summary; and on a faked GPU
# machine (a fake nvidia-smi and bundle) a step that hangs is cut at the deadline, reported as a
# timeout, and the steps after it are still reported; an expected skip is not a failure.
# Usage: test_gpu_check.sh PATH/TO/scripts/gpu-check
set -u
check=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# No GPU.
OUT=$work/none GRAYSCOTT_GPU_CHECK_NO_GPU=1 "$check" >/dev/null 2>&1
rc=$?
[[ $rc -eq 2 ]] && pass || fail "no GPU: exit $rc, wanted 2"
grep -q "^gpu-check: NO GPU" "$work/none/summary.txt" && pass || fail "no GPU: summary $(cat "$work/none/summary.txt")"

# A faked GPU machine.
mkdir -p "$work/bin" "$work/bundle"
cat >"$work/bin/nvidia-smi" <<'SH'
#!/bin/sh
echo "Fake GPU, 999.99, 1024 MiB"
SH
cat >"$work/bundle/run" <<'SH'
#!/bin/sh
case $1 in
  info) printf 'grayscott 0\ncpu: 2 OpenMP threads\nmpi: not in this build\ncuda: device 0: Fake GPU, 1.0 GiB\n' ;;
  bench) echo '{"seconds": 0.5, "cell_updates_per_s": 4e9, "fraction_of_copy": 0.8, "copy_bytes_per_s": 1e12}' ;;
esac
SH
cat >"$work/bundle/run-tests" <<'SH'
#!/bin/sh
# A GoogleTest report: two passed, one skipped as on a working GPU.
out=${1#--gtest_output=xml:}
cat >"$out" <<'XML'
<testsuites><testsuite name="CudaEngine">
<testcase name="RunToRunBitwiseIdentical" classname="CudaEngine" status="run" result="completed"/>
<testcase name="SeedRunMatchesFloat64Reference" classname="CudaEngine" status="run" result="completed"/>
<testcase name="UnusableCudaIsAOneLineError" classname="CudaErrors" status="run" result="skipped"><skipped/></testcase>
</testsuite></testsuites>
XML
SH
chmod +x "$work/bin/nvidia-smi" "$work/bundle/run" "$work/bundle/run-tests"
fake=(env PATH="$work/bin:$PATH" GRAYSCOTT_GPU_BUNDLE="$work/bundle" COMPUTE_SANITIZER=/nonexistent
      GRAYSCOTT_GPU_CHECK_PYTHONS=/nonexistent)

OUT=$work/ok "${fake[@]}" "$check" >/dev/null 2>&1
rc=$?
summary=$work/ok/summary.txt
[[ $rc -eq 0 ]] && pass || fail "faked GPU: exit $rc: $(cat "$summary")"
grep -q "^gpu-tests .*PASS.*2 passed, 0 failed, 1 skipped (CudaErrors.UnusableCudaIsAOneLineError)" "$summary" &&
  pass || fail "an expected skip: $(grep gpu-tests "$summary")"
grep -q "^bench-fused .*PASS.*4.00 Gcell-updates/s" "$summary" && pass || fail "bench: $(grep bench "$summary")"
grep -q "^mpi .*SKIP.*no MPI" "$summary" && pass || fail "mpi: $(grep mpi "$summary")"
grep -q "^gpu-check: PASS" "$summary" && pass || fail "last line: $(tail -n 1 "$summary")"

# A hanging step under a 20 s deadline.
begin=$(date +%s)
OUT=$work/hang GRAYSCOTT_GPU_CHECK_SECONDS=20 GRAYSCOTT_GPU_CHECK_FAKE_HANG=gpu-tests "${fake[@]}" \
  "$check" >/dev/null 2>&1
rc=$?
elapsed=$(($(date +%s) - begin))
summary=$work/hang/summary.txt
[[ $rc -eq 1 ]] && pass || fail "hang: exit $rc, wanted 1"
((elapsed <= 30)) && pass || fail "hang: took ${elapsed}s under a 20s deadline"
grep -q "^gpu-tests .*FAIL.*timed out" "$summary" && pass || fail "hang: $(grep gpu-tests "$summary")"
grep -q "^bench-fused .*SKIP.*no time left" "$summary" && pass || fail "after the hang: $(grep bench-fused "$summary")"
grep -q "^gpu-check: FAIL" "$summary" && pass || fail "hang: last line $(tail -n 1 "$summary")"
[[ -s $work/hang/logs/gpu-tests.log ]] && grep -q "timed out" "$work/hang/logs/gpu-tests.log" && pass ||
  fail "hang: the step's log is gone"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
