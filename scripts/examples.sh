#!/bin/sh
# Builds every program in examples/ and runs each one, then the GPU-validation flow through the
# command-line tool (examples/check_with_tool.sh). The README's main-job command.
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages cmake g++ make libcli11-dev libssl-dev
# build/ is shared with scripts/test.sh (dmlref_configure_build): where the tests were built
# first, the examples and the tool are already compiled. Tests and benchmarks keep their setting
# (AUTO on a fresh build: skipped when doctest or Google Benchmark is missing); only the examples
# and dmlref-check are built here.
dmlref_configure_build -DDMLREF_BUILD_EXAMPLES=ON -DDMLREF_BUILD_TOOLS=ON
cmake --build build -j "$(dmlref_jobs)" --target run_examples dmlref-check
echo "=== examples/check_with_tool.sh"
DMLREF_TOOL_FLOW_BUILD=build examples/check_with_tool.sh
