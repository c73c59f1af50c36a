#!/usr/bin/env bash
# Regenerates po/gearshift.pot from the files in po/POTFILES.in and merges it into every
# po/<lang>.po of po/LINGUAS (msgmerge). Run after changing a translatable string; then
# translate what msgmerge left empty or fuzzy. Needs gettext (and polkitd for its its rules).
#
#   tools/update-po.sh            update the .pot and the .po files
#   tools/update-po.sh --pot FILE only write the template to FILE (the po test compares it)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
POT="po/gearshift.pot"
ONLY_POT=""
if [ "${1:-}" = "--pot" ]; then
  POT="$2"
  ONLY_POT=1
fi

mapfile -t FILES < <(grep -v '^\s*\(#\|$\)' po/POTFILES.in)
RUST=() UI=() OTHER=()
for f in "${FILES[@]}"; do
  case "$f" in
    *.rs) RUST+=("$f") ;;
    *.ui) UI+=("$f") ;;
    *) OTHER+=("$f") ;;
  esac
done

COMMON=(--from-code=UTF-8 --package-name=gearshift --msgid-bugs-address=https://github.com/gearshift-sched/gearshift/issues
        --copyright-holder="The Gearshift developers" --add-comments=Translators
        --sort-by-file --no-wrap --add-location=file)
TMP="$(mktemp)"
trap 'rm -f "$TMP"' EXIT
# xgettext has no Rust parser; C reads Rust's string literals and calls the same way.
# Its only complaint, about lifetimes ('static) read as character constants, is noise.
xgettext "${COMMON[@]}" -o "$TMP" --language=C --keyword=gettext --keyword=gettext_noop \
  --keyword=ngettext:1,2 --keyword=pgettext:1c,2 "${RUST[@]}" 2>&1 |
  { grep -v 'unterminated character constant' >&2 || true; }
xgettext "${COMMON[@]}" -o "$TMP" --join-existing "${UI[@]}"
# .desktop, metainfo (its rules from gettext) and polkit (its rules from polkitd).
xgettext "${COMMON[@]}" -o "$TMP" --join-existing "${OTHER[@]}"
# The creation date changes on every run; keep it out so the file only changes with content.
sed -i '/^"POT-Creation-Date: /d' "$TMP"
mv "$TMP" "$POT"
trap - EXIT

[ -n "$ONLY_POT" ] && exit 0
while read -r lang; do
  case "$lang" in ''|'#'*) continue ;; esac
  if [ -f "po/$lang.po" ]; then
    msgmerge --quiet --update --backup=none --no-wrap --sort-by-file --add-location=file "po/$lang.po" "$POT"
  else
    msginit --no-translator --no-wrap --locale="$lang" -i "$POT" -o "po/$lang.po"
  fi
done < po/LINGUAS
echo "updated $POT and the translations in po/LINGUAS"
