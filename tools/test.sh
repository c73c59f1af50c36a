#!/usr/bin/env bash
# Sets up everything and runs all of Gearshift's tests: host tests, then the VM tests (which boot
# a sched_ext kernel under TCG). This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Incremental compilation only pays off when the same tree is rebuilt after small edits; in a
# whole run it doubles what target/ holds. A whole run needs about 10 GiB (README.md).
export CARGO_INCREMENTAL=0
NEED_FREE_GIB=10

free_gib() { df -Pk . | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'; }
step() { echo "== $* (at $((SECONDS / 60)) min $((SECONDS % 60)) s; free disk: $(free_gib) GiB)" >&2; }

if awk -v f="$(free_gib)" -v n="$NEED_FREE_GIB" 'BEGIN { exit !(f < n) }'; then
  echo "warning: only $(free_gib) GiB free here; a whole run needs about $NEED_FREE_GIB GiB" \
    "(target/, fuzz/target, the kernel and tool cache)" >&2
fi

./tools/bootstrap.sh
step "fetching the sched_ext kernel and test tools"
cargo xtask kernel >/dev/null
cargo xtask tools >/dev/null
step "format and lint"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
step "host tests"
cargo test --workspace --locked
step "fuzz targets over their corpora"
./tools/fuzz.sh   # every fuzz target over its committed corpus (fuzz/, docs/reliability.md)
step "VM tests"
./tools/test-vm.sh   # every ignored test, in the sched_ext VM; two VMs side by side
step "packaging"
./tools/test-packaging.sh   # the .deb built, linted, installed, removed; the RPM and Arch package built from the tarball
step "done"
