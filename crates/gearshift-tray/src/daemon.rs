//! The tray's side of the system bus: follows gearshiftd (NameOwnerChanged, PropertiesChanged)
//! into the tray's [`View`] and carries out the menu's [`Command`]s.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use futures_util::StreamExt;
use gearshift_dbus::{Scheduler1Proxy, BUS_NAME, INTERFACE, OBJECT_PATH};
use ksni::Handle;
use tokio::sync::mpsc::UnboundedReceiver;
use zbus::fdo::{DBusProxy, PropertiesProxy};
use zbus::message::Type as MessageType;
use zbus::names::InterfaceName;
use zbus::zvariant::OwnedValue;
use zbus::{MatchRule, MessageStream};

use crate::tray::{Command, GearshiftTray};
use crate::view::DaemonStatus;

/// The program "Open Gearshift" starts; `GEARSHIFT_APP` overrides it (tests, development).
fn app_program() -> String {
    std::env::var("GEARSHIFT_APP").unwrap_or_else(|_| "gearshift".into())
}

struct Bus {
    props: PropertiesProxy<'static>,
    scheduler: Scheduler1Proxy<'static>,
}

impl Bus {
    /// All of gearshiftd's properties; `None` when it is not on the bus.
    async fn fetch(&self) -> Option<DaemonStatus> {
        let iface = InterfaceName::from_static_str_unchecked(INTERFACE);
        match self.props.get_all(iface).await {
            Ok(props) => Some(DaemonStatus::new(props)),
            Err(e) => {
                tracing::info!("gearshiftd unavailable: {e}");
                None
            }
        }
    }

    async fn run(&self, command: Command) -> Result<(), gearshift_dbus::Error> {
        match command {
            Command::SetProfile(name) => self.scheduler.set_profile(&name).await,
            Command::SetPreemption(on) => self
                .scheduler
                .set_preemption(on)
                .await
                .map_err(gearshift_dbus::Error::from),
            Command::Start => self.scheduler.start().await,
            Command::OpenApp | Command::Quit => Ok(()),
        }
    }
}

async fn show(handle: &Handle<GearshiftTray>, daemon: Option<DaemonStatus>) {
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
    // Subscribe first, then read: no change falls between the two.
    let dbus = DBusProxy::new(&conn).await?;
    let mut owners = dbus
        .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
        .await?;
    let rule = MatchRule::builder()
        .msg_type(MessageType::Signal)
        .sender(BUS_NAME)?
        .path(OBJECT_PATH)?
        .interface("org.freedesktop.DBus.Properties")?
        .member("PropertiesChanged")?
        .build();
    let mut changes = MessageStream::for_match_rule(rule, &conn, Some(256)).await?;
    let bus = Arc::new(Bus {
        props: PropertiesProxy::builder(&conn)
            .destination(BUS_NAME)?
            .path(OBJECT_PATH)?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?,
        scheduler: Scheduler1Proxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?,
    });

    let mut status = bus.fetch().await;
    show(&handle, status.clone()).await;
    loop {
        tokio::select! {
            Some(change) = owners.next() => {
                let has_owner = change.args().is_ok_and(|a| a.new_owner().is_some());
                status = if has_owner { bus.fetch().await } else { None };
                tracing::info!("gearshiftd {}", if has_owner { "appeared" } else { "left" });
                show(&handle, status.clone()).await;
            }
            Some(msg) = changes.next() => {
                let Ok(msg) = msg else { continue };
                let body = msg.body();
                let Ok((iface, changed, invalidated)) =
                    body.deserialize::<(String, HashMap<String, OwnedValue>, Vec<String>)>()
                else {
                    continue;
                };
                if iface != INTERFACE {
                    continue;
                }
                status = match status.take() {
                    Some(mut current) if invalidated.is_empty() => {
                        current.apply(changed);
                        Some(current)
                    }
                    // Invalidated values, or a change before we had any: read them all.
                    _ => bus.fetch().await,
                };
                show(&handle, status.clone()).await;
            }
            command = commands.recv() => match command {
                None | Some(Command::Quit) => break,
                Some(Command::OpenApp) => open_app(),
                Some(command) => {
                    // Calls may wait for polkit or the scheduler: the tray keeps following
                    // the daemon meanwhile.
                    let bus = bus.clone();
                    let handle = handle.clone();
                    tokio::spawn(async move {
                        let what = format!("{command:?}");
                        let result = bus.run(command).await;
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
