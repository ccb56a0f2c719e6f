#!/bin/sh
# Builds every program in examples/ and runs each one (the README's main-job command).
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages cmake g++ make
cmake -S . -B build-examples -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
  -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=OFF
cmake --build build-examples -j "$(dmlref_jobs)" --target run_examples
