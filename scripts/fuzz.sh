#!/bin/sh
# Builds the libFuzzer harnesses (tests/fuzz/, clang++ with -fsanitize=fuzzer,address,undefined):
# one executable per operator, whose harnesses compile once as one translation unit (35 s of CPU
# for the whole build instead of 61 s), and fuzz_npy for the .npy reader. Runs each for a bounded
# time, one after the other: first the seed check (every file in tests/fuzz/corpus/<op>/ decodes
# into an accepted call), then the fuzzing itself from a copy of the seeds. Any defect (a crash, a
# sanitizer report, an exception other than dmlref::Error, a result that differs from the reference
# or from the harness's model, a byte written by a rejected call) fails the run and leaves the
# reproducer in build-fuzz/tests/fuzz/<op>-crash-*.
#   scripts/fuzz.sh [seconds-per-operator]     default 30
# Environment: DMLREF_FUZZ_JOBS (build parallelism, default the number of cores),
# DMLREF_FUZZ_BUILD_DIR (default build-fuzz).
# Reproduce: build-fuzz/tests/fuzz/fuzz_<op> <crash-file> (prints the defect and the decoded call).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages cmake clang make libclang-rt-14-dev
seconds=${1:-30}
build=${DMLREF_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${DMLREF_FUZZ_JOBS:-$(dmlref_jobs)}
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE= \
  -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_EXAMPLES=OFF \
  -DDMLREF_BUILD_TOOLS=OFF -DDMLREF_BUILD_FUZZERS=ON -DDMLREF_FUZZ_SECONDS="$seconds"
cmake --build "$build" -j "$jobs"
# One fuzzer at a time: each is single-threaded and bounded by its own clock. The full output
# (libFuzzer's progress included) goes to $build/fuzz.log.
log="$build/fuzz.log"
status=0
(cd "$build" && ctest -V -L fuzz) > "$log" 2>&1 || status=$?
grep -E "^ *[0-9]+/[0-9]+ Test +#[0-9]+: " "$log" || true
echo "== per operator: libFuzzer's final stats, then the harness's own counts"
awk '
  /^ *Start +[0-9]+: / { n = $2; sub(":", "", n); name[n] = $3; next }
  /^[0-9]+: (stat::number_of_executed_units|stat::average_exec_per_sec|dmlref fuzz [A-Z_0-9]+: [0-9]+ calls)/ {
    n = $1; sub(":", "", n)
    if (name[n] ~ /_seeds$/) next
    line = $0; sub(/^[0-9]+: /, "", line)
    print name[n] ": " line
  }' "$log"
if [ "$status" -ne 0 ]; then
  echo "== defects (see $log)"
  grep -E -A12 "dmlref fuzz defect|ERROR: AddressSanitizer|runtime error|ERROR: libFuzzer" "$log" | head -80 || true
fi
exit "$status"
