//! gearshiftd under test: its own config, state and runtime directories, a fake sysfs and the
//! scheduler double (scheduler_double.py).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::{kill, open_tempdir, repo_root, workspace_bin, TestBus};

/// How the daemon's world looks.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The fake kernel has sched_ext.
    pub supported: bool,
    /// Contents of config.toml, or none for the defaults (scheduler path and quick restart
    /// timings are set for tests unless the text sets them).
    pub config: Option<String>,
    /// Use the real scx_gearshift at this path instead of the double (VM tests).
    pub real_scheduler: Option<PathBuf>,
    /// The default config's lines before its first table (top-level keys, `[[profiles]]`…);
    /// none: `autostart = false`. Ignored when `config` is given.
    pub top_level: Option<String>,
    /// The default config's `[scheduler] start_timeout_ms`.
    pub start_timeout_ms: u32,
    /// Lines added to the default config's `[restart]` table (e.g. `known_good_after_s = 1`);
    /// ignored when `config` is given.
    pub restart_extra: String,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            supported: true,
            config: None,
            real_scheduler: None,
            top_level: None,
            start_timeout_ms: 10_000,
            restart_extra: String::new(),
        }
    }
}

/// Steering and observing the scheduler double.
pub struct Double {
    dir: PathBuf,
}

impl Double {
    /// Creates a steering file (fail-start, crash, refuse, hang-start).
    pub fn set(&self, flag: &str) {
        std::fs::write(self.dir.join(flag), b"").expect("write double flag");
    }

    /// Makes `mode` fail whenever it is in effect (at start or after a change); None: no mode.
    pub fn fail_in_mode(&self, mode: Option<&str>) {
        match mode {
            Some(mode) => std::fs::write(self.dir.join("fail-mode"), mode).expect("fail-mode"),
            None => self.clear("fail-mode"),
        }
    }

    pub fn clear(&self, flag: &str) {
        let _ = std::fs::remove_file(self.dir.join(flag));
    }

