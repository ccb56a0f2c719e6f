#!/bin/sh
# The GPU-validation flow of examples/validate_gpu_result.cpp through files and the command-line
# tool, as a harness would run it: the example writes the inputs and a (corrupted) device output
# as .npy files, then dmlref-check writes the golden output, catches the corrupted element
# (exit 1), accepts a correct result (exit 0) and names a skipped dispatch. Exits non-zero if any
# step does not behave so.
#   examples/check_with_tool.sh            builds into build-tool-flow/, or into the configured
#                                          build directory DMLREF_TOOL_FLOW_BUILD names
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages cmake g++ make
# A build directory given by DMLREF_TOOL_FLOW_BUILD is used as configured (scripts/examples.sh
# passes its own), so its other settings are left alone; otherwise build-tool-flow/ is configured.
build=${DMLREF_TOOL_FLOW_BUILD:-}
if [ -z "$build" ]; then
  build=build-tool-flow
  cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
    -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_EXAMPLES=ON \
    -DDMLREF_BUILD_TOOLS=ON >/dev/null
fi
cmake --build "$build" -j "$(dmlref_jobs)" --target dmlref-check example_validate_gpu_result

check="$build/tools/dmlref-check"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# expect STATUS COMMAND...: runs the command, shows it and its output, fails unless it exits STATUS.
expect() {
  want=$1
  shift
  echo "\$ dmlref-check $(echo "$@" | sed "s|$work/||g")"
  set +e
  "$check" "$@"
  got=$?
  set -e
  echo "(exit $got)"
  if [ "$got" -ne "$want" ]; then
    echo "check_with_tool.sh: expected exit $want, got $got" >&2
    exit 1
  fi
}

echo "=== 1. the example writes the inputs and the device's output"
"$build/examples/example_validate_gpu_result" --write-npy "$work" >/dev/null
ls "$work"
inputs="--axis 1 --input $work/a.npy --input $work/b.npy"

echo "=== 2. the golden output"
# shellcheck disable=SC2086
expect 0 join $inputs --out "$work/golden.npy"

echo "=== 3. the device's output, one element corrupted: caught"
# shellcheck disable=SC2086
expect 1 join $inputs --actual "$work/device.npy"

echo "=== 4. a correct device output: accepted"
# shellcheck disable=SC2086
expect 0 join $inputs --actual "$work/golden.npy"

echo "=== 5. a dispatch that never ran: named"
# shellcheck disable=SC2086
expect 1 join $inputs --actual "$work/untouched.npy" --untouched "$work/untouched.npy" --max-report 2

echo "=== 6. invalid parameters: the validation message"
# shellcheck disable=SC2086
expect 2 join --axis 2 --input "$work/a.npy" --input "$work/b.npy" --out "$work/x.npy"

# An independent cross-check when numpy is at hand: numpy's concatenate gives the same bits.
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "=== 7. numpy agrees with the golden output, bit for bit"
  /usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
want = np.concatenate([np.load(f"{d}/a.npy"), np.load(f"{d}/b.npy")], axis=1)
got = np.load(f"{d}/golden.npy")
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), "numpy disagrees"
print(f"numpy.concatenate == golden.npy: {got.dtype} {got.shape}")
PY
fi
echo "check_with_tool.sh: every step behaved as expected"
