//! On the oldest kernel line with sched_ext (6.12), which lacks kfuncs newer kernels have
//! (scx_bpf_select_cpu_and, scx_bpf_task_set_slice) and verifies timer callbacks of a
//! sleepable ops.init as sleepable: the scheduler loads, schedules CPU hogs and a message
//! storm in every mode and in a foreground cgroup, and leaves cleanly.
//!
//! The kernel is the prebuilt image in the shared kernels directory next to the checkout
//! (`../shared/kernels/bzImage-6.12.117`, see its README), or `GEARSHIFT_OLDEST_KERNEL`.

mod common;

use std::path::PathBuf;

use common::{field, number, run_on};

fn oldest_kernel() -> Option<PathBuf> {
    if let Some(image) = std::env::var_os("GEARSHIFT_OLDEST_KERNEL") {
        return Some(PathBuf::from(image));
    }
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/kernels/bzImage-6.12.117");
    shared.is_file().then_some(shared)
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn the_scheduler_works_on_the_oldest_sched_ext_kernel() {
    let Some(image) = oldest_kernel() else {
        eprintln!(
            "NOT RUN: no 6.12 kernel image (../shared/kernels/bzImage-6.12.117 next to the \
             checkout, or GEARSHIFT_OLDEST_KERNEL)"
        );
        return;
    };
    let out = run_on(
        &image,
        2,
        r#"
echo "release=$(uname -r)"
start_sched --control-socket /tmp/gs.sock
cd /tmp
"$STRESS_NG" --cpu 4 --cpu-method loop -t 30 -q & HOGS=$!
for m in interactive low-power fifo interactive; do
    ask "{\"request\":\"set-settings\",\"settings\":{\"mode\":\"$m\",\"preemption\":true}}" > /dev/null
    hackbench -g 2 -l 50 > /dev/null 2>&1 && echo "hackbench_ok_$m=1"
    echo "mode_now_$m=$(stat mode)"
done
# CPU hotplug in low-power mode: handled in BPF, no restart (the counter would start over).
ask '{"request":"set-settings","settings":{"mode":"low-power","preemption":true}}' > /dev/null
echo 0 > /sys/devices/system/cpu/cpu1/online
sleep 2
hackbench -g 2 -l 50 > /dev/null 2>&1 && echo "hackbench_ok_offline=1"
echo 1 > /sys/devices/system/cpu/cpu1/online
sleep 2
echo "hotplug_events=$(stat nr_hotplug_events)"
echo "hotplug_state=$(state)"
ask '{"request":"set-settings","settings":{"mode":"interactive","preemption":true}}' > /dev/null
# The foreground boost: a cgroup named foreground; hackbench run in it is boosted.
mkdir -p /sys/fs/cgroup/gs-fg
ask "{\"request\":\"set-foreground\",\"cgroup_id\":$(command stat -c %i /sys/fs/cgroup/gs-fg)}" > /dev/null
b0=$(stat nr_foreground_boosts)
sh -c 'echo $$ > /sys/fs/cgroup/gs-fg/cgroup.procs && exec hackbench -g 2 -l 50' > /dev/null 2>&1 &&
    echo "hackbench_ok_foreground=1"
echo "foreground_boosts=$(( $(stat nr_foreground_boosts) - b0 ))"
ask '{"request":"set-foreground","cgroup_id":0}' > /dev/null
kill $HOGS; wait $HOGS 2>/dev/null
echo "scheduled=$(stat nr_scheduled)"
echo "state_after=$(state)"
stop_sched
"#,
    );
    assert_eq!(out.status, 0);
    assert!(field(&out, "release").is_some_and(|r| r.starts_with("6.12")));
    for mode in ["interactive", "low-power", "fifo"] {
        assert_eq!(field(&out, &format!("hackbench_ok_{mode}")), Some("1"));
        assert_eq!(
            field(&out, &format!("mode_now_{mode}")),
            Some(mode),
            "the mode is in effect"
        );
    }
    assert_eq!(field(&out, "hackbench_ok_offline"), Some("1"));
    assert_eq!(
        number(&out, "hotplug_events"),
        2.0,
        "one attach across the hotplug"
    );
    assert_eq!(field(&out, "hotplug_state"), Some("enabled"));
    assert_eq!(field(&out, "hackbench_ok_foreground"), Some("1"));
    assert!(
        number(&out, "foreground_boosts") > 0.0,
        "the foreground cgroup's tasks were boosted"
    );
    assert!(
        number(&out, "scheduled") > 0.0,
        "user space scheduled tasks"
    );
    assert_eq!(field(&out, "state_after"), Some("enabled"), "never ejected");
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}
