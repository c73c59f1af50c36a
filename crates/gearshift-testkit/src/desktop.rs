//! What a desktop user feels, as guest shell functions (desktop_guest.sh): periodic tasks with
//! deadlines under background loads, CPU use and wakeups under light load, and the CPU shares
//! nice and cgroup cpu.weight give. `cargo xtask bench` measures with them, and the scheduler's
//! VM tests (vm_desktop, vm_weights) run the same workloads briefly.

/// The shell functions; a guest script defines them by starting with this text.
pub const DESKTOP_GUEST: &str = include_str!("desktop_guest.sh");

#[cfg(test)]
mod tests {
    use super::*;

    /// rt-app's use case as desktop_guest.sh writes it, with PERIODIC_POLICY set or not.
    fn periodic_json(policy: Option<&str>) -> serde_json::Value {
        periodic_json_with(policy, "")
    }

    /// The same, after `setup` (shell) ran.
    fn periodic_json_with(policy: Option<&str>, setup: &str) -> serde_json::Value {
        let mut cmd = std::process::Command::new("bash");
        cmd.arg("-c").arg(format!(
            "{DESKTOP_GUEST}\n{setup}\nRTAPP_NS_PER_LOOP=1234 periodic_json 7"
        ));
        match policy {
            Some(p) => cmd.env("PERIODIC_POLICY", p),
            None => cmd.env_remove("PERIODIC_POLICY"),
        };
        let out = cmd.output().expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout)))
    }

    #[test]
    fn periodic_tasks_are_fair_tasks_unless_real_time_ones_are_asked_for() {
        let fair = periodic_json(None);
        assert_eq!(fair["global"]["default_policy"], "SCHED_OTHER");
        assert_eq!(fair["global"]["duration"], 7);
        assert_eq!(fair["global"]["calibration"], 1234);
        let tasks = fair["tasks"].as_object().expect("tasks");
        assert_eq!(tasks.len(), 3, "{fair}");
        assert!(
            tasks.values().all(|t| t.get("priority").is_none()),
            "{fair}"
        );
        assert_eq!(fair["tasks"]["audio"]["timer"]["period"], 2667);

        let rt = periodic_json(Some("SCHED_FIFO"));
        assert_eq!(rt["global"]["default_policy"], "SCHED_FIFO");
        let tasks = rt["tasks"].as_object().expect("tasks");
        assert!(tasks.values().all(|t| t["priority"] == 50), "{rt}");
        assert_eq!(rt["tasks"]["frame60"]["run"], 3000);
    }

    #[test]
    fn work_sized_under_load_replaces_the_named_durations() {
        let sized = periodic_json_with(None, "PERIODIC_WORK='frame60:1400 audio:95'");
        assert_eq!(sized["tasks"]["frame60"]["run"], 1400);
        assert_eq!(sized["tasks"]["audio"]["run"], 95);
        // A task the sizing left out keeps its named duration; periods never change.
        assert_eq!(sized["tasks"]["frame144"]["run"], 1000);
        assert_eq!(sized["tasks"]["frame60"]["timer"]["period"], 16667);
    }

    /// desktop_suite's `result` lines for `sched` under the hogs and the build, with the loads
    /// and measurements stubbed and sched_ext's state file reading `state`.
    fn suite_results(sched: &str, state: &str) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let state_file = dir.path().join("state");
        std::fs::write(&state_file, format!("{state}\n")).expect("state file");
        let stubs = r#"
