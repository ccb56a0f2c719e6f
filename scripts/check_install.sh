#!/bin/sh
# The README's install lines, run as they stand: the shell block after README.md's
# "<!-- install-lines" marker, in a fresh clone of this checkout's HEAD, with HOME a temporary
# directory (the lines install to ~/.local). Then checks what they left: dmlref-check --version,
# nothing built but what installs (no tests, benchmarks or examples), and the installed package
# used by a CMake project (find_package) and a compiler call (pkg-config).
#   scripts/check_install.sh        (CI runs it; commit first: the clone is of HEAD)
set -eu
cd "$(dirname "$0")/.."
. scripts/deps.sh
dmlref_need_packages git python3 pkg-config cmake g++ make
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$root/README.md" > "$work/install-lines.sh" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
at = text.index("<!-- install-lines")
block = re.search(r"```sh\n(.*?)```", text[at:], re.S)
if block is None:
    sys.exit("check_install: no ```sh block after README.md's install-lines marker")
print(block.group(1), end="")
PY
echo "== the README's install lines, in a fresh clone (HOME=$work/home):"
cat "$work/install-lines.sh"
# This checkout's commit, whether HEAD is a branch or detached (as CI may check it out).
git clone -q --no-checkout "$root" "$work/dmlref"
git -C "$work/dmlref" checkout -q "$(git rev-parse HEAD)"
mkdir "$work/home"
(cd "$work/dmlref" && HOME="$work/home" sh -eu "$work/install-lines.sh")

prefix="$work/home/.local"
part() { sed -n "s/^#define DMLREF_VERSION_$1 \([0-9]*\)$/\1/p" include/dmlref/version.hpp; }
version="$(part MAJOR).$(part MINOR).$(part PATCH)"
[ "$("$prefix/bin/dmlref-check" --version)" = "dmlref-check $version" ] ||
  { echo "check_install: bin/dmlref-check --version is not dmlref-check $version" >&2; exit 1; }
for d in tests bench examples; do
  if [ -d "$work/dmlref/build-install/$d" ]; then
    echo "check_install: the install build configured $d/; it must build only what installs" >&2
    exit 1
  fi
done

# The installed package, used as the README's "Use it in your project" says.
mkdir "$work/consumer"
cat > "$work/consumer/main.cpp" <<'CPP'
#include <dmlref/dmlref.hpp>
int main() { return dmlref::kVersion > 0 ? 0 : 1; }
CPP
cat > "$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES CXX)
find_package(dmlref CONFIG REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE dmlref::dmlref)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/consumer"
# shellcheck disable=SC2046
g++ -std=c++20 $(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags dmlref) \
  "$work/consumer/main.cpp" -o "$work/consumer/by-pkg-config"
"$work/consumer/by-pkg-config"
echo "check_install: the README's install lines installed dmlref $version (headers, CMake package, dmlref.pc, dmlref-check), building nothing else"
