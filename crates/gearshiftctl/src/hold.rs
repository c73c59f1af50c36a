//! `hold PROFILE -- COMMAND`: hold a profile while a command runs.

use std::process::ExitCode;

use gearshift_dbus::Error as DbusError;
use gearshift_i18n::{fill_named, gettext};

use crate::ctl::Ctl;
use crate::error::CliError;

/// Holds `profile`, runs `command` (inheriting the terminal), releases the hold, and returns
/// the command's exit code (128 + signal number if a signal ended it, as shells do).
pub async fn run(
    ctl: &Ctl,
    profile: &str,
    reason: &str,
    app_id: &str,
    command: &[String],
) -> Result<ExitCode, CliError> {
    let cookie = ctl.check(ctl.proxy.hold_profile(profile, reason, app_id).await)?;
    let status = match command.split_first() {
        Some((program, args)) => tokio::process::Command::new(program)
            .args(args)
            .status()
            .await
            .map_err(|e| {
                CliError::Output(std::io::Error::new(e.kind(), format!("{program}: {e}")))
            }),
        None => Err(CliError::Protocol(gettext("no command to run"))),
    };
    // The hold may already be gone (the user chose a profile): that is fine.
    match ctl.proxy.release_profile(cookie).await {
        Ok(()) | Err(DbusError::InvalidArgs(_)) => {}
        Err(e) => {
            let text = fill_named(
                &gettext("releasing the hold: {error}"),
                &[("error", &e.to_string())],
            );
            eprintln!("gearshiftctl: {text}");
        }
    }
    let status = status?;
    let code = match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        (None, None) => 1,
    };
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
