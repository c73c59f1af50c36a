//! The control protocol between `gearshiftd` and `scx_gearshift`: one JSON object per line over
//! a Unix stream socket. Every request gets exactly one response; a change is acknowledged only
//! once it is in effect in the running scheduler.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::mode::Mode;
use crate::stats::Stats;

/// Longest line either side accepts; longer input is an error, not a buffer to grow.
pub const MAX_LINE: usize = 64 * 1024;

/// The live settings of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub mode: Mode,
    /// Waking interactive tasks may preempt non-interactive ones.
    pub preemption: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            mode: Mode::default(),
            preemption: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "kebab-case")]
pub enum Request {
    /// Switch mode and preemption together (one round trip, no state in between); answered
    /// with the settings in effect afterwards.
    SetSettings { settings: Settings },
    /// Favour the tasks of one cgroup v2 (the focused app's scope) and of its descendants:
    /// `cgroup_id` is the cgroup's id, the inode number of its directory under /sys/fs/cgroup
    /// (what `bpf_get_current_cgroup_id()` returns); 0 favours no one. Answered with the
    /// foreground in effect afterwards.
    SetForeground { cgroup_id: u64 },
    /// The settings in effect.
    GetSettings,
    /// A stats snapshot.
    GetStats,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "response", rename_all = "kebab-case")]
pub enum Response {
    Settings {
        settings: Settings,
    },
    /// The foreground cgroup in effect (0: none).
    Foreground {
        cgroup_id: u64,
    },
    Stats {
        stats: Box<Stats>,
    },
    Error {
        message: String,
    },
}

#[derive(Debug, Error)]
pub enum ProtocolError {
    #[error("control socket I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed control message: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error("control message longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("the scheduler closed the control connection")]
    Closed,
    #[error("the scheduler refused: {0}")]
    Refused(String),
}

/// Writes `msg` as one line.
pub fn write_message<T: Serialize>(out: &mut impl Write, msg: &T) -> Result<(), ProtocolError> {
    let mut line = serde_json::to_vec(msg)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()?;
    Ok(())
}