    /// The double's current pid, as it wrote it.
    pub fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.dir.join("pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The arguments of its last start.
    pub fn args(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("args"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// The control requests it received, one JSON object each.
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("requests.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

pub struct DaemonUnderTest {
    dir: TempDir,
    child: Option<Child>,
    bus_address: String,
    sysfs_root: PathBuf,
    /// procfs and the cgroup v2 hierarchy: fake trees (see [`DaemonUnderTest::fake_process`])
    /// unless the real scheduler runs.
    procfs_root: PathBuf,
    cgroupfs_root: PathBuf,
    pub double: Double,
}

const TEST_TIMINGS: &str = r#"
[restart]
max_failures = 3
window_s = 30
initial_backoff_ms = 200
max_backoff_ms = 800
"#;

impl DaemonUnderTest {
    /// Starts gearshiftd on `bus` and waits until it owns its name.
    pub fn start(bus: &TestBus, setup: Setup) -> Self {
        let dir = open_tempdir();
        let sysfs = dir.path().join("sys");
        std::fs::create_dir_all(sysfs.join("kernel")).expect("sysfs");
        if setup.supported {
            std::fs::create_dir_all(sysfs.join("kernel/sched_ext/root")).expect("sched_ext");
            std::fs::write(sysfs.join("kernel/sched_ext/state"), "disabled\n").expect("state");
        }
        let double_dir = dir.path().join("double");
        std::fs::create_dir_all(&double_dir).expect("double dir");
        let scheduler = setup
            .real_scheduler
            .clone()
            .unwrap_or_else(|| repo_root().join("crates/gearshift-testbus/scheduler_double.py"));
        let config = setup.config.unwrap_or_else(|| {
            format!(
                "{}\n[scheduler]\npath = {:?}\nstart_timeout_ms = {}\n{TEST_TIMINGS}{}\n",
                setup.top_level.as_deref().unwrap_or("autostart = false"),
                scheduler.display().to_string(),
                setup.start_timeout_ms,
                setup.restart_extra
            )
        });
        std::fs::write(dir.path().join("config.toml"), config).expect("config");
        let real = setup.real_scheduler.is_some();
        let (procfs_root, cgroupfs_root) = if real {
            (PathBuf::from("/proc"), PathBuf::from("/sys/fs/cgroup"))
        } else {
            let fake = (dir.path().join("proc"), dir.path().join("cgroup"));
            std::fs::create_dir_all(&fake.0).expect("fake procfs");
            std::fs::create_dir_all(&fake.1).expect("fake cgroupfs");
            fake
        };
        let mut this = Self {
            dir,
            child: None,
            bus_address: bus.address().to_owned(),
            // The real scheduler talks to the real kernel.
            sysfs_root: if setup.real_scheduler.is_some() {
                PathBuf::from("/sys")
            } else {
                sysfs
            },
            procfs_root,
            cgroupfs_root,
            double: Double { dir: double_dir },
        };
        this.spawn();
        this
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    fn spawn(&mut self) {
        let dir = self.dir.path();
        let sysfs = &self.sysfs_root;
        let mut cmd = Command::new(workspace_bin("gearshiftd"));
        cmd.arg("--config")
            .arg(dir.join("config.toml"))
            .arg("--state-dir")
            .arg(dir.join("state"))
            .arg("--runtime-dir")
            .arg(dir.join("run"))
            .arg("--sysfs-root")
            .arg(sysfs)
            .arg("--procfs-root")
            .arg(&self.procfs_root)
            .arg("--cgroupfs-root")
            .arg(&self.cgroupfs_root)
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.bus_address)
            .env("GEARSHIFT_DOUBLE_DIR", self.double.dir.as_path())
            .env("GEARSHIFT_DOUBLE_SYSFS", sysfs)
            .env("RUST_LOG", "debug")
            .env_remove("JOURNAL_STREAM")
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(dir.join("gearshiftd.log"))
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
            );
        self.child = Some(cmd.spawn().expect("start gearshiftd"));
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let owned = Command::new("busctl")
                .arg(format!("--address={}", self.bus_address))
                .args(["status", gearshift_dbus::BUS_NAME])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if owned {
                break;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "gearshiftd exited ({status}) before owning its name:\n{}",
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "gearshiftd did not own its name:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sets what the fake kernel says about sched_ext ("enabled" with gearshift's ops, or
    /// "disabled"), as the kernel does when it ends or re-attaches a scheduler on its own.
    pub fn set_kernel_state(&self, state: &str) {
        let dir = self.sysfs_root.join("kernel/sched_ext");
        std::fs::write(dir.join("state"), format!("{state}\n")).expect("sched_ext state");
        let ops = if state == "enabled" {
            "gearshift\n"
        } else {
            ""
        };
        std::fs::write(dir.join("root/ops"), ops).expect("sched_ext ops");
    }

    /// Makes the fake procfs show process `pid` of user `uid` in the cgroup v2 `cgroup` (an
    /// absolute path such as "/user.slice/app-x.scope"), created in the fake cgroupfs; returns
    /// the cgroup's id (its directory's inode number), what the scheduler should be told.
    pub fn fake_process(&self, pid: u32, uid: u32, cgroup: &str) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let proc_dir = self.procfs_root.join(pid.to_string());
        std::fs::create_dir_all(&proc_dir).expect("fake process");
        std::fs::write(
            proc_dir.join("status"),
            format!("Name:\tfake\nPid:\t{pid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
        )
        .expect("fake status");
        std::fs::write(proc_dir.join("cgroup"), format!("0::{cgroup}\n")).expect("fake cgroup");
        let dir = self.cgroupfs_root.join(cgroup.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).expect("fake cgroup dir");
        std::fs::metadata(&dir).expect("fake cgroup dir").ino()
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("gearshiftd.log")).unwrap_or_default()
    }

    /// Stops the daemon with SIGTERM (as systemd does) and waits; returns its exit status.
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        child.wait().ok()
    }

    /// Kills the daemon without warning (a crash).
    pub fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill(&mut child);
        }
    }

    /// Starts the daemon again with the same directories (after stop or crash).
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// True while the daemon process lives.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(Child::try_wait), Some(Ok(None)))
    }
}

impl Drop for DaemonUnderTest {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill(&mut child);
        }
        // The double dies with its parent (PR_SET_PDEATHSIG); make sure in any case.
        if let Some(pid) = self.double.pid() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        if std::thread::panicking() {
            eprintln!("---- gearshiftd log ----\n{}", self.log());
        }
    }
}
