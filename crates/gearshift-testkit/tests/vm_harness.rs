//! The harness itself, in a real VM. Ignored by plain `cargo test` (they boot a kernel under
//! TCG); `tools/test.sh` runs them with `--ignored`.

use std::time::Duration;

use gearshift_testkit::{run_in_vm, HarnessError, VmConfig, VmError};

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn guest_kernel_has_sched_ext_disabled_until_a_scheduler_attaches() {
    let out = run_in_vm(
        &VmConfig::default(),
        "cat /sys/kernel/sched_ext/state; nproc",
    )
    .unwrap();
    assert_eq!(out.status, 0, "{}", out.output);
    let lines: Vec<&str> = out.output.lines().collect();
    assert_eq!(lines, vec!["disabled", "2"]);
    assert!(out.dmesg.contains("Linux version"), "dmesg was captured");
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn failing_command_status_and_output_come_back() {
    let cfg = VmConfig {
        cpus: 4,
        memory_mib: 1024,
        numa_nodes: 2,
        ..VmConfig::default()
    };
    let out = run_in_vm(
        &cfg,
        "ls /sys/devices/system/node | grep -c '^node'; echo oops >&2; exit 3",
    )
    .unwrap();
    assert_eq!(out.status, 3);
    assert!(!out.success());
    assert_eq!(
        out.output, "2\noops\n",
        "two NUMA nodes, stderr captured too"
    );
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn a_vm_that_cannot_boot_in_time_is_reported_not_waited_for() {
    let cfg = VmConfig {
        boot_timeout: Duration::from_secs(1),
        ..VmConfig::default()
    };
    let started = std::time::Instant::now();
    let err = run_in_vm(&cfg, "true").unwrap_err();
    assert!(
        matches!(err, HarnessError::Vm(VmError::NoBoot { .. })),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}
