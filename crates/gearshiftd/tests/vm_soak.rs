//! The 3-minute soak (`cargo xtask soak` runs the long one): gearshiftd and scx_gearshift
//! under rotating load, D-Bus switches, CPU hotplug and a suspend cycle a minute on 4 vCPUs;
//! no ejections, no page faults, no growth.

use std::time::Duration;

use gearshift_testbus::{repo_root, workspace_bin};
use gearshift_testkit::soak::{self, Binaries, SoakConfig};

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn three_minute_soak() {
    let cache = gearshift_testkit::cache::Cache::from_env();
    let kernel =
        gearshift_testkit::kernel::obtain(&cache, &gearshift_testkit::kernel::Request::from_env())
            .expect("kernel");
    let bins = Binaries {
        scheduler: workspace_bin("scx_gearshift"),
        daemon: workspace_bin("gearshiftd"),
    };
    let run = tempfile::Builder::new()
        .prefix("vm-soak-")
        .tempdir_in(repo_root().join("target"))
        .expect("run dir");
    let cfg = SoakConfig {
        duration: Duration::from_secs(180),
        cpus: 4,
        memory_mib: 2048,
    };
    let out = soak::run(&cache, &kernel, &bins, &cfg, run.path()).expect("soak");
    let problems = soak::verdict(&out);
    assert!(out.success(), "the soak script failed:\n{}", out.output);
    assert!(problems.is_empty(), "{problems:?}\n{}", out.output);
}
