//! The tray's side of the system bus: follows gearshiftd (gearshift-dbus's model and its
//! updates) into the tray's [`View`](crate::view::View) and carries out the menu's
//! [`Command`]s.

use anyhow::{Context, Result};
use futures_util::StreamExt;
use gearshift_dbus::settings::{self, Prompt};
use gearshift_dbus::{DaemonProperties, Followed, Scheduler1Proxy};
use ksni::Handle;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::tray::{Command, GearshiftTray};

/// The program "Open Gearshift" starts; `GEARSHIFT_APP` overrides it (tests, development).
fn app_program() -> String {
    std::env::var("GEARSHIFT_APP").unwrap_or_else(|_| "gearshift".into())
}

/// Carries out a menu click; polkit may ask the person at the desktop for a password.
async fn run(
    scheduler: &Scheduler1Proxy<'_>,
    command: Command,
) -> Result<(), gearshift_dbus::Error> {
    match command {
        Command::SetProfile(name) => settings::set_profile(scheduler, &name, Prompt::Allowed).await,
        Command::SetPreemption(on) => {
            settings::set_preemption(scheduler, on, Prompt::Allowed).await
        }
        Command::Start => scheduler.start().await,
        Command::OpenApp | Command::Quit => Ok(()),
    }
}

async fn show(handle: &Handle<GearshiftTray>, daemon: Option<DaemonProperties>) {
    handle
        .update(move |tray| {
            if daemon.is_none() {
                tray.view.last_error = None;
            }
            tray.view.daemon = daemon;
        })
        .await;
}

fn open_app() {
    let program = app_program();
    match tokio::process::Command::new(&program).spawn() {
        Ok(mut child) => {
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
        Err(e) => tracing::warn!("could not start {program}: {e}"),
    }
}

/// Follows gearshiftd until the tray quits (a Quit command or the tray going away).
pub async fn follow(
    handle: Handle<GearshiftTray>,
    mut commands: UnboundedReceiver<Command>,
) -> Result<()> {
    let conn = zbus::Connection::system()
        .await
        .context("connecting to the system bus")?;
    let mut updates = gearshift_dbus::follow(&conn).await?;
    let scheduler = Scheduler1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await?;
    loop {
        tokio::select! {
            Some(update) = updates.next() => match update {
                Followed::Appeared(daemon) => {
                    tracing::info!("gearshiftd appeared");
                    show(&handle, Some(daemon)).await;
                }
                Followed::Changed(daemon) => show(&handle, Some(daemon)).await,
                Followed::Gone => {
                    tracing::info!("gearshiftd is not on the bus");
                    show(&handle, None).await;
                }
            },
            command = commands.recv() => match command {
                None | Some(Command::Quit) => break,
                Some(Command::OpenApp) => open_app(),
                Some(command) => {
                    // Calls may wait for polkit or the scheduler: the tray keeps following
                    // the daemon meanwhile.
                    let scheduler = scheduler.clone();
                    let handle = handle.clone();
                    tokio::spawn(async move {
                        let what = format!("{command:?}");
                        let result = run(&scheduler, command).await;
                        if let Err(e) = &result {
                            tracing::warn!("{what} failed: {e}");
                        }
                        let error = result.err().map(|e| format!("Failed: {}", e.message()));
                        handle.update(move |tray| tray.view.last_error = error).await;
                    });
                }
            }
        }
    }
    handle.shutdown().await;
    Ok(())
}
