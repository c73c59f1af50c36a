//! What can go wrong, as sentences, and the exit code each failure maps to.

use std::fmt;
use std::process::ExitCode;

use gearshift_dbus::{Error as DbusError, BUS_NAME};
use gearshift_i18n::{fill_named, gettext};

use gearshiftctl::cli::BusKind;

/// Exit codes scripts can rely on (also listed in `--help` and the README).
pub mod code {
    /// Success.
    pub const OK: u8 = 0;
    /// The daemon refused the request or the call failed.
    pub const FAILED: u8 = 1;
    /// Usage error (clap's own code).
    pub const USAGE: u8 = 2;
    /// gearshiftd could not be reached.
    pub const UNREACHABLE: u8 = 3;
    /// The caller is not allowed to do this.
    pub const ACCESS_DENIED: u8 = 4;
    /// The scheduler is not running, or the kernel has no sched_ext.
    pub const NOT_RUNNING: u8 = 5;
}

/// Bus errors that mean nobody owns (or can be started for) the daemon's name.
const UNREACHABLE_NAMES: &[&str] = &[
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
];
const SPAWN_PREFIX: &str = "org.freedesktop.DBus.Error.Spawn.";

/// Display is written out below rather than with `#[error]`: the sentences are translated.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The bus itself could not be reached.
    Connect {
        bus: BusKind,
        #[source]
        source: zbus::Error,
    },
    /// A call on the daemon failed.
    Daemon { error: DbusError, bus: BusKind },
    /// gearshiftd left the bus while we were listening to it.
    Gone(BusKind),
    /// The daemon answered with something the contract does not allow.
    Protocol(String),
    /// The command ended without the result it was for (a check cancelled, none kept yet):
    /// the sentence, already in the reader's language.
    Unfinished(String),
    /// Writing the output failed (a closed pipe is not reported: see `is_closed_pipe`).
    Output(#[from] std::io::Error),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            CliError::Connect { bus, source } => fill_named(
                &gettext("cannot connect to the {bus} bus: {error}"),
                &[("bus", &bus.to_string()), ("error", &source.to_string())],
            ),
            CliError::Daemon { error, bus } => daemon_sentence(error, bus),
            CliError::Gone(bus) => fill_named(
                &gettext("gearshiftd left the {bus} bus"),
                &[("bus", &bus.to_string())],
            ),
            CliError::Protocol(detail) => fill_named(
                &gettext("unexpected answer from gearshiftd: {detail}"),
                &[("detail", detail)],
            ),
            CliError::Unfinished(sentence) => sentence.clone(),
            CliError::Output(e) => fill_named(
                &gettext("cannot write the output: {error}"),
                &[("error", &e.to_string())],
            ),
        };
        f.write_str(&text)
    }
}

impl CliError {
    pub fn daemon(error: impl Into<DbusError>, bus: BusKind) -> Self {
        CliError::Daemon {
            error: error.into(),
            bus,
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Connect { .. } | CliError::Gone(_) => code::UNREACHABLE,
            CliError::Protocol(_) | CliError::Unfinished(_) => code::FAILED,
            CliError::Output(_) if self.is_closed_pipe() => code::OK,
            CliError::Output(_) => code::FAILED,
            CliError::Daemon { error, .. } => daemon_exit_code(error),
        }
    }

    /// The reader went away (`gearshiftctl stats --watch | head -3`): stop quietly.
    pub fn is_closed_pipe(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    pub fn to_exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit_code())
    }
}

/// Whether the error says the daemon's name has no owner on the bus.
fn is_unreachable(error: &DbusError) -> bool {
    match error {
        DbusError::Other { name, .. } => {
            UNREACHABLE_NAMES.contains(&name.as_str()) || name.starts_with(SPAWN_PREFIX)
        }
        _ => false,
    }
}

pub fn daemon_exit_code(error: &DbusError) -> u8 {
    match error {
        DbusError::AccessDenied(_) => code::ACCESS_DENIED,
        DbusError::NotRunning(_) | DbusError::Unsupported(_) => code::NOT_RUNNING,
        e if is_unreachable(e) => code::UNREACHABLE,
        _ => code::FAILED,
    }
}

