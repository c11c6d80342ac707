#!/usr/bin/env bash
# scripts/gpu-check without a GPU: it says so and still writes its summary; and on a faked GPU
# machine (a fake nvidia-smi and bundle) a step that hangs is cut at the deadline, reported as a
# timeout, and the steps after it are still reported; an expected skip is not a failure. Either
# way it leaves three files: summary.txt, results.json (the same steps, bench reports attached)
# and logs.tar.gz.
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

# The three files, and nothing else; results.json's steps are the summary's lines.
three_files() {  # three_files DIR
  local names
  names=$(cd "$1" && ls -A | tr '\n' ' ')
  [[ $names == "logs.tar.gz results.json summary.txt " ]] && pass || fail "$1 holds: $names"
  python3 - "$1" <<'PY' && pass || fail "$1/results.json does not match summary.txt"
import json, sys
doc = json.load(open(sys.argv[1] + "/results.json"))
lines = [l for l in open(sys.argv[1] + "/summary.txt") if not l.startswith("gpu-check:")]
steps = [s for s in doc["steps"] if s["step"] != "gpu-check"]
assert [l.split()[0] for l in lines] == [s["step"].split()[0] for s in steps], (lines, steps)
assert doc["result"] in ("PASS", "FAIL", "NO GPU"), doc.get("result")
PY
}
three_files "$work/none"

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
fake=(env PATH="$work/bin:$PATH" GRAYSCOTT_GPU_BUNDLE="$work/bundle" COMPUTE_SANITIZER=/nonexistent NCU=/nonexistent
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
grep -q "^bench-fuse-8 .*PASS" "$summary" && pass || fail "the fuse sweep: $(grep bench-fuse "$summary")"
three_files "$work/ok"
# A bench step's report travels in results.json.
python3 - "$work/ok/results.json" <<'PY' && pass || fail "bench figures missing from results.json"
import json, sys
steps = {s["step"]: s for s in json.load(open(sys.argv[1]))["steps"]}
assert steps["bench-fused"]["figures"]["cell_updates_per_s"] == 4e9, steps["bench-fused"]
assert json.load(open(sys.argv[1]))["result"] == "PASS"
PY

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
mkdir -p "$work/hang-logs"
tar -xzf "$work/hang/logs.tar.gz" -C "$work/hang-logs" 2>/dev/null
[[ -s $work/hang-logs/logs/gpu-tests.log ]] && grep -q "timed out" "$work/hang-logs/logs/gpu-tests.log" &&
  pass || fail "hang: the step's log is not in logs.tar.gz"
three_files "$work/hang"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
