# Sourced by the other scripts: installs the Debian packages given as arguments when any is
# missing, with apt-get as root or through sudo, and says what it installs.
dmlref_need_packages() {
  missing=""
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing="$missing $pkg"
  done
  [ -z "$missing" ] && return 0
  echo "dmlref: installing Debian packages:$missing"
  if [ "$(id -u)" = 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "dmlref: need root or sudo to install:$missing" >&2
    return 1
  fi
  $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
}

dmlref_jobs() {
  n=$(nproc 2>/dev/null || echo 2)
  echo "$n"
}

# Configures build/, the one build directory the README's two commands share (scripts/test.sh,
# scripts/examples.sh), so a machine that runs both (CI) compiles the examples and dmlref-check
# once. Release at -O2, not CMake's -O3: what harnesses usually build with and what the compile
# cost in bench/README.md is measured at; the tests time nothing, and -O3 cost them a third more
# compile time. Arguments are passed on to cmake; both scripts pass the same ones, so neither
# invalidates the other's build.
dmlref_configure_build() {
  cmake -S . -B build -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" "$@"
}
