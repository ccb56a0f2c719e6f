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
