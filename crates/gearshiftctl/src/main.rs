//! gearshiftctl: the command-line client of gearshiftd (`io.github.gearshift.Scheduler1`).
//!
//! `main.rs` holds the command line and the dispatch; `commands.rs` talks to the daemon,
//! `watch.rs` follows the Stats signal, `output.rs` formats for people and for scripts.

mod commands;
mod error;
mod hold;
mod output;
mod stats_text;
mod watch;

use std::fmt;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};
use gearshift_types::Mode;

use crate::error::CliError;

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  gearshiftd refused the request or the call failed (e.g. no such profile)
  2  usage error (unknown command, option or value)
  3  gearshiftd is not reachable (not on the bus, or no bus)
  4  access denied (run as root or from an active local session)
  5  the scheduler is not running, or the kernel has no sched_ext";

/// Control the Gearshift sched_ext scheduler through gearshiftd.
#[derive(Debug, Parser)]
#[command(name = "gearshiftctl", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// Print machine-readable JSON: one object per command (one per line with --watch).
    #[arg(long, global = true)]
    pub json: bool,
    /// The bus gearshiftd is on.
    #[arg(long, global = true, value_enum, default_value_t = BusKind::System)]
    pub bus: BusKind,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BusKind {
    /// The system bus, where gearshiftd runs.
    System,
    /// The session bus (for testing a daemon run by hand).
    Session,
}

impl fmt::Display for BusKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BusKind::System => "system",
            BusKind::Session => "session",
        })
    }
}

#[derive(Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Show the scheduler's state, profile, mode, preemption, automatic rules and version.
    Status,
    /// Show the active profile, or switch to NAME (see list-profiles).
    Profile {
        /// Profile to switch to.
        name: Option<String>,
    },
    /// Show the mode in effect, or switch to MODE (the profile becomes "custom").
    Mode {
        /// Mode to switch to.
        #[arg(value_parser = mode_parser())]
        mode: Option<Mode>,
    },
    /// Show whether waking interactive tasks may preempt CPU-bound ones, or turn it on or off.
    Preempt {
        /// Turn preemption on or off.
        #[arg(value_parser = on_off_parser())]
        setting: Option<bool>,
    },
    /// Show the scheduler's counters; with --watch, a line per update until Ctrl-C.
    Stats {
        /// Keep printing updates (the daemon's Stats signal) until interrupted.
        #[arg(long)]
        watch: bool,
        /// With --watch: milliseconds between updates (the daemon enforces a minimum).
        #[arg(long, requires = "watch", default_value_t = 1000,
              value_parser = clap::value_parser!(u32).range(1..))]
        interval_ms: u32,
    },
    /// Start the scheduler; returns once the kernel reports it enabled.
    Start,
    /// Stop the scheduler; the kernel's default scheduler takes over.
    Stop,
    /// Stop and start the scheduler, forgetting earlier failures.
    Restart,
    /// List the profiles with their mode and preemption; the active one is marked.
    ListProfiles,
    /// Hold PROFILE while COMMAND runs (e.g. a game or a recording), then release it; exits
    /// with the command's status. The hold beats the automatic rules; choosing a profile
    /// yourself ends it.
    Hold {
        /// Profile to hold.
        profile: String,
        /// Why, shown to the user (ActiveHolds).
        #[arg(long, default_value = "held by gearshiftctl")]
        reason: String,
        /// The application holding it.
        #[arg(long, default_value = "io.github.gearshift.gearshiftctl")]
        app_id: String,
        /// The command to run.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.iter().map(|m| m.as_str())).try_map(|s| s.parse::<Mode>())
}

fn on_off_parser() -> impl TypedValueParser<Value = bool> {
    PossibleValuesParser::new(["on", "off"]).map(|s| s == "on")
}

fn main() -> ExitCode {
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
            eprintln!("gearshiftctl: cannot start the async runtime: {e}");
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
        Cli::command_for_tests().debug_assert();
    }

    impl Cli {
        fn command_for_tests() -> clap::Command {
            <Cli as clap::CommandFactory>::command()
        }
    }
}
