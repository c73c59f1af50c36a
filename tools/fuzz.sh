#!/usr/bin/env bash
# Fuzzes the parsers that take untrusted or hand-edited input (cargo fuzz / libFuzzer):
#   config       gearshiftd's Config::parse (/etc/gearshift/config.toml)
#   state        gearshiftd's state-file loader (/var/lib/gearshift/state.json)
#   control      the control channel's decoder, read_message::<Request> and ::<Response>
#
#   tools/fuzz.sh                  run every target over its committed corpus only (CI, seconds)
#   tools/fuzz.sh run TARGET [SECONDS]   fuzz TARGET for SECONDS (default 180); new inputs go
#                                  to fuzz/target/new-corpus/TARGET, crashes to fuzz/artifacts/
#   tools/fuzz.sh cmin TARGET      merge the seeds (fuzz/seeds.py) and the new inputs into
#                                  fuzz/corpus/TARGET and minimize it in place
#   tools/fuzz.sh install          only install cargo-fuzz
#
# cargo-fuzz is installed at a pinned version into the project cache ($CACHE/cargo-fuzz).
#
# Why RUSTC_BOOTSTRAP=1: cargo fuzz builds with `-Zsanitizer=address` and other unstable flags,
# which need a nightly compiler. The project pins one stable toolchain (rust-toolchain.toml) and
# the machines cannot download another, so we let that stable compiler accept the unstable
# flags. This affects only the fuzz build (its own workspace under fuzz/, its own target dir);
# nothing that ships is built this way.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${GEARSHIFT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gearshift}"
CARGO_FUZZ_VERSION="0.13.2"
CARGO_FUZZ="$CACHE/cargo-fuzz/bin/cargo-fuzz"
TARGETS=(config state control)

log() { printf 'fuzz: %s\n' "$*" >&2; }

install_cargo_fuzz() {
  if [ -x "$CARGO_FUZZ" ] && "$CARGO_FUZZ" --version 2>/dev/null | grep -q " $CARGO_FUZZ_VERSION\$"; then
    return 0
  fi
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION into $CACHE/cargo-fuzz"
  cargo install --quiet --locked --root "$CACHE/cargo-fuzz" "cargo-fuzz@$CARGO_FUZZ_VERSION"
}

cargo_fuzz() {
  local cmd="$1"
  shift
  # Called as `cargo-fuzz fuzz ...`, like cargo does for a subcommand. Release build with debug
  # assertions (overflow checks): the same build for every command, so it is built once.
  (cd "$ROOT" && RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$ROOT/fuzz/target" \
    "$CARGO_FUZZ" fuzz "$cmd" --debug-assertions "$@")
}

install_cargo_fuzz
case "${1:-check}" in
  install) ;;
  check)
    for t in "${TARGETS[@]}"; do
      log "$t: corpus fuzz/corpus/$t ($(find "$ROOT/fuzz/corpus/$t" -type f | wc -l) inputs)"
      if ! out=$(cargo_fuzz run "$t" "fuzz/corpus/$t" -- -runs=0 2>&1); then
        printf '%s\n' "$out" >&2
        log "$t: FAILED on its corpus"
        exit 1
      fi
      printf '%s\n' "$out" | grep -E '^(#[0-9]+ +DONE|Done)' >&2
    done
    ;;
  run)
    t="${2:?target}"
    secs="${3:-180}"
    new="$ROOT/fuzz/target/new-corpus/$t"
    mkdir -p "$new"
    # The first directory receives new inputs; the committed corpus is read only.
    cargo_fuzz run "$t" "$new" "fuzz/corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=1024 \
      -print_final_stats=1
    ;;
  cmin)
    t="${2:?target}"
    new="$ROOT/fuzz/target/new-corpus/$t"
    mkdir -p "$new"
    python3 "$ROOT/fuzz/seeds.py"
    mkdir -p "$ROOT/fuzz/corpus/$t"
    cp -n "$ROOT/fuzz/target/seeds/$t"/* "$new"/* "$ROOT/fuzz/corpus/$t/" 2>/dev/null || true
    # Edges only (no hit counts), greedy set cover: a few hundred small files, not thousands.
    cargo_fuzz cmin "$t" "fuzz/corpus/$t" -- -use_counters=0 -set_cover_merge=1
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
