//! Priorities in the sched_ext VM: nice levels and cgroup cpu.weight share a CPU between
//! CPU-bound tasks as the kernel's own scheduler does (about 9:1 for nice 0 over nice 10,
//! 10:1 for cpu.weight 1000 over 100), in every mode. Ignored by plain `cargo test`;
//! `tools/test.sh` runs them.

mod common;

use common::{field, number, run};

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn nice_and_cgroup_weights_share_a_cpu_in_every_mode() {
    let body = format!(
        r#"
{desktop}
start_sched --control-socket /tmp/gs.sock
for mode in interactive fifo low-power; do
    ask "{{\"request\":\"set-settings\",\"settings\":{{\"mode\":\"$mode\",\"preemption\":true}}}}" > /dev/null
    weight_shares "$mode" 5 | awk '{{ print $2 "_" $3 "=" $4 }}'
done
echo "weight_turns=$(stat nr_weight_turns)"
echo "state=$(state)"
stop_sched
"#,
        desktop = gearshift_testkit::desktop::DESKTOP_GUEST,
    );
    let out = run(2, &body);
    assert_eq!(out.status, 0);
    for mode in ["interactive", "fifo", "low-power"] {
        for kind in ["nice", "cgroup"] {
            let share = number(&out, &format!("{mode}_{kind}_share"));
            assert!(
                share >= 3.0,
                "{mode}: the heavier loop gets at least 3x the CPU time ({kind}): {share}"
            );
        }
    }
    assert!(
        number(&out, "weight_turns") > 0.0,
        "the heavier loops kept their CPU past their slices"
    );
    assert_eq!(field(&out, "state"), Some("enabled"));
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}
