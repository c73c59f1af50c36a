//! In a sched_ext VM: `gearshiftctl check` end to end with the real gearshiftd and the real
//! scx_gearshift. Both schedulers are measured (the kernel's sched_ext state is seen disabled
//! and enabled while it runs), the report names every one, what ran before runs again, and
//! Ctrl-C cancels a check and puts the scheduler back. Prints the check's table.

mod vm_common;

use vm_common::{field, number};

const SCRIPT: &str = r#"
start_daemon
wait_state running
# The kernel's sched_ext state twice a second while the checks run.
(while :; do cat /sys/kernel/sched_ext/state; sleep 0.5; done) > /tmp/states &
SAMPLER=$!

"$GEARSHIFTCTL" check --profile interactive --profile low-power --seconds 4 > /tmp/check.txt 2> /tmp/check.err
echo "check_rc=$?"
echo "states_seen=$(sort -u /tmp/states | tr '\n' ' ')"
echo "after_check=$(prop State) kernel=$(cat /sys/kernel/sched_ext/state) profile=$(prop Profile) holds=$($B get-property $DEST ActiveHolds | tr -d '\n')"
"$GEARSHIFTCTL" --json check --last > /tmp/last.json
echo "schedulers=$(python3 -c 'import json; print(",".join(r["scheduler"] for r in json.load(open("/tmp/last.json"))["results"]))')"
echo "default_expected=$(python3 -c 'import json; print(json.load(open("/tmp/last.json"))["results"][0]["expected"])')"
echo "verdict=$(python3 -c 'import json; print(json.load(open("/tmp/last.json"))["verdict"])')"
echo "--- check ---"; cat /tmp/check.txt; echo "--- progress ---"; cat /tmp/check.err

# Ctrl-C in the middle: cancelled, and the scheduler runs again.
"$GEARSHIFTCTL" check --profile low-power --seconds 60 > /dev/null 2> /tmp/cancel.err &
CHECK=$!
for _ in $(seq 1 100); do [ "$(cat /sys/kernel/sched_ext/state)" = disabled ] && break; sleep 0.2; done
echo "during_cancelled=$(cat /sys/kernel/sched_ext/state)"
kill -INT $CHECK
wait $CHECK
echo "cancel_rc=$?"
echo "cancel_said=$(tail -1 /tmp/cancel.err)"
wait_state running
echo "after_cancel=$(prop State) kernel=$(cat /sys/kernel/sched_ext/state) running=$(prop CheckRunning)"
kill $SAMPLER
echo "--- gearshiftd log ---"; grep -i check /tmp/gsd.log | tail -20
"#;

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn a_check_measures_both_schedulers_and_puts_back_the_running_one() {
    let out = vm_common::run(2, "autostart = true", &[], SCRIPT);
    assert_eq!(field(&out, "check_rc"), "0");
    let states = field(&out, "states_seen");
    assert!(
        states.contains("disabled") && states.contains("enabled"),
        "the default scheduler and gearshift both ran: {states}"
    );
    assert_eq!(
        field(&out, "after_check"),
        "running kernel=enabled profile=interactive holds=aa{sv} 0"
    );
    assert_eq!(field(&out, "schedulers"), "default,interactive,low-power");
    // 4 s of 16.667 ms periods.
    assert_eq!(number(&out, "default_expected"), 239.0);
    let verdict = field(&out, "verdict");
    assert!(
        ["helps", "default-better", "no-clear-difference"].contains(&verdict),
        "{verdict}"
    );
    assert_eq!(field(&out, "during_cancelled"), "disabled");
    assert_eq!(field(&out, "cancel_rc"), "1");
    assert!(field(&out, "cancel_said").contains("check cancelled"));
    assert_eq!(
        field(&out, "after_cancel"),
        "running kernel=enabled running=false"
    );
}
