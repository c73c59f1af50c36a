//! The scheduler as a child process: spawn, log its output, learn why it ended, stop it.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use gearshift_types::Settings;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::watch;

/// How to start the scheduler.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub path: PathBuf,
    pub extra_args: Vec<String>,
    pub control_socket: PathBuf,
}

/// What the scheduler process tells its supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEvent {
    /// The kernel enabled it (at start and after each restart).
    Attached,
    /// The kernel asked it to restart (its exit code says so); `reason` is the kernel's exit
    /// report.
    Restarting { reason: String },
    /// The process ended.
    Exited { reason: String },
}

/// Receives a child's events with the child's generation.
pub type EventSink = Arc<dyn Fn(u64, ChildEvent) + Send + Sync>;

/// A started scheduler. Dropping it does not stop the process; [`RunningChild::terminate`] does.
pub struct RunningChild {
    pub pid: u32,
    pub generation: u64,
    exit: watch::Receiver<Option<String>>,
}

impl RunningChild {
    /// Starts the scheduler with `settings`; its events go to `sink`, the last being
    /// [`ChildEvent::Exited`] once the process has ended and its output is read.
    pub fn spawn(
        spec: &ChildSpec,
        settings: Settings,
        generation: u64,
        sink: EventSink,
    ) -> std::io::Result<Self> {
        let _ = std::fs::remove_file(&spec.control_socket);
        let mut cmd = Command::new(&spec.path);
        cmd.arg("--mode")
            .arg(settings.mode.as_str())
            .arg("--preemption")
            .arg(settings.preemption.to_string())
            .arg("--control-socket")
            .arg(&spec.control_socket)
            .arg("--report-events")
            .args(&spec.extra_args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let last_cap = last_capability();
        // SAFETY: only prctl calls, which are async-signal-safe, and no allocation. If the
        // daemon dies, the scheduler goes too (it must not run unsupervised); the daemon
        // spawns from its only thread.
        unsafe {
            cmd.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)?;
                limit_capabilities(last_cap)
            });
        }
        let mut child = cmd.spawn()?;
        let pid = child.id().unwrap_or(0);
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let events = {
                let sink = sink.clone();
                move |event| sink(generation, event)
            };
            let out = tokio::spawn(log_lines(stdout, None));
            let err = tokio::spawn(log_lines(stderr, Some(Box::new(events))));
            let status = child.wait().await;
            let last_out = out.await.ok().flatten();
            let last_err = err.await.ok().flatten();
            let reason = describe_exit(status.ok(), last_err.or(last_out));
            let _ = tx.send(Some(reason.clone()));
            sink(generation, ChildEvent::Exited { reason });
        });
        Ok(Self {
            pid,
            generation,
            exit,
        })
    }

    /// The reason it ended, if it has.
    pub fn exit_reason(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Waits for the end; returns its reason.
    pub async fn wait(&mut self) -> String {
        match self.exit.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the scheduler's watcher ended".into(),
        }
    }

    /// SIGTERM, then SIGKILL after `grace`; returns why it ended.
    pub async fn terminate(mut self, grace: Duration) -> String {
        if self.exit_reason().is_none() {
            let pid = Pid::from_raw(self.pid as i32);
            let _ = kill(pid, Signal::SIGTERM);
            if tokio::time::timeout(grace, self.wait()).await.is_err() {
                tracing::warn!("scheduler did not stop within {grace:?}; killing it");
                let _ = kill(pid, Signal::SIGKILL);
            }
        }
        self.wait().await
    }
}

/// What loading and running a sched_ext scheduler needs: bpf() and struct_ops (CAP_BPF,
/// CAP_PERFMON, CAP_SYS_ADMIN), locking its memory (CAP_IPC_LOCK), raising
/// RLIMIT_MEMLOCK (CAP_SYS_RESOURCE) and loading at nice -20 until attached, so that a
/// restart on a loaded machine comes back in time (CAP_SYS_NICE).
pub const SCHEDULER_CAPABILITIES: [u32; 6] = [
    14, // CAP_IPC_LOCK
    21, // CAP_SYS_ADMIN
    23, // CAP_SYS_NICE
    24, // CAP_SYS_RESOURCE
    38, // CAP_PERFMON
    39, // CAP_BPF
];

