#!/bin/sh
# Builds every program in examples/ and runs each one, then the GPU-validation flow through the
# command-line tool (examples/check_with_tool.sh). The README's main-job command.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages cmake g++ make
cmake -S . -B build-examples -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
  -DDMLREF_BUILD_TESTS=OFF -DDMLREF_BUILD_BENCHMARKS=OFF -DDMLREF_BUILD_TOOLS=ON
cmake --build build-examples -j "$(dmlref_jobs)" --target run_examples
echo "=== examples/check_with_tool.sh"
DMLREF_TOOL_FLOW_BUILD=build-examples examples/check_with_tool.sh
