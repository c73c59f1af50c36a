//! Shared helpers of the scheduler's VM tests: a shell prelude with the scheduler and tools,
//! and parsing of the `key=value` lines the guest scripts print.

#![allow(dead_code)]

use gearshift_testkit::{run_in_vm, VmConfig, VmOutput};

/// Shell functions every guest script can use.
fn prelude() -> String {
    let stress_ng =
        gearshift_testkit::tools::stress_ng(&gearshift_testkit::cache::Cache::from_env())
            .expect("stress-ng 0.19 for the VM tests");
    format!(
        r#"
SCHED='{sched}'
STRESS_NG='{stress_ng}'
state() {{ cat /sys/kernel/sched_ext/state; }}
# Starts the scheduler in the background and waits until the kernel reports it enabled.
start_sched() {{
    "$SCHED" "$@" > /tmp/gs.log 2>&1 &
    SCHED_PID=$!
    for _ in $(seq 1 240); do
        [ "$(state)" = enabled ] && return 0
        kill -0 $SCHED_PID 2>/dev/null || break
        sleep 0.25
    done
    echo "scheduler did not attach:"; cat /tmp/gs.log; exit 90
}}
# Interrupts the scheduler and prints its exit status (and the end of its log if it failed).
# A scheduler that has not exited after 60 s is reported with where its threads wait and what
# the kernel's blocked tasks wait for, instead of the VM's timeout saying only "hung".
stop_sched() {{
    kill -INT $SCHED_PID
    for _ in $(seq 1 240); do kill -0 $SCHED_PID 2>/dev/null || break; sleep 0.25; done
    if kill -0 $SCHED_PID 2>/dev/null; then
        echo "sched_stuck=1 state=$(state)"
        for t in /proc/$SCHED_PID/task/*; do
            echo "--- thread $(cat $t/comm) $(cat $t/wchan 2>/dev/null)"; cat $t/stack 2>/dev/null
        done
        echo w > /proc/sysrq-trigger; dmesg | tail -80
        tail -30 /tmp/gs.log
        kill -KILL $SCHED_PID
    fi
    wait $SCHED_PID
    local rc=$?
    echo "sched_exit=$rc"
    [ "$rc" = 0 ] || {{ echo "--- end of the scheduler's log"; tail -30 /tmp/gs.log; }}
}}
# Percentage of CPU time not idle, over $1 seconds, from /proc/stat.
busy_pct() {{
    a=$(awk '/^cpu /{{t=0; for(i=2;i<=NF;i++) t+=$i; print $5+$6, t}}' /proc/stat)
    sleep "$1"
    b=$(awk '/^cpu /{{t=0; for(i=2;i<=NF;i++) t+=$i; print $5+$6, t}}' /proc/stat)
    echo "$a $b" | awk '{{printf "%.2f\n", 100 * (1 - ($3-$1)/($4-$2))}}'
}}
# Sends one control request (JSON) to the scheduler's socket and prints the answer.
ask() {{
    /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect("/tmp/gs.sock")
s.sendall((sys.argv[1] + "\n").encode()); print(s.makefile().readline().strip())' "$1"
}}
# The stats fields named as arguments (JSON names), from one get-stats request (one
# snapshot), on one line. With STATS_AFTER_FIFO set, the request waits until something is
# written to that FIFO: a caller started early asks at a chosen moment without its own
# start-up (a Python interpreter's) running then.
stats_of() {{
    /usr/bin/python3 -c 'import json, os, socket, sys
if os.environ.get("STATS_AFTER_FIFO"): open(os.environ["STATS_AFTER_FIFO"]).read()
s = socket.socket(socket.AF_UNIX); s.connect("/tmp/gs.sock")
s.sendall(b"{{\"request\":\"get-stats\"}}\n"); st = json.loads(s.makefile().readline())["stats"]
print(*(st[k] for k in sys.argv[1:]))' "$@"
}}
# Prints the stats field $1.
stat() {{ stats_of "$1"; }}
# The value of $1 in the last stats line the scheduler printed.
last_stat() {{ grep '^\[gearshift\]' /tmp/gs.log | tail -1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }}
"#,
        sched = env!("CARGO_BIN_EXE_scx_gearshift"),
        stress_ng = stress_ng.display(),
    )
}

/// Runs `body` after the prelude in a VM with `cpus` vCPUs.
pub fn run(cpus: u32, body: &str) -> VmOutput {
    run_with(
        VmConfig {
            cpus,
            ..VmConfig::default()
        },
        body,
    )
}

/// Runs `body` after the prelude in a VM with `cpus` vCPUs, booting the kernel image `image`.
pub fn run_on(image: &std::path::Path, cpus: u32, body: &str) -> VmOutput {
    let cfg = VmConfig {
        cpus,
        ..VmConfig::default()
    };
    boot(Some(image), cfg, TEST_TIMEOUT, body)
}

/// Every scheduler VM test finishes in a few minutes; a hang fails it after this.
const TEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs `body` after the prelude in a VM with `cpus` vCPUs, for a test that takes longer than
/// TEST_TIMEOUT allows (a hang fails it after `timeout`).
pub fn run_within(cpus: u32, timeout: std::time::Duration, body: &str) -> VmOutput {
    let cfg = VmConfig {
        cpus,
        ..VmConfig::default()
    };
    boot(None, cfg, timeout, body)
}

/// Runs `body` after the prelude in a VM configured by `cfg`.
pub fn run_with(cfg: VmConfig, body: &str) -> VmOutput {
    boot(None, cfg, TEST_TIMEOUT, body)
}

/// Runs `body` after the prelude, on `image` or the harness kernel; a hang fails it after
/// `timeout`.
fn boot(
    image: Option<&std::path::Path>,
    cfg: VmConfig,
    timeout: std::time::Duration,
    body: &str,
) -> VmOutput {
    let cfg = VmConfig { timeout, ..cfg };
    let script = format!("{}\n{}", prelude(), body);
    let out = match image {
        Some(image) => gearshift_testkit::run_in_vm_on(image, &cfg, &script),
        None => run_in_vm(&cfg, &script),
    }
    .expect("VM run");
    eprintln!("--- guest output ---\n{}", out.output);
    out
}

/// The value printed as `key=value` (last occurrence).
pub fn field<'a>(out: &'a VmOutput, key: &str) -> Option<&'a str> {
    out.field(key)
}

pub fn number(out: &VmOutput, key: &str) -> f64 {
    out.number(key)
        .unwrap_or_else(|| panic!("no numeric {key}= in the output:\n{}", out.output))
}

/// The kernel's log lines about sched_ext (attach, detach, errors).
pub fn sched_ext_log(out: &VmOutput) -> Vec<&str> {
    out.dmesg
        .lines()
        .filter(|l| l.contains("sched_ext"))
        .collect()
}
