#!/usr/bin/env bash
# Makes the release tarball the RPM spec and the PKGBUILD build from:
# target/dist/gearshift-<version>-vendored.tar.xz, holding gearshift-<version>/ with the tracked
# sources, every crate the build needs (vendor/, `cargo vendor`, and .cargo/config.toml pointing
# cargo at it: the build is offline) and the manual pages (man/, `cargo xtask man`).
# Prints the tarball's path and its sha256.
#
# usage: tools/dist.sh            the tarball
#        tools/dist.sh --tree DIR  only copy the sources into DIR (tools/build-deb.sh)
set -euo pipefail

# copy_tree DIR: the tracked files and the new ones git does not ignore, as they are now.
copy_tree() {
  mkdir -p "$1"
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar -c --null -T - | tar -x -C "$1"
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ "${1:-}" = --tree ]; then copy_tree "${2:?usage: tools/dist.sh --tree DIR}"; exit 0; fi
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"
NAME="gearshift-$VERSION"
OUT="$ROOT/target/dist"
STAGE="$OUT/$NAME"
rm -rf "$STAGE"
copy_tree "$STAGE"

echo "dist: vendoring crates" >&2
{
  printf '\n# Added by tools/dist.sh: the crates come from vendor/ (offline builds).\n'
  (cd "$STAGE" && cargo vendor --locked vendor 2>/dev/null)   # prints the source replacement
} >>"$STAGE/.cargo/config.toml"

cargo xtask man "$STAGE/man" >/dev/null

echo "dist: compressing" >&2
TARBALL="$OUT/$NAME-vendored.tar.xz"
MTIME="$(git log -1 --format=%cI)"
tar -C "$OUT" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$MTIME" \
  -c "$NAME" | xz -T0 -6 >"$TARBALL"
rm -rf "$STAGE"
echo "$TARBALL"
sha256sum "$TARBALL" | cut -d' ' -f1
