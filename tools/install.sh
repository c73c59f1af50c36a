#!/usr/bin/env bash
# Installs Gearshift's files into DESTDIR: the one file list every package uses (debian/rules,
# packaging/fedora/gearshift.spec, packaging/arch/PKGBUILD). Builds nothing with cargo: the
# release binaries must exist already.
#
# usage: tools/install.sh [--bin-dir DIR] [--man-dir DIR] [--shell-extension 45|43]
#                         DESTDIR [PREFIX]
#
#   --bin-dir DIR          the release binaries (default: $CARGO_TARGET_DIR/release or
#                          target/release)
#   --man-dir DIR          the manual pages `cargo xtask man` wrote (default: man/ in a release
#                          tarball, else target/man)
#   --shell-extension V    which GNOME Shell extension build: 45 (GNOME 45 and newer, the
#                          default) or 43 (GNOME 43-44, e.g. Debian 12)
#   PREFIX                 default /usr; /etc is used for the XDG autostart file
#
# Nothing is stripped (the distributions' tools strip and split debug info) and man pages are
# not compressed (dh_compress, rpm and makepkg do that). /etc/gearshift stays empty: without
# a config file gearshiftd uses its defaults; the documented example goes to the docs.
# Needs: install, python3 (the shell extension), msgfmt (gettext) and polkit's ITS rules
# (polkitd on Debian) for tools/install-translations.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/release"
MAN_DIR=""
SHELL_EXT=45
APP_ID=io.github.gearshift.Gearshift
BUS_NAME=io.github.gearshift.Scheduler1
EXT_UUID=gearshift@gearshift.github.io

usage() { sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) BIN_DIR="$2"; shift 2 ;;
    --man-dir) MAN_DIR="$2"; shift 2 ;;
    --shell-extension) SHELL_EXT="$2"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "install.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || usage
DESTDIR="$1"
PREFIX="${2:-/usr}"
case "$SHELL_EXT" in 45|43) ;; *) echo "install.sh: --shell-extension is 45 or 43" >&2; exit 2 ;; esac
if [ -z "$MAN_DIR" ]; then
  if [ -d "$ROOT/man" ]; then MAN_DIR="$ROOT/man"; else MAN_DIR="$ROOT/target/man"; fi
fi
if [ "$PREFIX" = /usr ]; then SYSCONFDIR=/etc; else SYSCONFDIR="$PREFIX/etc"; fi

D="$DESTDIR$PREFIX"
die() { echo "install.sh: $*" >&2; exit 1; }
file() { install -D -m 0644 "$1" "$2"; }     # file SRC DEST
prog() { install -D -m 0755 "$1" "$2"; }     # prog SRC DEST

# Programs.
for bin in scx_gearshift gearshiftctl gearshift gearshift-tray gearshiftd; do
  [ -x "$BIN_DIR/$bin" ] || die "$BIN_DIR/$bin is missing: cargo build --release first"
done
prog "$BIN_DIR/scx_gearshift" "$D/bin/scx_gearshift"
prog "$BIN_DIR/gearshiftctl" "$D/bin/gearshiftctl"
prog "$BIN_DIR/gearshift" "$D/bin/gearshift"
prog "$BIN_DIR/gearshift-tray" "$D/bin/gearshift-tray"
prog "$BIN_DIR/gearshiftd" "$D/libexec/gearshiftd"

# System integration: the unit, the bus policy and activation, polkit. They name
# /usr/libexec/gearshiftd; another prefix gets its own path.
libexec_path() { sed "s|/usr/libexec/gearshiftd|$PREFIX/libexec/gearshiftd|g" "$1" >"$2"; chmod 0644 "$2"; }
install -d "$D/lib/systemd/system" "$D/share/dbus-1/system-services"
libexec_path "$ROOT/data/systemd/gearshiftd.service" "$D/lib/systemd/system/gearshiftd.service"
libexec_path "$ROOT/data/dbus-1/system-services/$BUS_NAME.service" \
  "$D/share/dbus-1/system-services/$BUS_NAME.service"
file "$ROOT/data/dbus-1/system.d/$BUS_NAME.conf" "$D/share/dbus-1/system.d/$BUS_NAME.conf"
# (The polkit actions are installed translated, below.)

# Desktop: icons, the tray's autostart entry.
for svg in "$ROOT"/data/icons/hicolor/*/apps/*.svg; do
  rel="${svg#"$ROOT/data/icons/"}"
  file "$svg" "$D/share/icons/$rel"
done
file "$ROOT/data/autostart/$APP_ID.Tray.desktop" \
  "$DESTDIR$SYSCONFDIR/xdg/autostart/$APP_ID.Tray.desktop"

# Translated: the catalogs of po/LINGUAS (share/locale/<lang>/LC_MESSAGES/gearshift.mo), the
# app's desktop entry (share/applications) and metainfo (share/metainfo), the polkit actions
# (share/polkit-1/actions).
"$ROOT/tools/install-translations.sh" "$D"

# Manual pages (`cargo xtask man`).
[ -f "$MAN_DIR/gearshiftd.8" ] || die "no manual pages in $MAN_DIR: cargo xtask man $MAN_DIR"
for page in "$MAN_DIR"/*.[18]; do
  file "$page" "$D/share/man/man${page##*.}/$(basename "$page")"
done

# The documented example config (not installed as /etc/gearshift/config.toml: see above).
file "$ROOT/data/gearshift/config.toml" "$D/share/doc/gearshift/examples/config.toml"

# GNOME Shell extension, unpacked where GNOME Shell finds system-wide extensions.
ext_build="$(mktemp -d)"
trap 'rm -rf "$ext_build"' EXIT
python3 "$ROOT/tools/build-shell-extension.py" --no-pack "$ext_build" >/dev/null
for f in "$ext_build/$SHELL_EXT"/*; do
  file "$f" "$D/share/gnome-shell/extensions/$EXT_UUID/$(basename "$f")"
done
