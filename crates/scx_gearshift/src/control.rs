//! The control socket: `gearshiftd` (or anyone with access to the socket) sets the mode and
//! the foreground app, and reads stats. Connections are served on their own threads; every
//! request is handed to the scheduling loop, which answers after applying it, so an
//! acknowledgement means "in effect".

use std::io::BufReader;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::time::Duration;

use gearshift_types::control::{read_message, write_message, ProtocolError};
use gearshift_types::{Request, Response};

/// How long a connection waits for the scheduling loop to answer before giving up.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

type Envelope = (Request, SyncSender<Response>);

/// Stack of the control threads. The process locks all its memory (mlockall), so every
/// thread's whole stack is resident: keep them small; they only parse one line at a time.
const CONTROL_STACK: usize = 256 * 1024;

/// The listening socket; requests arrive through [`ControlServer::serve_pending`].
pub struct ControlServer {
    path: PathBuf,
    requests: Receiver<Envelope>,
}

impl ControlServer {
    /// Binds `path` (replacing a stale socket), readable and writable by the owner only.
    pub fn bind(path: &Path) -> std::io::Result<Self> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let (tx, requests) = mpsc::channel();
        std::thread::Builder::new()
            .stack_size(CONTROL_STACK)
            .name("gs-control".into())
            .spawn(move || accept_loop(listener, tx))?;
        Ok(Self {
            path: path.to_owned(),
            requests,
        })
    }

    /// Answers every request waiting, with `handle`; never blocks.
    pub fn serve_pending(&self, mut handle: impl FnMut(&Request) -> Response) {
        while let Ok((request, reply)) = self.requests.try_recv() {
            // The client may have given up; nothing to do then.
            let _ = reply.send(handle(&request));
        }
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn accept_loop(listener: UnixListener, tx: Sender<Envelope>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let tx = tx.clone();
        let spawned = std::thread::Builder::new()
            .stack_size(CONTROL_STACK)
            .name("gs-control-conn".into())
            .spawn(move || serve_connection(stream, tx));
        if let Err(e) = spawned {
            tracing::warn!("control: cannot serve a connection: {e}");
        }
    }
}

fn serve_connection(stream: UnixStream, tx: Sender<Envelope>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let response = match read_message::<Request>(&mut reader) {
            Ok(None) => return,
            Ok(Some(request)) => forward(&tx, request),
            // Garbage gets an answer saying so; the connection stays usable.
            Err(ProtocolError::Malformed(e)) => Response::Error {
                message: format!("malformed request: {e}"),
            },
            Err(e) => {
                let _ = write_message(
                    &mut writer,
                    &Response::Error {
                        message: e.to_string(),
                    },
                );
                return;
            }
        };
        if write_message(&mut writer, &response).is_err() {
            return;
        }
    }
}

fn forward(tx: &Sender<Envelope>, request: Request) -> Response {
    let (reply_tx, reply_rx) = mpsc::sync_channel(1);
    if tx.send((request, reply_tx)).is_err() {
        return Response::Error {
            message: "the scheduler is shutting down".into(),
        };
    }
    reply_rx
        .recv_timeout(ANSWER_TIMEOUT)
        .unwrap_or_else(|_| Response::Error {
            message: "the scheduler did not answer in time".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gearshift_types::control::Client;
    use gearshift_types::{Mode, Settings, Stats};
    use std::io::Write;

    fn serve_until(server: &ControlServer, done: &std::sync::atomic::AtomicBool) {
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            server.serve_pending(|req| match req {
                Request::GetStats => Response::Stats {
                    stats: Box::new(Stats {
                        nr_queued: 7,
                        ..Stats::default()
                    }),
                },
                Request::SetSettings { settings } => Response::Settings {
                    settings: *settings,
                },
                Request::SetForeground { cgroup_id } => Response::Foreground {
                    cgroup_id: *cgroup_id,
                },
                Request::GetSettings => Response::Settings {
                    settings: Settings::default(),
                },
            });
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn requests_reach_the_loop_and_garbage_is_answered_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ctl.sock");
        let server = ControlServer::bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let loop_done = done.clone();
        let serving = std::thread::spawn(move || {
            serve_until(&server, &loop_done);
            server
        });
        let mut client = Client::connect(&path, Duration::from_secs(5)).unwrap();
        assert_eq!(client.stats().unwrap().nr_queued, 7);
        let asked = Settings {
            mode: Mode::Interactive,
            preemption: false,
        };
        let answer = client
            .request(&Request::SetSettings { settings: asked })
            .unwrap();
        assert_eq!(answer, Response::Settings { settings: asked });
        assert_eq!(client.set_foreground(1234).unwrap(), 1234);

        let mut raw = UnixStream::connect(&path).unwrap();
        raw.write_all(
            b"{\"request\":\"set-settings\",\"settings\":{\"mode\":\"warp\",\"preemption\":true}}\n",
        )
        .unwrap();
        let mut reader = BufReader::new(raw.try_clone().unwrap());
        let answer: Response = read_message(&mut reader).unwrap().unwrap();
        assert!(
            matches!(answer, Response::Error { ref message } if message.contains("warp")),
            "{answer:?}"
        );
        // The same connection still works.
        write_message(&mut raw, &Request::GetStats).unwrap();
        let again: Response = read_message(&mut reader).unwrap().unwrap();
        assert!(matches!(again, Response::Stats { .. }));
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(serving.join().unwrap());
        assert!(!path.exists(), "socket removed on drop");
    }
}