load_start() { echo 21 > /tmp/build_times; : > /tmp/build_failures; }
load_stop() { :; }
sched_counters() { :; }
counters_delta() { echo "result $1 $2_nr_latency_wakeups 3"; }
periodic_measure() { echo "result $1 audio_$2_miss_pct 1.5"; }
"#;
        guest_lines(
            dir.path(),
            &format!(
                "{stubs}\nSCHED_EXT_STATE={} DESKTOP_LOADS='hogs build' desktop_suite {sched} 1",
                state_file.display()
            ),
        )
    }

    /// The output lines of `script` after desktop_guest.sh's functions, run in `dir`; the
    /// script must succeed.
    fn guest_lines(dir: &std::path::Path, script: &str) -> Vec<String> {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{DESKTOP_GUEST}\n{script}"))
            .current_dir(dir)
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn an_ejected_scheduler_reports_no_rows_of_eevdf_as_its_own() {
        let attached = suite_results("scx_peer", "enabled");
        assert!(attached.contains(&"result scx_peer audio_hogs_miss_pct 1.5".to_owned()));
        assert!(attached.contains(&"result scx_peer build_s 21".to_owned()));
        assert!(
            !attached.iter().any(|l| l.contains("ejected")),
            "{attached:?}"
        );

        // Ejected (sched_ext disabled again): each load says so instead of reporting rows.
        let ejected = suite_results("scx_peer", "disabled");
        assert_eq!(
            ejected,
            [
                "result scx_peer hogs_ejected 1",
                "result scx_peer build_ejected 1"
            ],
        );

        // EEVDF's own rows are never ejected ones.
        let eevdf = suite_results("eevdf", "disabled");
        assert!(eevdf.contains(&"result eevdf audio_build_miss_pct 1.5".to_owned()));
    }

    /// Runs build_tree for `files` files in `dir`/tree with `path_prefix` put ahead on PATH;
    /// its exit status and stderr.
    fn build_tree_in(dir: &std::path::Path, files: u32, path_prefix: &str) -> (bool, String) {
        let path = std::env::var("PATH").unwrap_or_default();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "{DESKTOP_GUEST}\nPATH={path_prefix}:{path} BUILD_DIR={}/tree N=2 build_tree {files}",
                dir.display()
            ))
            .current_dir(dir)
            .output()
            .expect("bash");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A `gcc` running shell `body`, in a directory of `dir` whose path it returns (for PATH).
    fn gcc_in(dir: &std::path::Path, body: &str) -> String {
        let bin = dir.join("bin");
        std::fs::create_dir(&bin).expect("bin");
        let gcc = bin.join("gcc");
        std::fs::write(&gcc, format!("#!/bin/sh\n{body}\n")).expect("gcc");
        std::fs::set_permissions(&gcc, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        bin.display().to_string()
    }

    #[test]
    fn the_build_tree_is_built_once_untimed_and_left_clean_for_the_timed_builds() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A gcc that logs its runs and leaves the object make asked for.
        let bin = gcc_in(
            dir.path(),
            &format!(
                "echo \"$@\" >> {}/gcc.log\nfor a; do [ \"$prev\" = -o ] && : > \"$a\"; prev=$a; done",
                dir.path().display()
            ),
        );

        let (ok, err) = build_tree_in(dir.path(), 3, &bin);
        assert!(ok, "{err}");
        let log = std::fs::read_to_string(dir.path().join("gcc.log")).expect("gcc ran");
        assert_eq!(log.lines().count(), 3, "every unit compiled once: {log}");
        let tree = dir.path().join("tree");
        assert!(tree.join("Makefile").is_file());
        // Nothing built is left: the first timed build compiles everything, like the others.
        let built: Vec<_> = std::fs::read_dir(&tree)
            .expect("tree")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".o") || n.ends_with(".a"))
            .collect();
        assert!(built.is_empty(), "{built:?}");

        // Generated once per guest: a second call builds nothing.
        let (ok, err) = build_tree_in(dir.path(), 3, &bin);
        assert!(ok, "{err}");
        let log = std::fs::read_to_string(dir.path().join("gcc.log")).expect("gcc log");
        assert_eq!(log.lines().count(), 3);
    }

    #[test]
    fn a_build_tree_that_does_not_build_is_an_error_and_not_marked_ready() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = gcc_in(dir.path(), "echo 'gcc: fatal error' >&2\nexit 1");

        let (ok, err) = build_tree_in(dir.path(), 2, &bin);
        assert!(!ok);
        assert!(err.contains("does not build"), "{err}");
        assert!(!dir.path().join("tree/Makefile").exists());
    }

    /// cpu_use_between's lines for two cpu_use snapshots (name, busy and total jiffies, idle
    /// entries per CPU).
    fn cpu_use_between(before: &str, after: &str) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("u0"), before).expect("snapshot");
        std::fs::write(dir.path().join("u1"), after).expect("snapshot");
        guest_lines(dir.path(), "cpu_use_between u0 u1")
    }

    #[test]
    fn a_cpu_is_in_use_when_busy_half_the_time_or_tasks_went_idle_there_often() {
        let before = "cpu0 0 0 0\ncpu1 0 0 0\ncpu2 0 0 0\n";
        // cpu0 busy; cpu1 a few per cent busy but tasks went idle there a quarter as often as
        // on cpu0; cpu2 as busy, with fewer idle entries: interrupts and a stray spell.
        let used = cpu_use_between(before, "cpu0 90 100 400\ncpu1 3 100 100\ncpu2 3 100 99\n");
        assert_eq!(used, ["cpu0 90.0 400 1", "cpu1 3.0 100 1", "cpu2 3.0 99 0"]);
        // No idle entries anywhere (schedstats off): only the busy share decides.
        let used = cpu_use_between(before, "cpu0 90 100 0\ncpu1 3 100 0\ncpu2 0 100 0\n");
        assert_eq!(used, ["cpu0 90.0 0 1", "cpu1 3.0 0 0", "cpu2 0.0 0 0"]);
    }
}
