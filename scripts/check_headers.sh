#!/bin/sh
# Compiler hygiene of what users include: every public header alone and the single header, with
# the runtime entry points instantiated (DMLREF_INSTANTIATE_RUNTIME, so template bodies are really
# compiled), warning-free under -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
# with g++ and clang++; the same for a unit that calls every public template once; and a C++17
# build of dmlref.hpp stops at its one error saying that dmlref needs C++20. Syntax checks only
# (-fsyntax-only instantiates templates but generates no code).
#   scripts/check_headers.sh        both compilers (installs g++ and clang with apt-get if missing)
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages g++ clang
flags="-std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Werror"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One unit per header and compiler ("g++ include dmlref/npy.hpp"), $(nproc) at a time; a failing
# unit prints its compiler's output.
: > "$work/units"
for compiler in g++ clang++; do
  for header in $(cd include && find dmlref -name '*.hpp' | sort); do
    echo "$compiler include $header" >> "$work/units"
  done
  echo "$compiler single_include dmlref/dmlref.hpp" >> "$work/units"
done
# shellcheck disable=SC2016
xargs -P "$(dmlref_jobs)" -L 1 sh -c '
  log="$0/$(echo "$1_$2_$3" | tr "/+" "__").log"
  printf "#define DMLREF_INSTANTIATE_RUNTIME\n#include <%s>\n" "$3" |
    $1 '"$flags"' -I "$2" -x c++ - > "$log" 2>&1 || { echo "FAILED: $1 -I $2 <$3>"; cat "$log"; exit 1; }
' "$work" < "$work/units" || exit 1
echo "check_headers: $(wc -l < "$work/units") units warning-free (g++, clang++: $flags)"

# The public templates called once each (scripts/check_headers_calls.cpp), so that what only a
# call compiles is checked under the same warnings, with both header trees.
for compiler in g++ clang++; do
  for dir in include single_include; do
    $compiler $flags -DDMLREF_INSTANTIATE_RUNTIME -I "$dir" scripts/check_headers_calls.cpp \
        > "$work/calls.log" 2>&1 || {
      echo "FAILED: $compiler -I $dir scripts/check_headers_calls.cpp"
      cat "$work/calls.log"
      exit 1
    }
  done
done
echo "check_headers: every public template called once, warning-free (g++, clang++)"

# C++17: one error, the one that says what to do.
for compiler in g++ clang++; do
  for dir in include single_include; do
    if printf '#include <dmlref/dmlref.hpp>\n' |
        $compiler -std=c++17 -fsyntax-only -I "$dir" -x c++ - > "$work/cxx17.log" 2>&1; then
      echo "FAILED: $compiler -std=c++17 -I $dir accepted dmlref.hpp" >&2
      exit 1
    fi
    errors=$(grep -c 'error:' "$work/cxx17.log" || true)
    if [ "$errors" -ne 1 ] || ! grep -q 'dmlref needs C++20' "$work/cxx17.log"; then
      echo "FAILED: $compiler -std=c++17 -I $dir: expected one error saying dmlref needs C++20:" >&2
      cat "$work/cxx17.log" >&2
      exit 1
    fi
  done
done
echo "check_headers: a C++17 build stops at 'dmlref needs C++20' (g++, clang++)"
