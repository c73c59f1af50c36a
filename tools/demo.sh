#!/usr/bin/env bash
# Sets up everything, then boots a sched_ext VM and shows Gearshift at work.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./tools/bootstrap.sh
cargo build --release --workspace --locked
cargo xtask demo "$@"
