#!/bin/sh
# Regenerates the seed corpus tests/fuzz/corpus/<op>/ with the built harnesses: each one, run with
# DMLREF_FUZZ_MAKE_SEEDS, searches short inputs with a fixed pseudo-random sequence and keeps those
# that decode into accepted calls of different kinds (data type, rank, index type, ...), so the
# same harness always writes the same files. Run it after changing how a harness decodes bytes
# (the fuzz_<op>_seeds tests fail when a seed no longer decodes into a valid call).
#   tests/fuzz/make_corpus.sh [build-dir]      (default build-fuzz, as scripts/fuzz.sh builds it)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-fuzz}
found=0
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  op=$(basename "$bin")
  op=${op#fuzz_}
  rm -rf "$here/corpus/$op"
  mkdir -p "$here/corpus/$op"
  DMLREF_FUZZ_MAKE_SEEDS="$here/corpus/$op" DMLREF_FUZZ_SEED_COUNT=8 "$bin"
  found=$((found + 1))
done
[ "$found" -gt 0 ] || { echo "no harnesses in $build/tests/fuzz: run scripts/fuzz.sh first" >&2; exit 1; }
