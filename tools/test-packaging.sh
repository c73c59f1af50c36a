#!/usr/bin/env bash
# Packaging test (CI, as root on Debian 12). Makes the vendored source tarball (tools/dist.sh)
# and builds the RPM from it (rpmbuild -bb); packages that release build as the .deb, lints it,
# installs it with dpkg, checks that every file is where D-Bus, systemd, polkit and GNOME look,
# runs the installed gearshiftd on a private system bus and asks it with the installed
# gearshiftctl, removes and purges it (nothing may be left); then checks the Arch PKGBUILD
# (makepkg --printsrcinfo, against the committed .SRCINFO) and the RPM spec (rpmspec -P,
# rpmlint), lints the RPM and builds the Arch package with makepkg in the RPM's build tree (cargo
# compiles once for all three); each package's file list is compared with the .deb's.
#
# The package is installed on this machine: the script refuses to run when gearshift is
# already installed, and purges it on exit whatever happens.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[ "$(id -u)" -eq 0 ] || { echo "test-packaging: run as root (dpkg -i)" >&2; exit 1; }
if dpkg-query -W -f='${Status}' gearshift 2>/dev/null | grep -q installed; then
  echo "test-packaging: gearshift is installed already; not touching it" >&2
  exit 1
fi

step() { printf '== packaging: %s\n' "$*" >&2; }
fail() { printf 'test-packaging: FAIL: %s\n' "$*" >&2; exit 1; }
WORK="$(mktemp -d)"
chmod 0755 "$WORK"   # nobody uses the private bus's socket in here
BUS_PID=""
DAEMON_PID=""
cleanup() {
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null || true
  [ -n "$BUS_PID" ] && kill "$BUS_PID" 2>/dev/null || true
  if dpkg-query -W -f='${Status}' gearshift 2>/dev/null | grep -qv '^unknown ok not-installed'; then
    dpkg --purge gearshift >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

step "manual pages"
rm -rf target/man
cargo xtask man target/man >/dev/null

step "source tarball (tools/dist.sh)"
DIST="$(./tools/dist.sh)" || fail "tools/dist.sh"
TARBALL="${DIST%%$'\n'*}"   # its first line; the second is the sha256
# Debian names its clang "clang-19" and keeps libclang under LLVM's directory; the spec and
# the PKGBUILD call "clang" and take LIBCLANG_PATH from the environment.
mkdir -p "$WORK/bin"
ln -s "$(command -v clang-19)" "$WORK/bin/clang"
export LIBCLANG_PATH=/usr/lib/llvm-19/lib

# One release build serves the three packages. rpmbuild builds from the tarball in a clean tree,
# put where makepkg will unpack the tarball later (its $srcdir, $WORK/arch/src); the .deb packages
# that build's binaries; makepkg unpacks the same files over the tree (same contents, same
# times), and cargo finds most of the build up to date: it builds again only the crates whose
# build scripts see makepkg's environment differ (the C-building -sys crates and what depends on
# them, about a third of the time). Three full release builds took CI about 20 minutes.
# --noclean keeps rpmbuild from removing the tree.
step "RPM: rpmbuild -bb --nodeps (Fedora's macros for systemd and AppStream defined here)"
TREE="$WORK/arch/src/$(basename "$TARBALL" -vendored.tar.xz)"   # where the spec unpacks it
mkdir -p "$WORK/rpm/SOURCES" "$WORK/arch/src"
cp "$TARBALL" "$WORK/rpm/SOURCES/"
PATH="$WORK/bin:$PATH" rpmbuild -bb --noclean --nodeps \
  --define "_topdir $WORK/rpm" \
  --define "_builddir $WORK/arch/src" \
  --define "_unitdir /usr/lib/systemd/system" \
  --define "_metainfodir /usr/share/metainfo" \
  --define "debug_package %{nil}" \
  packaging/fedora/gearshift.spec >"$WORK/rpmbuild.log" 2>&1 ||
  { tail -40 "$WORK/rpmbuild.log" >&2; fail "rpmbuild -bb"; }
RPM="$(ls "$WORK"/rpm/RPMS/*/gearshift-[0-9]*.rpm)"
echo "$RPM" >&2

# tools/build-deb.sh --prebuilt takes target/release from CARGO_TARGET_DIR.
step "dpkg-buildpackage (the RPM's release build)"
[ -x "$TREE/target/release/scx_gearshift" ] || fail "rpmbuild left no release build in $TREE"
DEB="$(CARGO_TARGET_DIR="$TREE/target" ./tools/build-deb.sh --prebuilt)"
echo "$DEB" >&2

step "lintian"
# Errors fail; warnings are printed. Overrides: packaging/debian/gearshift.lintian-overrides.
lintian --fail-on error --suppress-tags-from-file /dev/null "$DEB" >&2

step "dpkg -i"
dpkg -i "$DEB" >&2

# Where each consumer looks (not where install.sh happens to put things).
SHELL_EXT_DIR=/usr/share/gnome-shell/extensions/gearshift@gearshift.github.io
EXPECTED=(
  /usr/bin/scx_gearshift /usr/bin/gearshiftctl /usr/bin/gearshift /usr/bin/gearshift-tray
  /usr/libexec/gearshiftd
  /usr/lib/systemd/system/gearshiftd.service
  /usr/share/dbus-1/system.d/io.github.gearshift.Scheduler1.conf
  /usr/share/dbus-1/system-services/io.github.gearshift.Scheduler1.service
  /usr/share/polkit-1/actions/io.github.gearshift.policy
  /usr/share/applications/io.github.gearshift.Gearshift.desktop
  /usr/share/metainfo/io.github.gearshift.Gearshift.metainfo.xml
  /usr/share/icons/hicolor/scalable/apps/io.github.gearshift.Gearshift.svg
  /usr/share/icons/hicolor/symbolic/apps/io.github.gearshift.Gearshift-symbolic.svg
  /etc/xdg/autostart/io.github.gearshift.Gearshift.Tray.desktop
  /usr/share/man/man8/gearshiftd.8.gz /usr/share/man/man1/gearshiftctl.1.gz
  /usr/share/man/man1/gearshiftctl-status.1.gz
  /usr/share/doc/gearshift/examples/config.toml /usr/share/doc/gearshift/copyright
  "$SHELL_EXT_DIR/metadata.json" "$SHELL_EXT_DIR/extension.js"
)
for lang in $(sed 's/#.*//' po/LINGUAS); do
  EXPECTED+=("/usr/share/locale/$lang/LC_MESSAGES/gearshift.mo")
done

step "installed files (${#EXPECTED[@]} checked)"
dpkg -L gearshift >"$WORK/files"
for f in "${EXPECTED[@]}"; do
  [ -f "$f" ] || fail "$f is not installed"
  # (Debian 12 lists units under /lib/systemd/system: the same directory with merged /usr.)
  grep -qx -e "$f" -e "${f#/usr}" "$WORK/files" || fail "$f is not in dpkg -L gearshift"
done
[ -x /usr/libexec/gearshiftd ] && [ -x /usr/bin/scx_gearshift ] || fail "programs not executable"
[ ! -e /etc/gearshift/config.toml ] || fail "/etc/gearshift/config.toml must not be shipped"
# Enabled by the maintainer scripts (deb-systemd-helper), with the D-Bus activation alias.
[ -L /etc/systemd/system/multi-user.target.wants/gearshiftd.service ] ||
  fail "gearshiftd.service is not enabled"
[ -L /etc/systemd/system/dbus-io.github.gearshift.Scheduler1.service ] ||
  fail "the D-Bus activation alias of gearshiftd.service is missing"
grep -qx 'SystemdService=gearshiftd.service' \
  /usr/share/dbus-1/system-services/io.github.gearshift.Scheduler1.service
grep -qx 'Exec=/usr/libexec/gearshiftd' \
  /usr/share/dbus-1/system-services/io.github.gearshift.Scheduler1.service
xmllint --noout /usr/share/polkit-1/actions/io.github.gearshift.policy \
  /usr/share/dbus-1/system.d/io.github.gearshift.Scheduler1.conf
desktop-file-validate /etc/xdg/autostart/io.github.gearshift.Gearshift.Tray.desktop
desktop-file-validate /usr/share/applications/io.github.gearshift.Gearshift.desktop
appstreamcli validate --no-net /usr/share/metainfo/io.github.gearshift.Gearshift.metainfo.xml >&2
# Translated where the program and desktop look (German is complete in po/).
grep -q '^Name\[de\]=' /usr/share/applications/io.github.gearshift.Gearshift.desktop
grep -q 'xml:lang="de"' /usr/share/polkit-1/actions/io.github.gearshift.policy
# GNOME Shell: the directory is the extension's uuid, and this is Debian 12's GNOME 43 build.
python3 - "$SHELL_EXT_DIR" <<'PY'
import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
meta = json.loads((d / "metadata.json").read_text())
assert meta["uuid"] == d.name, meta
assert meta["shell-version"] == ["43", "44"], meta["shell-version"]
assert "imports.misc.extensionUtils" in (d / "gearshift.js").read_text() + (d / "extension.js").read_text()
PY
man -w gearshiftd >/dev/null && man -w gearshiftctl >/dev/null
/usr/bin/scx_gearshift --version >/dev/null
/usr/bin/gearshiftctl --version >/dev/null

step "systemd-analyze verify"
systemd-analyze verify /usr/lib/systemd/system/gearshiftd.service

step "installed gearshiftd on a private system bus"
SOCK="$WORK/system_bus_socket"
# bus_conf [SED_ARGS]: Debian's system bus configuration (every installed policy, the system's
# service directories), as a root-run private bus listening on $SOCK, without local overrides.
bus_conf() {
  sed -e "s|<listen>[^<]*</listen>|<listen>unix:path=$SOCK</listen>|" \
      -e 's|<includedir>system.d</includedir>|<includedir>/usr/share/dbus-1/system.d</includedir>|' \
      -e '/<user>\|<fork\/>\|<pidfile>\|<syslog\/>\|<servicehelper>\|<include ignore_missing/d' \
      "$@" /usr/share/dbus-1/system.conf
}
start_bus() {
  rm -f "$SOCK"
  dbus-daemon --config-file="$1" --nofork --nopidfile 2>>"$WORK/dbus.log" &
  BUS_PID=$!
  for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
}
stop_bus() { kill "$BUS_PID"; wait "$BUS_PID" 2>/dev/null || true; BUS_PID=""; }
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$SOCK"
# The activation file, on a bus of its own: a bus that can activate the daemon would start an
# unconfigured one whenever a call came while none ran.
bus_conf >"$WORK/activation.conf"
start_bus "$WORK/activation.conf"
dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
  org.freedesktop.DBus.ListActivatableNames | grep -q '"io.github.gearshift.Scheduler1"' ||
  fail "the activation file is not in the system bus's service directories"
stop_bus
bus_conf -e '/<standard_system_servicedirs\/>/d' >"$WORK/bus.conf"
start_bus "$WORK/bus.conf"
# Never attach a scheduler to the machine running the tests: on a kernel with sched_ext, point
# the daemon at an empty sysfs (it then reports unsupported just the same).
SYSFS=/sys
[ -d /sys/kernel/sched_ext ] && SYSFS="$WORK/sysfs" && mkdir -p "$SYSFS/kernel"
/usr/libexec/gearshiftd --state-dir "$WORK/state" --runtime-dir "$WORK/run" \
  --sysfs-root "$SYSFS" 2>"$WORK/gearshiftd.log" &
DAEMON_PID=$!
for _ in $(seq 100); do
  dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:io.github.gearshift.Scheduler1 2>/dev/null |
    grep -q 'boolean true' && break
  sleep 0.1
done
STATUS="$(gearshiftctl --json status)" || { cat "$WORK/gearshiftd.log" >&2; fail "gearshiftctl status"; }
echo "$STATUS" >&2
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["state"]=="unsupported", s' "$STATUS" ||
  fail "expected state unsupported"
# Anyone may read (the installed bus policy); root may switch profiles (saved for the next start).
runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" \
  /usr/bin/gearshiftctl list-profiles >/dev/null || fail "nobody cannot read over the installed policy"
# The installed policy lets the daemon own scx_loader's name (asked for after its own) and
# anyone read it.
for _ in $(seq 100); do
  runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" \
    dbus-send --system --print-reply --dest=org.scx.Loader /org/scx/Loader \
    org.freedesktop.DBus.Properties.Get string:org.scx.Loader string:SupportedSchedulers \
    2>/dev/null | grep -q '"scx_gearshift"' && break
  sleep 0.1
done
runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" \
  dbus-send --system --print-reply --dest=org.scx.Loader /org/scx/Loader \
  org.freedesktop.DBus.Properties.Get string:org.scx.Loader string:SupportedSchedulers |
  grep -q '"scx_gearshift"' || { cat "$WORK/gearshiftd.log" >&2; fail "org.scx.Loader is not served over the installed policy"; }
gearshiftctl profile throughput >&2
[ "$(gearshiftctl profile)" = throughput ] || fail "profile not switched"
set +e; gearshiftctl start 2>/dev/null; code=$?; set -e
[ "$code" -eq 5 ] || fail "start on a kernel without sched_ext: exit $code, expected 5"
kill "$DAEMON_PID"; wait "$DAEMON_PID" || true; DAEMON_PID=""
stop_bus
unset DBUS_SYSTEM_BUS_ADDRESS

step "dpkg -r, dpkg --purge"
dpkg -r gearshift >&2
while read -r f; do
  [ -d "$f" ] && continue
  case "$f" in /etc/*) continue ;; esac   # conffiles stay until purge
  [ ! -e "$f" ] || fail "$f left after dpkg -r"
done <"$WORK/files"
dpkg --purge gearshift >&2
while read -r f; do
  [ -d "$f" ] && continue
  [ ! -e "$f" ] || fail "$f left after dpkg --purge"
done <"$WORK/files"
for f in /etc/systemd/system/multi-user.target.wants/gearshiftd.service \
         /etc/systemd/system/dbus-io.github.gearshift.Scheduler1.service \
         /etc/gearshift /var/lib/gearshift /usr/share/gnome-shell/extensions/gearshift@gearshift.github.io; do
  [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f left after dpkg --purge"
done

step "Arch: makepkg --printsrcinfo (as nobody) matches packaging/arch/.SRCINFO"
install -d -o nobody "$WORK/arch"
install -m 0644 packaging/arch/PKGBUILD "$WORK/arch/"
(cd "$WORK/arch" && runuser -u nobody -- makepkg --printsrcinfo) >"$WORK/SRCINFO"
diff -u packaging/arch/.SRCINFO "$WORK/SRCINFO" ||
  fail "packaging/arch/.SRCINFO is stale: (cd packaging/arch && makepkg --printsrcinfo > .SRCINFO)"

step "RPM: rpmspec -P, rpmlint"
rpmspec -P packaging/fedora/gearshift.spec >"$WORK/spec.parsed"
grep -q '^Version: *'"$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"'$' \
  "$WORK/spec.parsed" || fail "the spec's Version is not Cargo.toml's"
rpmlint -r packaging/fedora/rpmlintrc packaging/fedora/gearshift.spec >&2

# ---- The RPM and the Arch package, built for real from the vendored tarball ----
# Both build with the tarball's crates offline, as Fedora's and Arch's builders would. Debian
# has neither distribution's build dependencies as packages of theirs, so rpmbuild runs with
# --nodeps and makepkg with --nodeps; the tools they call come from Debian (cargo from rustup,
# clang-19 as "clang", GTK 4 and libadwaita's -dev packages). Each package's files must be the
# .deb's, in the same places (documentation aside, which each distribution lays out its way).

# pkg_files KIND PACKAGE: its regular files and symlinks, without the leading "/", manual
# pages without their compression suffix, /lib as /usr/lib (Debian 12's debhelper puts the
# unit under /lib; the same place with merged /usr), distribution-specific files left out.
pkg_files() {
  case "$1" in
    deb) dpkg-deb -c "$2" | awk '$1 ~ /^[-l]/ { print $6 }' ;;
    rpm) rpm -qlvp "$2" | awk '$1 ~ /^[-l]/ { print $9 }' ;;
    arch) bsdtar -tvf "$2" | awk '$1 ~ /^[-l]/ { print $9 }' ;;
  esac | sed -e 's|^\./||' -e 's|^/||' -e 's/\.\(gz\|zst\|xz\|bz2\)$//' -e 's|^lib/|usr/lib/|' |
    grep -v -e '^\.' -e '^usr/share/doc/' -e '^usr/share/lintian/' -e '^usr/lib/\.build-id/' |
    sort
}
# same_files KIND PACKAGE: fails naming every file only the .deb or only PACKAGE has.
same_files() {
  pkg_files "$1" "$2" >"$WORK/$1.files"
  [ -s "$WORK/$1.files" ] || fail "$2 lists no files"
  if ! cmp -s "$WORK/deb.files" "$WORK/$1.files"; then
    comm -3 "$WORK/deb.files" "$WORK/$1.files" |
      sed -e 's/^\t/  only in the '"$1"' package: /' -e '/^  only/!s/^/  only in the .deb: /' >&2
    fail "the $1 package's files differ from the .deb's (above)"
  fi
  echo "$1: the same $(wc -l <"$WORK/$1.files") files as the .deb" >&2
}
pkg_files deb "$DEB" >"$WORK/deb.files"
same_files rpm "$RPM"
# Errors fail (warnings are printed); the filters name what is Debian's, not the package's.
rpmlint -r packaging/fedora/rpmlintrc-debian-build "$RPM" >&2 || fail "rpmlint $RPM"

step "Arch: makepkg --nodeps as an unprivileged user, in the RPM's build tree"
# makepkg refuses root, and its build user reaches no toolchain under /root: it gets the active
# one as hard links (same file system, nothing copied), else as a copy.
cp -al "$(readlink -f "$(rustc --print sysroot)")" "$WORK/toolchain" 2>/dev/null ||
  { rm -rf "$WORK/toolchain"; cp -a "$(readlink -f "$(rustc --print sysroot)")" "$WORK/toolchain"; }
cp "$TARBALL" "$WORK/arch/"
chown -R nobody "$WORK/arch"
(cd "$WORK/arch" && runuser -u nobody -- env PATH="$WORK/bin:$WORK/toolchain/bin:/usr/bin:/bin" \
   HOME="$WORK/arch" CARGO_HOME="$WORK/arch/cargo-home" LIBCLANG_PATH="$LIBCLANG_PATH" \
   PKGEXT=.pkg.tar.zst makepkg --nodeps --noconfirm >"$WORK/makepkg.log" 2>&1) ||
  { tail -40 "$WORK/makepkg.log" >&2; fail "makepkg"; }
PKG="$(ls "$WORK"/arch/gearshift-[0-9]*.pkg.tar.zst)"
echo "$PKG (cargo compiled $(grep -c '^ *Compiling ' "$WORK/makepkg.log" || true) crates again)" >&2
same_files arch "$PKG"
echo "namcap: not packaged for Debian, the Arch package is not linted" >&2

step "ok"
