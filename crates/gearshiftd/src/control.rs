//! Requests to the running scheduler's control socket, off the async runtime's thread.

use std::path::PathBuf;
use std::time::Duration;

use gearshift_types::control::{Client, ProtocolError};
use gearshift_types::{Request, Response, Settings, Stats};

/// Long enough for an emulated, overloaded machine; the scheduler answers between dispatches.
const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Control {
    socket: PathBuf,
}

impl Control {
    pub fn new(socket: PathBuf) -> Self {
        Self { socket }
    }

    async fn call(&self, request: Request) -> Result<Response, ProtocolError> {
        let socket = self.socket.clone();
        tokio::task::spawn_blocking(move || Client::connect(&socket, TIMEOUT)?.request(&request))
            .await
            .map_err(|e| ProtocolError::Io(std::io::Error::other(e)))?
    }

    async fn settings_of(&self, request: Request) -> Result<Settings, ProtocolError> {
        match self.call(request).await? {
            Response::Settings { settings } => Ok(settings),
            other => Err(unexpected(other)),
        }
    }

    pub async fn settings(&self) -> Result<Settings, ProtocolError> {
        self.settings_of(Request::GetSettings).await
    }

    /// Applies both settings at once; acknowledged only once in effect.
    pub async fn apply(&self, settings: Settings) -> Result<Settings, ProtocolError> {
        self.settings_of(Request::SetSettings { settings }).await
    }

    /// Makes the scheduler favour the tasks of this cgroup v2 (0: none); returns the one in
    /// effect.
    pub async fn set_foreground(&self, cgroup_id: u64) -> Result<u64, ProtocolError> {
        match self.call(Request::SetForeground { cgroup_id }).await? {
            Response::Foreground { cgroup_id } => Ok(cgroup_id),
            other => Err(unexpected(other)),
        }
    }

    pub async fn stats(&self) -> Result<Stats, ProtocolError> {
        match self.call(Request::GetStats).await? {
            Response::Stats { stats } => Ok(*stats),
            other => Err(unexpected(other)),
        }
    }
}

fn unexpected(response: Response) -> ProtocolError {
    ProtocolError::Refused(format!("unexpected answer {response:?}"))
}
