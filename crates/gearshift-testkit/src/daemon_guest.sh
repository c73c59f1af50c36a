# The start of every guest script that runs gearshiftd (the demo, the soak, gearshiftd's VM
# tests): shell functions to start a private system bus with the real daemon on it, and to read
# the daemon's properties and the scheduler's stats the way a `busctl` user would.
# Needs RUN (bus.conf and config.toml: bus::write_daemon_run_dir in bus.rs) and GEARSHIFTD.
# DBUS_SYSTEM_BUS_ADDRESS is exported before this (bus::daemon_guest_prelude).
set -u
B="busctl --timeout=120"
DEST="io.github.gearshift.Scheduler1 /io/github/gearshift/Scheduler1 io.github.gearshift.Scheduler1"

# prop NAME: a property's value, without quotes ("" if the daemon does not answer).
prop() { $B get-property $DEST "$1" 2>/dev/null | cut -d' ' -f2- | tr -d '"'; }
# stat FIELD...: fields of one GetStats answer, space-separated (JSON for lists and dicts).
stat() {
    $B --json=short call $DEST GetStats 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["data"][0]
vs = [d[k]["data"] for k in sys.argv[1:]]
print(" ".join(v if isinstance(v, str) else json.dumps(v) for v in vs))' "$@" 2>/dev/null
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# wait_state STATE: waits up to 2 minutes for the State property; exits 91 with the log if not.
wait_state() {
    for _ in $(seq 1 600); do [ "$(prop State)" = "$1" ] && return 0; sleep 0.2; done
    echo "state stuck at $(prop State), not $1: $(prop StateReason)"; tail -40 /tmp/gsd.log; exit 91
}
# wait_restart: after the scheduler was killed, waits for the daemon to notice (State leaves
# "running": under load the kernel takes seconds to tear a killed scheduler down, and until the
# daemon has reaped it State still reads "running"), then for the restarted one to run.
wait_restart() {
    wait_state_leaves running
    wait_state running
}
# wait_state_leaves STATE: waits up to 2 minutes for the State property to read anything else.
wait_state_leaves() {
    for _ in $(seq 1 600); do [ "$(prop State)" != "$1" ] && return 0; sleep 0.2; done
    echo "state stuck at $1: $(prop StateReason)"; tail -40 /tmp/gsd.log; exit 91
}
# start_daemon [OOM_SCORE_ADJ]: starts the bus (BUS_PID) and gearshiftd (GSD, log in
# /tmp/gsd.log), and waits for the daemon's name on the bus. With OOM_SCORE_ADJ, the bus and
# the daemon get it before the daemon starts, so the scheduler it starts inherits it.
start_daemon() {
    BUS_PID=$(dbus-daemon --config-file="$RUN/bus.conf" --fork --nopidfile --print-pid) || exit 92
    [ -z "${1:-}" ] || echo "$1" > "/proc/$BUS_PID/oom_score_adj"
    ( [ -z "${1:-}" ] || echo "$1" > /proc/self/oom_score_adj
      exec "$GEARSHIFTD" --config "$RUN/config.toml" --state-dir /tmp/gs-state --runtime-dir /tmp/gs-run
    ) > /tmp/gsd.log 2>&1 &
    GSD=$!
    for _ in $(seq 1 100); do busctl status io.github.gearshift.Scheduler1 >/dev/null 2>&1 && return 0; sleep 0.2; done
    echo "gearshiftd never took its bus name"; tail -40 /tmp/gsd.log; exit 93
}
# start_logind_double: python-dbusmock's logind on the bus (LOGIND: its pid), once it owns
# logind's name. announce_sleep true|false: it sends PrepareForSleep as logind does around a
# suspend.
start_logind_double() {
    /usr/bin/python3 -m dbusmock --system --template logind > /tmp/logind.log 2>&1 &
    LOGIND=$!
    for _ in $(seq 1 300); do busctl status org.freedesktop.login1 > /dev/null 2>&1 && return 0; sleep 0.2; done
    echo "logind's double never took its bus name"; cat /tmp/logind.log; exit 94
}
announce_sleep() {
    $B call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.DBus.Mock EmitSignal \
        sssav org.freedesktop.login1.Manager PrepareForSleep b 1 b "$1"
}