/// The error as one or two sentences for people. The daemon's messages stay as it wrote them
/// (in English); what gearshiftctl adds is translated.
fn daemon_sentence(error: &DbusError, bus: &BusKind) -> String {
    if is_unreachable(error) {
        return fill_named(
            &gettext("gearshiftd is not running (no {name} on the {bus} bus)"),
            &[("name", BUS_NAME), ("bus", &bus.to_string())],
        );
    }
    let message = error.message().trim();
    let failed = |name: &str| fill_named(&gettext("the call failed ({error})"), &[("error", name)]);
    match error {
        DbusError::AccessDenied(_) => {
            let message = if message.is_empty() {
                gettext("access denied")
            } else {
                message.to_owned()
            };
            let hint = gettext("hint: run as root or from an active local session");
            format!("{message}\n{hint}")
        }
        DbusError::InvalidProfile(_) if !message.is_empty() => {
            let hint = gettext("hint: `gearshiftctl list-profiles` shows the profiles");
            format!("{message}\n{hint}")
        }
        DbusError::Other { name, .. } if message.is_empty() => failed(name),
        DbusError::Other { .. } => fill_named(
            &gettext("the call failed: {message}"),
            &[("message", message)],
        ),
        _ if message.is_empty() => failed(&error.dbus_name()),
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn other(name: &str) -> DbusError {
        DbusError::Other {
            name: name.into(),
            message: "m".into(),
        }
    }

    #[test]
    fn exit_codes_follow_the_error() {
        let cases = [
            (DbusError::InvalidProfile("x".into()), 1),
            (DbusError::InvalidMode("x".into()), 1),
            (DbusError::Failed("x".into()), 1),
            (DbusError::LimitExceeded("x".into()), 1),
            (DbusError::InvalidArgs("x".into()), 1),
            (DbusError::AccessDenied("x".into()), 4),
            (DbusError::NotRunning("x".into()), 5),
            (DbusError::Unsupported("x".into()), 5),
            (other("org.freedesktop.DBus.Error.ServiceUnknown"), 3),
            (other("org.freedesktop.DBus.Error.NameHasNoOwner"), 3),
            (other("org.freedesktop.DBus.Error.Spawn.ChildExited"), 3),
            (other("org.freedesktop.DBus.Error.NoReply"), 1),
            (other("org.freedesktop.zbus.Error"), 1),
        ];
        for (error, want) in cases {
            let name = error.dbus_name();
            assert_eq!(
                CliError::daemon(error, BusKind::System).exit_code(),
                want,
                "{name}"
            );
        }
        assert_eq!(CliError::Gone(BusKind::System).exit_code(), 3);
        let connect = CliError::Connect {
            bus: BusKind::System,
            source: zbus::Error::Address("no bus".into()),
        };
        assert_eq!(connect.exit_code(), 3);
        let pipe = CliError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(pipe.is_closed_pipe());
        assert_eq!(pipe.exit_code(), 0);
    }

    #[test]
    fn zbus_errors_from_the_wire_map_too() {
        let fdo = zbus::fdo::Error::AccessDenied("polkit said no".into());
        assert_eq!(CliError::daemon(fdo, BusKind::System).exit_code(), 4);
        let fdo = zbus::fdo::Error::ServiceUnknown("gone".into());
        assert_eq!(CliError::daemon(fdo, BusKind::Session).exit_code(), 3);
    }

    #[test]
    fn sentences_carry_hints() {
        let denied = CliError::daemon(DbusError::AccessDenied(String::new()), BusKind::System);
        assert_eq!(
            denied.to_string(),
            "access denied\nhint: run as root or from an active local session"
        );
        let absent = CliError::daemon(
            other("org.freedesktop.DBus.Error.ServiceUnknown"),
            BusKind::System,
        );
        assert_eq!(
            absent.to_string(),
            "gearshiftd is not running (no io.github.gearshift.Scheduler1 on the system bus)"
        );
        let refused = CliError::daemon(
            DbusError::NotRunning("the scheduler is not running".into()),
            BusKind::System,
        );
        assert_eq!(refused.to_string(), "the scheduler is not running");
        let odd = CliError::daemon(other("org.example.Odd"), BusKind::System);
        assert_eq!(odd.to_string(), "the call failed: m");
    }
}
