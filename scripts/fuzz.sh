#!/bin/sh
# Builds the libFuzzer harnesses with clang++ and runs each for a bounded time (default 30 s).
#   scripts/fuzz.sh [seconds]
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages cmake clang make libclang-rt-14-dev
seconds=${1:-30}
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
  -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_EXAMPLES=OFF \
  -DDMLREF_BUILD_TOOLS=OFF -DDMLREF_BUILD_FUZZERS=ON -DDMLREF_FUZZ_SECONDS="$seconds"
cmake --build build-fuzz -j "$(dmlref_jobs)"
# One fuzzer at a time: each is single-threaded and the run is bounded by its own clock.
ctest --test-dir build-fuzz --output-on-failure -L fuzz
