#!/usr/bin/env bash
# Installs everything Gearshift's build and tests need on a Debian 12 (bookworm) machine.
# Idempotent: when everything is present it prints one line and exits.
#
# The system's apt configuration is never changed: packages from bookworm-backports are
# resolved through a private sources list and lists directory under the cache dir.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${GEARSHIFT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gearshift}"
VENV="$CACHE/venv"
VIRTME_NG_VERSION="1.42"
MATPLOTLIB_VERSION="3.9.2"   # benchmark plots

# Packages from bookworm itself.
APT_PACKAGES=(
  clang-19 llvm-19 libclang-19-dev libelf-dev zlib1g-dev pkg-config make
  udev kmod xz-utils busybox-static
  stress-ng rt-tests procps linux-perf valgrind
  rt-app                  # benchmark and VM tests: periodic tasks with deadlines
  gcc libc6-dev           # benchmark and VM tests: the build load compiles C in the guest
  dbus python3-dbusmock python3-venv xvfb
  libxml2-utils polkitd   # data/ file tests: xmllint, polkit's policy DTD
  desktop-file-utils      # gearshift-tray tests: the autostart file
  gjs nodejs              # GNOME Shell extension tests (gjs; eslint: install_eslint)
  gnome-shell             # the extension in a real, headless gnome-shell (gearshift-tray/tests/gnome_shell.rs)
  libgtk-4-dev libadwaita-1-dev gettext appstream   # the app (gearshift-app), po/, metainfo
  debhelper lintian makepkg rpm rpmlint man-db     # packaging (tools/test-packaging.sh)
  pacman-package-manager  # makepkg looks pacman up at start and fails without it
  appstream-util libarchive-tools   # the RPM's %check; bsdtar lists the Arch package
  libseccomp-dev          # cargo xtask bench --with-peers: scx_rustland links libseccomp
)
# Packages taken from bookworm-backports (qemu 10 boots the 7.x kernels reliably).
BPO_PACKAGES=(qemu-system-x86)

log() { printf 'bootstrap: %s\n' "$*" >&2; }

missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
  done
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_apt() {
  mapfile -t need < <(missing_packages "${APT_PACKAGES[@]}")
  [ "${#need[@]}" -eq 0 ] && return 0
  log "installing ${need[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

install_backports() {
  mapfile -t need < <(missing_packages "${BPO_PACKAGES[@]}")
  [ "${#need[@]}" -eq 0 ] && return 0
  log "installing ${need[*]} from bookworm-backports (private apt lists in $CACHE/apt-host)"
  local d="$CACHE/apt-host"
  mkdir -p "$d/lists/partial" "$d/archives/partial"
  cat >"$d/sources.list" <<SRC
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
deb http://deb.debian.org/debian bookworm-backports main
SRC
  local opts=(-o "Dir::Etc::SourceList=$d/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d" -o "APT::Sandbox::User=root")
  as_root env DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get "${opts[@]}" install -y -qq \
    --no-install-recommends -t bookworm-backports "${need[@]}" >/dev/null
}

install_virtme_ng() {
  local installed=""
  [ -x "$VENV/bin/vng" ] && installed=$("$VENV/bin/pip" freeze 2>/dev/null || true)
  if printf '%s\n' "$installed" | grep -qx "virtme-ng==$VIRTME_NG_VERSION" &&
     printf '%s\n' "$installed" | grep -qx "matplotlib==$MATPLOTLIB_VERSION"; then
    return 0
  fi
  log "installing virtme-ng $VIRTME_NG_VERSION and matplotlib $MATPLOTLIB_VERSION into $VENV"
  mkdir -p "$CACHE"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "virtme-ng==$VIRTME_NG_VERSION" "matplotlib==$MATPLOTLIB_VERSION"
}

# ESLint for the GNOME Shell extension, pinned by its package-lock.json (npm ci).
install_eslint() {
  local d="$ROOT/data/gnome-shell-extension"
  cmp -s "$d/package-lock.json" "$d/node_modules/.gearshift-lock" && return 0
  command -v npm >/dev/null || as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends npm >/dev/null
  log "installing eslint (npm ci in $d)"
  (cd "$d" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$d/package-lock.json" "$d/node_modules/.gearshift-lock"
}

install_apt
install_backports
install_virtme_ng
install_eslint
log "ready (cache: $CACHE)"
