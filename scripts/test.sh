#!/bin/sh
# Builds dmlref's tests and runs them all with CTest.
#   scripts/test.sh              g++ -O2, build/ (the README's test command; CI runs it as is;
#                                scripts/examples.sh shares build/; the test programs other than
#                                test_fastpath compile at -O0, tests/CMakeLists.txt says why); where
#                                CMake finds nvcc, also the CUDA kernels (tests/cuda/), which
#                                CTest reports as skipped on a machine without a GPU; then the
#                                Python module's pytest suite (build-python/venv)
#   scripts/test.sh --sanitize   clang++ with AddressSanitizer + UBSan, build-sanitize/
#   scripts/test.sh --thread     clang++ with ThreadSanitizer, build-thread/: test_threads
#                                (every operator split on 1, 2, 3 and 8 threads, and several
#                                calling threads at once), then test_fastpath and test_ops with
#                                every call split on 3 threads; each bounded in time
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh

mode=${1:-plain}
case "$mode" in
  plain)
    dmlref_need_packages cmake g++ make doctest-dev libbenchmark-dev pkg-config libcli11-dev libssl-dev
    dir=build
    ;;
  --sanitize)
    dmlref_need_packages cmake clang make doctest-dev libbenchmark-dev libclang-rt-14-dev pkg-config libcli11-dev libssl-dev
    dir=build-sanitize
    # Benchmarks are not sanitizer targets; the tests and dmlref-check (which the tool tests run)
    # are. The examples are not built here: CTest does not run them (scripts/examples.sh runs the
    # plain build's), so building them sanitized cost 24 s of CPU for nothing. The CUDA tests are
    # not either (nvcc takes neither clang as its host compiler here nor the sanitizer flags).
    # One CTest test per test program, not per case: each sanitized process costs about 70 ms of
    # CPU to start and to check for leaks (DMLREF_TEST_PER_CASE in tests/CMakeLists.txt).
    # Line tables only (not -g's full debug information): sanitizer reports still name file and
    # line, and the build takes 7% less CPU (95.6 s user against 102.8 s, same machine).
    cfg="-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DDMLREF_SANITIZE=ON -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_EXAMPLES=OFF -DDMLREF_BUILD_CUDA_TESTS=OFF -DDMLREF_TEST_PER_CASE=OFF"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    ;;
  --thread)
    dmlref_need_packages cmake clang make doctest-dev libclang-rt-14-dev
    dir=build-thread
    cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS=-fsanitize=thread \
      -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DDMLREF_BUILD_TESTS=ON \
      -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_EXAMPLES=OFF -DDMLREF_BUILD_TOOLS=OFF \
      -DDMLREF_BUILD_CUDA_TESTS=OFF -DDMLREF_INSTALL=OFF
    cmake --build "$dir" -j "$(dmlref_jobs)" --target test_threads test_fastpath test_ops
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
    timeout 600 "$dir/tests/test_threads"
    # Every fast path's proof against the golden loops, and every operator test (canaries, hostile
    # input, spec rules), each call cut into uneven parts on the engine's threads
    # (tests/test_main.cpp): about 20 s and 2 s under TSan.
    DMLREF_TEST_SPLIT=1 DMLREF_NUM_THREADS=3 timeout 600 "$dir/tests/test_fastpath"
    DMLREF_TEST_SPLIT=1 DMLREF_NUM_THREADS=3 timeout 600 "$dir/tests/test_ops"
    exit 0
    ;;
  *) echo "usage: scripts/test.sh [--sanitize | --thread]" >&2; exit 2 ;;
esac

# Tests asked for explicitly: a missing doctest stops the configure instead of skipping them.
if [ "$mode" = plain ]; then
  dmlref_configure_build -DDMLREF_BUILD_TESTS=ON
else
  # shellcheck disable=SC2086
  cmake -S . -B "$dir" $cfg -DDMLREF_BUILD_TESTS=ON
fi
cmake --build "$dir" -j "$(dmlref_jobs)"
ctest --test-dir "$dir" --output-on-failure -j "$(dmlref_jobs)"

# The Python module: pip-installed from this checkout into a virtual environment (reused between
# runs, as is the CMake build in build-python/build), then its pytest suite.
if [ "$mode" = plain ]; then
  python3 -c 'import ensurepip, os, sysconfig, sys
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_path("include"), "Python.h")))' 2>/dev/null ||
    dmlref_need_packages python3 python3-venv python3-dev
  venv=build-python/venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q scikit-build-core nanobind numpy pytest
  "$venv/bin/python" -m pip install -q --no-build-isolation -C build-dir=build-python/build \
    -C cmake.define.DMLREF_PYTHON_WERROR=ON .
  status=0
  # The suite's tests (python/tests/test_suite.py) run dmlref-check generate and verify.
  DMLREF_CHECK="$PWD/$dir/tools/dmlref-check" "$venv/bin/python" -m pytest -q python/tests ||
    status=$?
  # Any non-zero exit fails, 5 ("no tests collected") included.
  [ "$status" -eq 0 ] || { echo "dmlref: Python tests failed (pytest exit $status)" >&2; exit 1; }
fi
