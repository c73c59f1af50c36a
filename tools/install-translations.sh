#!/usr/bin/env bash
# Installs what po/ translates, under PREFIX (e.g. /usr, or a package's staging dir/usr):
#   PREFIX/share/locale/<lang>/LC_MESSAGES/gearshift.mo             the app's catalogs
#   PREFIX/share/applications/io.github.gearshift.Gearshift.desktop  translated desktop file
#   PREFIX/share/metainfo/io.github.gearshift.Gearshift.metainfo.xml translated metainfo
#   PREFIX/share/polkit-1/actions/io.github.gearshift.policy         translated polkit actions
# Needs gettext's msgfmt (and polkitd's its rules for the policy).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${1:?usage: tools/install-translations.sh PREFIX}"
cd "$ROOT"

while read -r lang; do
  case "$lang" in ''|'#'*) continue ;; esac
  install -d "$PREFIX/share/locale/$lang/LC_MESSAGES"
  msgfmt --check -o "$PREFIX/share/locale/$lang/LC_MESSAGES/gearshift.mo" "po/$lang.po"
done < po/LINGUAS

install -d "$PREFIX/share/applications" "$PREFIX/share/metainfo" "$PREFIX/share/polkit-1/actions"
msgfmt --desktop -d po --template=data/applications/io.github.gearshift.Gearshift.desktop.in \
  -o "$PREFIX/share/applications/io.github.gearshift.Gearshift.desktop"
msgfmt --xml -d po --template=data/metainfo/io.github.gearshift.Gearshift.metainfo.xml.in \
  -o "$PREFIX/share/metainfo/io.github.gearshift.Gearshift.metainfo.xml"
msgfmt --xml -d po --template=data/polkit-1/actions/io.github.gearshift.policy \
  -o "$PREFIX/share/polkit-1/actions/io.github.gearshift.policy"
