#!/usr/bin/env bash
# Sets up everything and runs all of Gearshift's tests: host tests, then the VM tests (which boot
# a sched_ext kernel under TCG). This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./tools/bootstrap.sh
echo "== fetching the sched_ext kernel and test tools" >&2
cargo xtask kernel >/dev/null
cargo xtask tools >/dev/null
echo "== format and lint" >&2
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== host tests" >&2
cargo test --workspace --locked
./tools/fuzz.sh   # every fuzz target over its committed corpus (fuzz/, docs/reliability.md)
echo "== VM tests" >&2
cargo test --workspace --locked -- --ignored --test-threads=1
./tools/test-packaging.sh   # build, lint, install and remove the .deb; check the spec and PKGBUILD
