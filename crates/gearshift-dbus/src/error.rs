//! Errors of the interface, with the names the contract gives them.

use zbus::message::{Header, Message};
use zbus::names::ErrorName;

const PREFIX: &str = "io.github.gearshift.Error.";

/// An error a call on `io.github.gearshift.Scheduler1` can return. Each carries a sentence
/// meant for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidProfile(String),
    #[error("{0}")]
    InvalidMode(String),
    #[error("{0}")]
    NotRunning(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Failed(String),
    #[error("{0}")]
    LimitExceeded(String),
    /// SetForeground named a process that does not exist or that the caller may not name.
    #[error("{0}")]
    InvalidProcess(String),
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    #[error("{0}")]
    AccessDenied(String),
    /// `org.freedesktop.DBus.Error.InvalidArgs`.
    #[error("{0}")]
    InvalidArgs(String),
    /// Any other error: the bus itself, or a name this contract does not define.
    #[error("{name}: {message}")]
    Other { name: String, message: String },
}

impl Error {
    /// The D-Bus error name.
    pub fn dbus_name(&self) -> String {
        let short = match self {
            Error::InvalidProfile(_) => "InvalidProfile",
            Error::InvalidMode(_) => "InvalidMode",
            Error::NotRunning(_) => "NotRunning",
            Error::Unsupported(_) => "Unsupported",
            Error::Failed(_) => "Failed",
            Error::LimitExceeded(_) => "LimitExceeded",
            Error::InvalidProcess(_) => "InvalidProcess",
            Error::AccessDenied(_) => return "org.freedesktop.DBus.Error.AccessDenied".into(),
            Error::InvalidArgs(_) => return "org.freedesktop.DBus.Error.InvalidArgs".into(),
            Error::Other { name, .. } => return name.clone(),
        };
        format!("{PREFIX}{short}")
    }

    /// The sentence carried by the error.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidProfile(m)
            | Error::InvalidMode(m)
            | Error::NotRunning(m)
            | Error::Unsupported(m)
            | Error::Failed(m)
            | Error::LimitExceeded(m)
            | Error::InvalidProcess(m)
            | Error::AccessDenied(m)
            | Error::InvalidArgs(m) => m,
            Error::Other { message, .. } => message,
        }
    }

    fn from_name(name: &str, message: String) -> Self {
        match name.strip_prefix(PREFIX) {
            Some("InvalidProfile") => Error::InvalidProfile(message),
            Some("InvalidMode") => Error::InvalidMode(message),
            Some("NotRunning") => Error::NotRunning(message),
            Some("Unsupported") => Error::Unsupported(message),
            Some("Failed") => Error::Failed(message),
            Some("LimitExceeded") => Error::LimitExceeded(message),
            Some("InvalidProcess") => Error::InvalidProcess(message),
            _ => match name {
                "org.freedesktop.DBus.Error.AccessDenied" => Error::AccessDenied(message),
                "org.freedesktop.DBus.Error.InvalidArgs" => Error::InvalidArgs(message),
                _ => Error::Other {
                    name: name.to_owned(),
                    message,
                },
            },
        }
    }
}

impl zbus::DBusError for Error {
    fn create_reply(&self, call: &Header<'_>) -> zbus::Result<Message> {
        let name = self.dbus_name();
        let name = ErrorName::try_from(name.as_str())?;
        Message::error(call, name)?.build(&(self.message(),))
    }

    fn name(&self) -> ErrorName<'_> {
        ErrorName::try_from(self.dbus_name()).unwrap_or_else(|_| {
            ErrorName::from_static_str_unchecked("io.github.gearshift.Error.Failed")
        })
    }

    fn description(&self) -> Option<&str> {
        Some(self.message())
    }
}

impl From<zbus::Error> for Error {
    fn from(e: zbus::Error) -> Self {
        match e {
            zbus::Error::MethodError(name, message, _) => {
                Error::from_name(name.as_str(), message.unwrap_or_default())
            }
            zbus::Error::FDO(fdo) => {
                let fdo = *fdo;
                let name = zbus::DBusError::name(&fdo).to_string();
                let message = zbus::DBusError::description(&fdo)
                    .unwrap_or_default()
                    .to_owned();
                Error::from_name(&name, message)
            }
            other => Error::Other {
                name: "org.freedesktop.zbus.Error".into(),
                message: other.to_string(),
            },
        }
    }
}

impl From<zbus::fdo::Error> for Error {
    fn from(e: zbus::fdo::Error) -> Self {
        Error::from(zbus::Error::FDO(Box::new(e)))
    }
}

/// Property writes can only fail with the standard errors.
impl From<Error> for zbus::fdo::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::AccessDenied(m) => zbus::fdo::Error::AccessDenied(m),
            Error::InvalidArgs(m)
            | Error::InvalidProfile(m)
            | Error::InvalidMode(m)
            | Error::InvalidProcess(m) => zbus::fdo::Error::InvalidArgs(m),
            Error::NotRunning(m)
            | Error::Unsupported(m)
            | Error::Failed(m)
            | Error::LimitExceeded(m) => zbus::fdo::Error::Failed(m),
            Error::Other { message, .. } => zbus::fdo::Error::Failed(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let all = [
            Error::InvalidProfile("a".into()),
            Error::InvalidMode("b".into()),
            Error::NotRunning("c".into()),
            Error::Unsupported("d".into()),
            Error::Failed("e".into()),
            Error::LimitExceeded("f".into()),
            Error::InvalidProcess("i".into()),
            Error::AccessDenied("g".into()),
            Error::InvalidArgs("h".into()),
        ];
        for e in all {
            let back = Error::from_name(&e.dbus_name(), e.message().to_owned());
            assert_eq!(back, e);
        }
        assert_eq!(
            Error::InvalidMode(String::new()).dbus_name(),
            "io.github.gearshift.Error.InvalidMode"
        );
    }

    #[test]
    fn unknown_names_are_kept() {
        let e = Error::from_name("org.example.Odd", "x".into());
        assert_eq!(e.dbus_name(), "org.example.Odd");
    }
}
