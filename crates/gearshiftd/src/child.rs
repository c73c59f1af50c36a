//! The scheduler as a child process: spawn, log its output, learn why it ended, stop it.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
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

/// A started scheduler. Dropping it does not stop the process; [`RunningChild::terminate`] does.
pub struct RunningChild {
    pub pid: u32,
    pub generation: u64,
    exit: watch::Receiver<Option<String>>,
}

impl RunningChild {
    /// Starts the scheduler with `settings`. `on_exit` runs once the process has ended and its
    /// output is read, with the generation and the reason it ended.
    pub fn spawn(
        spec: &ChildSpec,
        settings: Settings,
        generation: u64,
        on_exit: impl FnOnce(u64, String) + Send + 'static,
    ) -> std::io::Result<Self> {
        let _ = std::fs::remove_file(&spec.control_socket);
        let mut cmd = Command::new(&spec.path);
        cmd.arg("--mode")
            .arg(settings.mode.as_str())
            .arg("--preemption")
            .arg(settings.preemption.to_string())
            .arg("--control-socket")
            .arg(&spec.control_socket)
            .args(&spec.extra_args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: prctl is async-signal-safe. If the daemon dies, the scheduler goes too
        // (it must not run unsupervised); the daemon spawns from its only thread.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
            });
        }
        let mut child = cmd.spawn()?;
        let pid = child.id().unwrap_or(0);
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let out = tokio::spawn(log_lines(stdout));
            let err = tokio::spawn(log_lines(stderr));
            let status = child.wait().await;
            let last_out = out.await.ok().flatten();
            let last_err = err.await.ok().flatten();
            let reason = describe_exit(status.ok(), last_err.or(last_out));
            let _ = tx.send(Some(reason.clone()));
            on_exit(generation, reason);
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

/// Logs each line of the child's output; returns the line that best says why it ended: the
/// kernel's exit report ("EXIT: ..."), else the last line.
async fn log_lines(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> Option<String> {
    let mut lines = BufReader::new(pipe?).lines();
    let mut exit_line = None;
    let mut last = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let line = line.trim_end().to_owned();
        if line.is_empty() {
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
