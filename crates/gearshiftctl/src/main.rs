//! gearshiftctl: the command-line client of gearshiftd (`io.github.gearshift.Scheduler1`).
//!
//! `cli.rs` holds the command line (in the library, src/lib.rs, so that `cargo xtask man`
//! writes the manual pages from it), `main.rs` the dispatch; `ctl.rs` connects to the daemon and
//! reads it, `commands.rs` runs each command, `watch.rs` follows the Stats signal, `check.rs` runs a responsiveness check (`check_view.rs` prints it), `output.rs`
//! formats for people and for scripts (`stats_text.rs` the stats, `text.rs` what both share).
//!
//! Text for people is translated (gettext domain `gearshift`, set up by gearshift-i18n like the
//! app's); JSON, the values commands take and print alone (modes, profiles, on/off) and
//! `--help` (clap's compile-time strings, shared with the manual pages) stay English.

mod check;
mod check_view;
mod commands;
mod ctl;
mod error;
mod hold;
mod output;
mod stats_text;
mod text;
mod watch;

use std::process::ExitCode;

use clap::Parser;
use gearshift_i18n::gettext;

use crate::error::CliError;
pub use gearshiftctl::cli::{BusKind, Cli, Command};

fn main() -> ExitCode {
    gearshift_i18n::init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors; everything else is a usage error.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                error::code::USAGE
            } else {
                error::code::OK
            });
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let text = gearshift_i18n::fill_named(
                &gettext("cannot start the async runtime: {error}"),
                &[("error", &e.to_string())],
            );
            eprintln!("gearshiftctl: {text}");
            return ExitCode::from(error::code::FAILED);
        }
    };
    match runtime.block_on(commands::run(&cli)) {
        Ok(code) => code,
        Err(e) => report(&e),
    }
}

fn report(e: &CliError) -> ExitCode {
    if e.is_closed_pipe() {
        return e.to_exit_code();
    }
    for line in e.to_string().lines() {
        eprintln!("gearshiftctl: {line}");
    }
    e.to_exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use gearshift_types::Mode;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("gearshiftctl").chain(args.iter().copied()))
    }

    #[test]
    fn global_flags_go_anywhere() {
        let cli = parse(&["status", "--json", "--bus", "session"]).expect("parses");
        assert!(cli.json);
        assert_eq!(cli.bus, BusKind::Session);
        assert_eq!(cli.command, Command::Status);
        let cli = parse(&["--json", "list-profiles"]).expect("parses");
        assert!(cli.json && cli.bus == BusKind::System);
    }

    #[test]
    fn modes_are_checked_locally() {
        let cli = parse(&["mode", "low-power"]).expect("parses");
        assert_eq!(
            cli.command,
            Command::Mode {
                mode: Some(Mode::LowPower)
            }
        );
        assert_eq!(
            parse(&["mode"]).expect("parses").command,
            Command::Mode { mode: None }
        );
        let err = parse(&["mode", "turbo"]).expect_err("turbo is no mode");
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
        assert_eq!(err.exit_code(), 2);
        let text = err.to_string();
        for m in Mode::ALL {
            assert!(text.contains(m.as_str()), "{text}");
        }
    }

    #[test]
    fn preempt_takes_on_or_off() {
        let on = parse(&["preempt", "on"]).expect("parses").command;
        assert_eq!(
            on,
            Command::Preempt {
                setting: Some(true)
            }
        );
        let off = parse(&["preempt", "off"]).expect("parses").command;
        assert_eq!(
            off,
            Command::Preempt {
                setting: Some(false)
            }
        );
        assert!(parse(&["preempt", "maybe"]).is_err());
    }

    #[test]
    fn hold_takes_a_command() {
        let cli = parse(&["hold", "fifo", "--", "sleep", "1"]).expect("parses");
        match cli.command {
            Command::Hold {
                profile, command, ..
            } => {
                assert_eq!(profile, "fifo");
                assert_eq!(command, ["sleep", "1"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse(&["hold", "fifo"])
                .expect_err("no command")
                .exit_code(),
            2
        );
    }

    #[test]
    fn stats_options() {
        let cli = parse(&["stats"]).expect("parses");
        assert_eq!(
            cli.command,
            Command::Stats {
                watch: false,
                interval_ms: 1000
            }
        );
        let cli = parse(&["stats", "--watch", "--interval-ms", "250"]).expect("parses");
        assert_eq!(
            cli.command,
            Command::Stats {
                watch: true,
                interval_ms: 250
            }
        );
        let err = parse(&["stats", "--interval-ms", "250"]).expect_err("needs --watch");
        assert_eq!(err.exit_code(), 2);
        assert!(parse(&["stats", "--watch", "--interval-ms", "0"]).is_err());
    }

    #[test]
    fn usage_errors_exit_2_and_help_lists_exit_codes() {
        for args in [&["frobnicate"][..], &["--bus", "tram", "status"], &[]] {
            let err = parse(args).expect_err("usage error");
            assert_eq!(err.exit_code(), 2, "{args:?}");
        }
        let help = parse(&["--help"]).expect_err("help exits");
        assert_eq!(help.exit_code(), 0);
        let text = help.to_string();
        assert!(
            text.contains("Exit codes:") && text.contains("4  access denied"),
            "{text}"
        );
        <Cli as clap::CommandFactory>::command().debug_assert();
    }
}
