//! gearshift-tray: Gearshift's StatusNotifierItem. Shows the scheduler's mode as its icon, the
//! state and profile in its tooltip, and lets you pick a profile, toggle preemption, start the
//! scheduler or open the Gearshift app from its menu. Follows gearshiftd on the system bus,
//! including its restarts. While GameMode runs a game in the session, it holds a profile
//! (gamemode.rs).

mod daemon;
mod gamemode;
mod tray;
mod view;

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use ksni::TrayMethods;
use zbus::Connection;

#[derive(Parser)]
#[command(version, about = "Gearshift tray applet (StatusNotifierItem)")]
struct Cli {
    /// The profile to hold while GameMode runs a game; an empty name turns this off.
    #[arg(long, value_name = "PROFILE", default_value = "interactive")]
    gamemode_profile: String,
}

/// Where the host looks for the tray's icons besides the icon theme: `GEARSHIFT_ICON_THEME_PATH`,
/// else the source tree's data/icons when run from a checkout; empty once installed.
fn icon_theme_path() -> String {
    if let Ok(path) = std::env::var("GEARSHIFT_ICON_THEME_PATH") {
        return path;
    }
    let dev = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/icons");
    match dev.canonicalize() {
        Ok(path) if path.join("hicolor").is_dir() => path.display().to_string(),
        _ => String::new(),
    }
}

/// Holds `profile` while GameMode runs a game, on connections of its own (the hold is tied to
/// the connection that took it). Without a session bus there is no GameMode to follow.
async fn follow_gamemode(profile: String) {
    let connections =
        async { Ok::<_, zbus::Error>((Connection::session().await?, Connection::system().await?)) };
    let result = match connections.await {
        Ok((session, system)) => gamemode::follow(session, system, profile).await,
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        tracing::warn!("not following GameMode: {e}");
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if !cli.gamemode_profile.is_empty() {
        tokio::spawn(follow_gamemode(cli.gamemode_profile));
    }
    let (commands, receiver) = tokio::sync::mpsc::unbounded_channel();
    let tray = tray::GearshiftTray::new(commands, icon_theme_path());
    // A session may start the tray before its StatusNotifierWatcher: wait for it then.
    let handle = tray
        .assume_sni_available(true)
        .spawn()
        .await
        .map_err(|e| anyhow::anyhow!("cannot show the tray item: {e}"))?;
    daemon::follow(handle, receiver).await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gearshift-tray: {e:#}");
            ExitCode::FAILURE
        }
    }
}
