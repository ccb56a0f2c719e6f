#!/bin/sh
# Builds dmlref's tests and runs them all with CTest.
#   scripts/test.sh              g++, build/ (the README's test command; CI runs it as is); where
#                                CMake finds nvcc, also the CUDA kernels (tests/cuda/), which
#                                CTest reports as skipped on a machine without a GPU
#   scripts/test.sh --sanitize   clang++ with AddressSanitizer + UBSan, build-sanitize/
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh

mode=${1:-plain}
case "$mode" in
  plain)
    dmlref_need_packages cmake g++ make doctest-dev libbenchmark-dev
    dir=build
    cfg="-DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release"
    ;;
  --sanitize)
    dmlref_need_packages cmake clang make doctest-dev libbenchmark-dev libclang-rt-14-dev
    dir=build-sanitize
    # Benchmarks and tools are not sanitizer targets; the tests and examples are. The CUDA tests
    # are not either (nvcc takes neither clang as its host compiler here nor the sanitizer flags).
    cfg="-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DDMLREF_SANITIZE=ON -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_CUDA_TESTS=OFF"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    ;;
  *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
esac

# shellcheck disable=SC2086
cmake -S . -B "$dir" $cfg
cmake --build "$dir" -j "$(dmlref_jobs)"
ctest --test-dir "$dir" --output-on-failure -j "$(dmlref_jobs)"