/// The highest capability number this kernel knows.
fn last_capability() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(40)
}

/// Drops every other capability from the bounding set, so the scheduler (a root process
/// without file capabilities) gets exactly [`SCHEDULER_CAPABILITIES`]. Under systemd the unit's
/// CapabilityBoundingSet has already done it (and CAP_SETPCAP is gone): nothing to drop then.
fn limit_capabilities(last_cap: u32) -> std::io::Result<()> {
    for cap in 0..=last_cap {
        if SCHEDULER_CAPABILITIES.contains(&cap) {
            continue;
        }
        // SAFETY: plain prctl calls with integer arguments.
        let held = unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap as libc::c_ulong, 0, 0, 0) };
        if held == 1
            && unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Marks the scheduler's lifecycle lines (`scx_gearshift --report-events`).
const EVENT_PREFIX: &str = "gearshift-event: ";

type LineEvents = Box<dyn Fn(ChildEvent) + Send>;

/// Logs each line of the child's output and turns its event lines into `events`; returns the
/// line that best says why it ended: the kernel's exit report ("EXIT: ..."), else the last.
async fn log_lines(
    pipe: Option<impl tokio::io::AsyncRead + Unpin>,
    events: Option<LineEvents>,
) -> Option<String> {
    let mut lines = BufReader::new(pipe?).lines();
    let mut exit_line: Option<String> = None;
    let mut last = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let line = line.trim_end().to_owned();
        if line.is_empty() {
            continue;
        }
        if let (Some(name), Some(events)) = (line.strip_prefix(EVENT_PREFIX), &events) {
            match name {
                "attached" => events(ChildEvent::Attached),
                "restarting" => events(ChildEvent::Restarting {
                    reason: exit_line
                        .take()
                        .unwrap_or_else(|| "restart requested".into()),
                }),
                other => tracing::debug!("unknown scheduler event {other:?}"),
            }
            continue;
        }
        tracing::info!(target: "scx_gearshift", "{line}");
        if let Some(at) = line.find("EXIT: ") {
            exit_line = Some(line[at..].to_owned());
        }
        last = Some(line);
    }
    exit_line.or(last)
}

/// A sentence for why the process ended.
pub fn describe_exit(status: Option<ExitStatus>, last_line: Option<String>) -> String {
    if let Some(report) = last_line.as_deref().filter(|l| l.starts_with("EXIT: ")) {
        return report.to_owned();
    }
    let Some(status) = status else {
        return "the scheduler ended (status unknown)".into();
    };
    if let Some(sig) = status.signal() {
        let name = Signal::try_from(sig).map_or_else(|_| sig.to_string(), |s| s.to_string());
        return format!("the scheduler was killed by signal {name}");
    }
    let code = status.code().unwrap_or(-1);
    match last_line {
        Some(line) if code != 0 => format!("the scheduler exited with status {code}: {line}"),
        _ => format!("the scheduler exited with status {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_exit_report_wins() {
        let status = ExitStatus::from_raw(1 << 8);
        assert_eq!(
            describe_exit(Some(status), Some("EXIT: runtime error (stall)".into())),
            "EXIT: runtime error (stall)"
        );
    }

    #[test]
    fn signals_and_codes_are_named() {
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(9)), Some("attached".into())),
            "the scheduler was killed by signal SIGKILL"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(3 << 8)), None),
            "the scheduler exited with status 3"
        );
        assert_eq!(
            describe_exit(Some(ExitStatus::from_raw(1 << 8)), Some("no BPF".into())),
            "the scheduler exited with status 1: no BPF"
        );
    }
}
