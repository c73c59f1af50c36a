//! Watching other system services' properties: UPower's `OnBattery` and its display
//! device's `Percentage`, and power-profiles-daemon's `ActiveProfile` (under its current name
//! and the legacy one that bookworm ships). Services may be absent, appear later, restart or
//! leave; each watcher reports the value while the service is there and `None` when it leaves.
//! No polling: PropertiesChanged and NameOwnerChanged only. [`follow`] feeds what they
//! report to the core's power following (power_follow.rs).

use futures_util::StreamExt;
use gearshift_dbus::values;
use tokio::sync::mpsc;
use zbus::names::{BusName, InterfaceName};
use zbus::zvariant::OwnedValue;
use zbus::Connection;

use crate::power_follow::PowerFollow;

/// A property of another service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watched {
    pub service: &'static str,
    pub path: &'static str,
    pub interface: &'static str,
    pub property: &'static str,
}

pub const UPOWER_ON_BATTERY: Watched = Watched {
    service: "org.freedesktop.UPower",
    path: "/org/freedesktop/UPower",
    interface: "org.freedesktop.UPower",
    property: "OnBattery",
};

/// The charge of the battery (or all batteries together) as the desktop shows it, 0-100; 0
/// when there is no battery.
pub const UPOWER_DISPLAY_PERCENTAGE: Watched = Watched {
    service: "org.freedesktop.UPower",
    path: "/org/freedesktop/UPower/devices/DisplayDevice",
    interface: "org.freedesktop.UPower.Device",
    property: "Percentage",
};

pub const PPD_ACTIVE_PROFILE: Watched = Watched {
    service: "org.freedesktop.UPower.PowerProfiles",
    path: "/org/freedesktop/UPower/PowerProfiles",
    interface: "org.freedesktop.UPower.PowerProfiles",
    property: "ActiveProfile",
};

/// power-profiles-daemon before 0.20 (Debian 12 ships 0.12).
pub const PPD_LEGACY_ACTIVE_PROFILE: Watched = Watched {
    service: "net.hadess.PowerProfiles",
    path: "/net/hadess/PowerProfiles",
    interface: "net.hadess.PowerProfiles",
    property: "ActiveProfile",
};

/// Reports `watched`'s value on `tx` as `(watched, Some(value))`, and `None` while the
/// service is absent (one service may have several watched properties). Ends when the receiver
/// is gone or the bus connection fails.
pub async fn watch(
    conn: Connection,
    watched: Watched,
    tx: mpsc::UnboundedSender<(Watched, Option<OwnedValue>)>,
) -> zbus::Result<()> {
    let dbus = zbus::fdo::DBusProxy::new(&conn).await?;
    let mut owners = dbus
        .receive_name_owner_changed_with_args(&[(0, watched.service)])
        .await?;
    let props = zbus::fdo::PropertiesProxy::builder(&conn)
        .destination(watched.service)?
        .path(watched.path)?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await?;
    let mut changes = props.receive_properties_changed().await?;
    let send = |value: Option<OwnedValue>| tx.send((watched, value)).is_ok();

    // The service may be there already.
    let name = BusName::try_from(watched.service)?;
    if dbus.name_has_owner(name).await? {
        let value = read(&props, &watched).await;
        if !send(value) {
            return Ok(());
        }
    }
    loop {
        tokio::select! {
            change = owners.next() => {
                let Some(change) = change else { return Ok(()) };
                let present = change.args().is_ok_and(|a| a.new_owner().is_some());
                let value = if present { read(&props, &watched).await } else { None };
                if !send(value) {
                    return Ok(());
                }
            }
            change = changes.next() => {
                let Some(change) = change else { return Ok(()) };
                let Ok(args) = change.args() else { continue };
                if args.interface_name().as_str() != watched.interface {
                    continue;
                }
                let value = match args.changed_properties().get(watched.property) {
                    Some(v) => v.try_to_owned().ok(),
                    None if args.invalidated_properties().contains(&watched.property) => {
                        read(&props, &watched).await
                    }
                    None => continue,
                };
                if !send(value) {
                    return Ok(());
                }
            }
        }
    }
}

async fn read(props: &zbus::fdo::PropertiesProxy<'_>, watched: &Watched) -> Option<OwnedValue> {
    let iface = InterfaceName::try_from(watched.interface).ok()?;
    match props.get(iface, watched.property).await {
        Ok(value) => Some(value),
        Err(e) => {
            tracing::debug!("{}.{}: {e}", watched.service, watched.property);
            None
        }
    }
}

/// Follows UPower and power-profiles-daemon (under either name; the current one wins) and
/// tells `power` what they say.
pub async fn follow(conn: Connection, power: PowerFollow) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    // The charge only matters to the low-battery rule.
    let percentage = power
        .watches_charge()
        .await
        .then_some(UPOWER_DISPLAY_PERCENTAGE);
    for watched in [
        UPOWER_ON_BATTERY,
        PPD_ACTIVE_PROFILE,
        PPD_LEGACY_ACTIVE_PROFILE,
    ]
    .into_iter()
    .chain(percentage)
    {
        let (conn, tx) = (conn.clone(), tx.clone());
        tokio::spawn(async move {
            if let Err(e) = watch(conn, watched, tx).await {
                tracing::warn!("cannot watch {}: {e}", watched.service);
            }
        });
    }
    drop(tx);
    let (mut current, mut legacy) = (None, None);
    while let Some((watched, value)) = rx.recv().await {
        tracing::debug!("{}.{}: {value:?}", watched.service, watched.property);
        if watched == UPOWER_ON_BATTERY {
            power
                .power_source_seen(value.as_ref().and_then(|v| values::flag(v)))
                .await;
            continue;
        }
        if watched == UPOWER_DISPLAY_PERCENTAGE {
            power
                .battery_percent_seen(value.as_ref().and_then(|v| values::float(v)))
                .await;
            continue;
        }
        let left = value.is_none();
        let text = value.as_ref().and_then(|v| values::text(v));
        if watched == PPD_ACTIVE_PROFILE {
            current = text;
        } else {
            legacy = text;
        }
        power
            .power_profile_seen(current.clone().or_else(|| legacy.clone()), left)
            .await;
    }
}
