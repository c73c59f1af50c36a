#!/usr/bin/env bash
# The VM tests (every #[ignore]d test: each boots the sched_ext kernel under TCG), two test
# binaries at a time. A TCG VM runs all its vCPUs on one host thread (-accel tcg,thread=single),
# so one VM leaves the second core of a 2-core machine idle; two side by side take about half
# the time. Each binary still runs its own tests one after another (--test-threads=1): a VM's
# timing must not be shared with a third one.
#
# The binaries are the ones `cargo test --workspace` built (run directly, from their package's
# directory as cargo would: `cargo test -p X` could resolve features differently and rebuild).
# Longest first, so the two lanes end together; a binary not named below goes last.
#
#   tools/test-vm.sh [JOBS]     JOBS lanes (default 2); output lines are prefixed with the binary
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${1:-2}"
LONGEST_FIRST=(vm_reliability vm_desktop vm_modes vm_scheduler vm_soak vm_daemon vm_check vm_foreground
  vm_oldest_kernel vm_weights vm_topology vm_harness)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# "<package dir> <target name> <executable>" for every test binary of the workspace, in the
# order of LONGEST_FIRST (the others after them).
cargo test --workspace --locked --no-run --message-format=json | python3 -c '
import json, os, sys
order = sys.argv[1:]
found = []
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        found.append((os.path.dirname(m["manifest_path"]), m["target"]["name"], m["executable"]))
found.sort(key=lambda b: order.index(b[1]) if b[1] in order else len(order))
for b in found:
    print(*b)
' "${LONGEST_FIRST[@]}" >"$WORK/binaries"

# Only the binaries that have ignored tests.
: >"$WORK/queue"
while read -r dir target exe; do
  n="$(cd "$dir" && "$exe" --ignored --list 2>/dev/null | grep -c ': test$' || true)"
  [ "$n" -gt 0 ] && echo "$dir $target $exe" >>"$WORK/queue"
done <"$WORK/binaries"
[ -s "$WORK/queue" ] || { echo "test-vm: no test binary has VM tests" >&2; exit 1; }
echo "VM tests: $(wc -l <"$WORK/queue") test binaries, $JOBS at a time" >&2

# run_one DIR TARGET EXE: its tests in order, as they go, each line prefixed with TARGET; a
# failure is recorded.
run_one() {
  local dir="$1" target="$2" exe="$3" start=$SECONDS rc
  set +e
  (cd "$dir" && "$exe" --ignored --test-threads=1 2>&1) | sed -u "s/^/[$target] /"
  rc=${PIPESTATUS[0]}
  echo "[$target] exit $rc after $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || echo "$target" >>"$WORK/failed"
}
export -f run_one
export WORK
xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _ <"$WORK/queue"

if [ -s "$WORK/failed" ]; then
  echo "VM tests failed: $(tr '\n' ' ' <"$WORK/failed")" >&2
  exit 1
fi
