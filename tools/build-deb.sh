#!/usr/bin/env bash
# Builds the Debian package from this checkout: copies the tracked (and new, unignored) files
# into target/package/deb/gearshift-<version>/ with packaging/debian as debian/, and runs
# dpkg-buildpackage there. Prints the path of the .deb.
#
# usage: tools/build-deb.sh [--prebuilt]
#   --prebuilt   package target/release and target/man as they are (built by
#                `cargo build --release` and `cargo xtask man`) instead of building in the copy
#
# Needs the Build-Depends of packaging/debian/control (tools/bootstrap.sh installs them) and
# rustup's cargo on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PREBUILT=""
[ "${1:-}" = --prebuilt ] && PREBUILT=1

VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"
DEB_VERSION="$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)"
case "$DEB_VERSION" in
  "$VERSION"-*) ;;
  *) echo "build-deb: packaging/debian/changelog is at $DEB_VERSION, Cargo.toml at $VERSION" >&2
     exit 1 ;;
esac

OUT="$ROOT/target/package/deb"
SRC="$OUT/gearshift-$VERSION"
rm -rf "$OUT"
./tools/dist.sh --tree "$SRC"
cp -a packaging/debian "$SRC/debian"

args=(-b -us -uc)
if [ -n "$PREBUILT" ]; then
  export GEARSHIFT_BIN_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/release"
  mkdir -p "$SRC/man"
  cp "$ROOT"/target/man/*.[18] "$SRC/man/"
else
  # Build in the copy with this checkout's cargo caches.
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
fi
(cd "$SRC" && dpkg-buildpackage "${args[@]}" >"$OUT/build.log" 2>&1) || {
  tail -n 40 "$OUT/build.log" >&2
  echo "build-deb: dpkg-buildpackage failed; log: $OUT/build.log" >&2
  exit 1
}
ls "$OUT"/gearshift_"$DEB_VERSION"_*.deb