/// Reads one line and parses it; `Ok(None)` at end of stream.
pub fn read_message<T: for<'de> Deserialize<'de>>(
    input: &mut impl BufRead,
) -> Result<Option<T>, ProtocolError> {
    let mut line = Vec::new();
    let n = std::io::Read::take(&mut *input, MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.len() > MAX_LINE {
        return Err(ProtocolError::TooLong);
    }
    Ok(Some(serde_json::from_slice(&line)?))
}

/// A blocking client of the control socket.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Client {
    pub fn connect(path: &Path, timeout: Duration) -> Result<Self, ProtocolError> {
        let stream = UnixStream::connect(path)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Self {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
        })
    }

    pub fn request(&mut self, request: &Request) -> Result<Response, ProtocolError> {
        write_message(&mut self.writer, request)?;
        match read_message(&mut self.reader)? {
            Some(Response::Error { message }) => Err(ProtocolError::Refused(message)),
            Some(response) => Ok(response),
            None => Err(ProtocolError::Closed),
        }
    }

    /// Sets the foreground cgroup (0: none); returns the one in effect.
    pub fn set_foreground(&mut self, cgroup_id: u64) -> Result<u64, ProtocolError> {
        match self.request(&Request::SetForeground { cgroup_id })? {
            Response::Foreground { cgroup_id } => Ok(cgroup_id),
            other => Err(ProtocolError::Refused(format!(
                "unexpected answer {other:?}"
            ))),
        }
    }

    pub fn stats(&mut self) -> Result<Stats, ProtocolError> {
        match self.request(&Request::GetStats)? {
            Response::Stats { stats } => Ok(*stats),
            other => Err(ProtocolError::Refused(format!(
                "unexpected answer {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_have_a_stable_wire_form() {
        let mut buf = Vec::new();
        let request = Request::SetSettings {
            settings: Settings {
                mode: Mode::Interactive,
                preemption: true,
            },
        };
        write_message(&mut buf, &request).unwrap();
        assert_eq!(
            buf,
            b"{\"request\":\"set-settings\",\"settings\":{\"mode\":\"interactive\",\"preemption\":true}}\n"
        );
        let back: Request = read_message(&mut &buf[..]).unwrap().unwrap();
        assert_eq!(back, request);
    }

    #[test]
    fn set_settings_carries_both() {
        let line = b"{\"request\":\"set-settings\",\"settings\":{\"mode\":\"fifo\",\"preemption\":false}}\n";
        let request: Request = read_message(&mut &line[..]).unwrap().unwrap();
        assert_eq!(
            request,
            Request::SetSettings {
                settings: Settings {
                    mode: Mode::Fifo,
                    preemption: false
                }
            }
        );
        let half = b"{\"request\":\"set-settings\",\"settings\":{\"mode\":\"fifo\"}}\n";
        assert!(read_message::<Request>(&mut &half[..]).is_err());
    }

    #[test]
    fn set_foreground_has_a_stable_wire_form() {
        let mut buf = Vec::new();
        write_message(&mut buf, &Request::SetForeground { cgroup_id: 1234 }).unwrap();
        assert_eq!(
            buf,
            b"{\"request\":\"set-foreground\",\"cgroup_id\":1234}\n"
        );
        let mut answer = Vec::new();
        write_message(&mut answer, &Response::Foreground { cgroup_id: 0 }).unwrap();
        assert_eq!(answer, b"{\"response\":\"foreground\",\"cgroup_id\":0}\n");
        let negative = b"{\"request\":\"set-foreground\",\"cgroup_id\":-1}\n";
        assert!(read_message::<Request>(&mut &negative[..]).is_err());
        let missing = b"{\"request\":\"set-foreground\"}\n";
        assert!(read_message::<Request>(&mut &missing[..]).is_err());
    }

    #[test]
    fn bad_input_is_an_error_not_a_guess() {
        let unknown_mode =
            b"{\"request\":\"set-settings\",\"settings\":{\"mode\":\"warp\",\"preemption\":true}}\n";
        assert!(matches!(
            read_message::<Request>(&mut &unknown_mode[..]),
            Err(ProtocolError::Malformed(_))
        ));
        let wrong_type =
            b"{\"request\":\"set-settings\",\"settings\":{\"mode\":7,\"preemption\":true}}\n";
        assert!(read_message::<Request>(&mut &wrong_type[..]).is_err());
        let wrong_bool =
            b"{\"request\":\"set-settings\",\"settings\":{\"mode\":\"fifo\",\"preemption\":\"yes\"}}\n";
        assert!(read_message::<Request>(&mut &wrong_bool[..]).is_err());
        // A setting alone is no request: SetSettings is the one setter.
        let removed = b"{\"request\":\"set-mode\",\"mode\":\"fifo\"}\n";
        assert!(read_message::<Request>(&mut &removed[..]).is_err());
        let long = vec![b' '; MAX_LINE + 10];
        assert!(matches!(
            read_message::<Request>(&mut &long[..]),
            Err(ProtocolError::TooLong)
        ));
        assert!(read_message::<Request>(&mut &b""[..]).unwrap().is_none());
    }

    #[test]
    fn client_and_server_talk_over_a_socket_pair() {
        let (a, b) = UnixStream::pair().unwrap();
        let server = std::thread::spawn(move || {
            let mut reader = BufReader::new(b.try_clone().unwrap());
            let mut writer = b;
            let req: Request = read_message(&mut reader).unwrap().unwrap();
            assert_eq!(req, Request::GetStats);
            let stats = Stats {
                nr_queued: 42,
                ..Stats::default()
            };
            write_message(
                &mut writer,
                &Response::Stats {
                    stats: Box::new(stats),
                },
            )
            .unwrap();
            let _: Request = read_message(&mut reader).unwrap().unwrap();
            write_message(
                &mut writer,
                &Response::Error {
                    message: "nope".into(),
                },
            )
            .unwrap();
            let req: Request = read_message(&mut reader).unwrap().unwrap();
            assert_eq!(req, Request::SetForeground { cgroup_id: 77 });
            write_message(&mut writer, &Response::Foreground { cgroup_id: 77 }).unwrap();
        });
        let mut client = Client {
            writer: a.try_clone().unwrap(),
            reader: BufReader::new(a),
        };
        assert_eq!(client.stats().unwrap().nr_queued, 42);
        let err = client.request(&Request::GetSettings).unwrap_err();
        assert!(matches!(err, ProtocolError::Refused(ref m) if m == "nope"));
        assert_eq!(client.set_foreground(77).unwrap(), 77);
        server.join().unwrap();
    }
}
