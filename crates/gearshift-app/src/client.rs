//! The app's side of the D-Bus contract: one task on the tokio runtime follows gearshiftd
//! (its properties, signals and comings and goings) and reports [`Event`]s to the UI; the
//! [`Client`] handle makes calls. Properties are read as a dictionary (GetAll and
//! PropertiesChanged), so properties an older daemon lacks are simply absent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use gearshift_dbus::{Error, Scheduler1Proxy, BUS_NAME, INTERFACE, OBJECT_PATH};
use gearshift_types::Stats;
use gettextrs::gettext;
use tokio::sync::watch;
use zbus::fdo::{DBusProxy, PropertiesProxy};
use zbus::names::{BusName, InterfaceName};
use zbus::proxy::{CacheProperties, MethodFlags};
use zbus::zvariant::{OwnedValue, Value};
use zbus::Connection;

use crate::runtime;

/// Properties by name.
pub type Props = HashMap<String, OwnedValue>;

/// How often the app asks for stats while its window shows.
pub const STATS_INTERVAL_MS: u32 = 500;
/// How long to wait before trying the system bus again.
const BUS_RETRY: Duration = Duration::from_secs(3);
/// How long to wait before asking again for a refused stats subscription.
const SUBSCRIBE_RETRY: Duration = Duration::from_secs(5);
/// How often to look for gearshiftd while it is absent (besides NameOwnerChanged: a daemon
/// started by bus activation appears that way too).
const ABSENT_RETRY: Duration = Duration::from_secs(30);

/// What the UI hears about the daemon.
#[derive(Debug, Clone)]
pub enum Event {
    /// Connected to gearshiftd: all its properties.
    Connected(Props),
    /// gearshiftd is not there (not running, restarting, or no system bus): why, in words.
    Absent(String),
    /// Properties that changed.
    Changed(Props),
    Stats(Box<Stats>),
    /// The scheduler exited on its own.
    Exited {
        reason: String,
        will_restart: bool,
    },
    /// The stats subscription started (true) or ended (false).
    Subscribed(bool),
}

/// A handle on the connection, cheap to clone; calls return the daemon's error in words.
#[derive(Clone)]
pub struct Client {
    conn: Arc<Mutex<Option<Connection>>>,
    stats_wanted: Arc<watch::Sender<bool>>,
}

impl Client {
    /// Starts following gearshiftd; events arrive on the returned receiver (on any thread;
    /// the UI awaits them on the main loop).
    pub fn start() -> (Self, async_channel::Receiver<Event>) {
        let (tx, rx) = async_channel::unbounded();
        let (wanted_tx, wanted_rx) = watch::channel(false);
        let client = Client {
            conn: Arc::new(Mutex::new(None)),
            stats_wanted: Arc::new(wanted_tx),
        };
        let shared = client.conn.clone();
        if runtime::spawn(follow(shared, tx.clone(), wanted_rx)).is_none() {
            let _ = tx.try_send(Event::Absent(gettext(
                "The app could not start its D-Bus thread.",
            )));
        }
        (client, rx)
    }

    /// Subscribe to stats (while the window shows) or not.
    pub fn want_stats(&self, on: bool) {
        self.stats_wanted.send_replace(on);
    }

    fn connection(&self) -> Result<Connection, String> {
        self.conn
            .lock()
            .ok()
            .and_then(|c| c.clone())
            .ok_or_else(|| gettext("Not connected to the system bus."))
    }

    async fn with_proxy<T, F, Fut>(&self, call: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(Scheduler1Proxy<'static>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T, Error>> + Send,
    {
        let conn = self.connection()?;
        let task = async move {
            let proxy = Scheduler1Proxy::builder(&conn)
                .cache_properties(CacheProperties::No)
                .build()
                .await
                .map_err(Error::from)?;
            call(proxy).await
        };
        match runtime::on_tokio(task).await {
            Some(result) => result.map_err(|e| describe(&e)),
            None => Err(gettext("The call was interrupted.")),
        }
    }

    pub async fn set_profile(&self, name: String) -> Result<(), String> {
        self.with_proxy(move |p| async move { p.set_profile(&name).await })
            .await
    }

    pub async fn start_scheduler(&self) -> Result<(), String> {
        self.with_proxy(|p| async move { p.start().await }).await
    }

    pub async fn stop_scheduler(&self) -> Result<(), String> {
        self.with_proxy(|p| async move { p.stop().await }).await
    }

    /// Restart, forgetting earlier failures (the "retry" of a failed scheduler).
    pub async fn restart_scheduler(&self) -> Result<(), String> {
        self.with_proxy(|p| async move { p.restart().await }).await
    }

    /// Writes a boolean property (Preemption, AutoPowerSource, FollowPowerProfile), letting
    /// polkit ask for a password where its policy says so.
    pub async fn set_bool(&self, name: &'static str, value: bool) -> Result<(), String> {
        self.with_proxy(move |p| async move {
            let props = zbus::Proxy::new(
                p.inner().connection(),
                BUS_NAME,
                OBJECT_PATH,
                "org.freedesktop.DBus.Properties",
            )
            .await?;
            props
                .call_with_flags::<_, _, ()>(
                    "Set",
                    MethodFlags::AllowInteractiveAuth.into(),
                    &(INTERFACE, name, Value::from(value)),
                )
                .await?;
            Ok(())
        })
        .await
    }
}

/// The sentence to show for a failed call.
fn describe(e: &Error) -> String {
    match e {
        Error::AccessDenied(_) => gettext("You are not allowed to do that."),
        Error::Other { name, .. }
            if name.ends_with("ServiceUnknown") || name.ends_with("NameHasNoOwner") =>
        {
            gettext("The Gearshift service is not running.")
        }
        other if other.message().is_empty() => other.dbus_name(),
        other => other.message().to_owned(),
    }
}

/// Follows the daemon forever: connects to the system bus (again, if it goes), waits for
/// gearshiftd, serves one session per daemon instance.
async fn follow(
    shared: Arc<Mutex<Option<Connection>>>,
    tx: async_channel::Sender<Event>,
    mut wanted: watch::Receiver<bool>,
) {
    loop {
        let conn = match Connection::system().await {
            Ok(conn) => conn,
            Err(e) => {
                let why = gettext("Cannot reach the system bus: {}").replace("{}", &e.to_string());
                if tx.send(Event::Absent(why)).await.is_err() {
                    return;
                }
                tokio::time::sleep(BUS_RETRY).await;
                continue;
            }
        };
        if let Ok(mut slot) = shared.lock() {
            *slot = Some(conn.clone());
        }
        match on_bus(&conn, &tx, &mut wanted).await {
            Ok(()) => return, // the UI is gone
            Err(e) => {
                let why = gettext("Lost the system bus: {}").replace("{}", &e.to_string());
                if tx.send(Event::Absent(why)).await.is_err() {
                    return;
                }
                tokio::time::sleep(BUS_RETRY).await;
            }
        }
    }
}

/// Why a session ended.
enum End {
    /// gearshiftd left the bus (or was never there).
    Gone,
    /// The UI dropped its receiver.
    UiClosed,
}

async fn on_bus(
    conn: &Connection,
    tx: &async_channel::Sender<Event>,
    wanted: &mut watch::Receiver<bool>,
) -> zbus::Result<()> {
    let dbus = DBusProxy::new(conn).await?;
    let mut owners = dbus
        .receive_name_owner_changed_with_args(&[(0, BUS_NAME)])
        .await?;
    loop {
        match session(conn, tx, wanted, &mut owners).await {
            Ok(End::UiClosed) => return Ok(()),
            Ok(End::Gone) | Err(_) => {}
        }
        let why = gettext("The Gearshift service (gearshiftd) is not running.");
        if tx.send(Event::Absent(why)).await.is_err() {
            return Ok(());
        }
        // Wait for a new owner (or retry now and then: activation, missed signals).
        let Ok(name) = BusName::try_from(BUS_NAME) else {
            return Err(zbus::Error::InvalidReply);
        };
        if dbus.name_has_owner(name.clone()).await.unwrap_or(false) {
            continue;
        }
        let deadline = tokio::time::sleep(ABSENT_RETRY);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                change = owners.next() => {
                    let Some(change) = change else { return Err(zbus::Error::InvalidReply) };
                    if change.args().is_ok_and(|a| a.new_owner().is_some()) {
                        break;
                    }
                }
                _ = &mut deadline => break,
            }
        }
    }
}

/// One daemon instance: from GetAll until it leaves the bus.
async fn session(
    conn: &Connection,
    tx: &async_channel::Sender<Event>,
    wanted: &mut watch::Receiver<bool>,
    owners: &mut zbus::fdo::NameOwnerChangedStream,
) -> zbus::Result<End> {
    let props = properties(conn).await?;
    let proxy = Scheduler1Proxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    // Listen first, then read: nothing falls between the two.
    let mut changes = props.receive_properties_changed().await?;
    let mut stats = proxy.receive_stats().await?;
    let mut exits = proxy.receive_scheduler_exited().await?;
    let iface = InterfaceName::from_static_str_unchecked(INTERFACE);
    let all = props.get_all(iface.clone()).await?;
    if tx.send(Event::Connected(all)).await.is_err() {
        return Ok(End::UiClosed);
    }
    let mut cookie: Option<u32> = None;
    let mut sync_wanted = true;
    // A refused subscription (too many subscribers) is asked for again later.
    let mut retry: Option<tokio::time::Instant> = None;
    loop {
        if sync_wanted {
            sync_wanted = false;
            let want = *wanted.borrow_and_update();
            match (want, cookie) {
                (true, None) => match proxy.subscribe_stats(STATS_INTERVAL_MS).await {
                    Ok(c) => {
                        cookie = Some(c);
                        retry = None;
                        let _ = tx.send(Event::Subscribed(true)).await;
                    }
                    Err(_) => retry = Some(tokio::time::Instant::now() + SUBSCRIBE_RETRY),
                },
                (false, Some(c)) => {
                    cookie = None;
                    let _ = proxy.unsubscribe_stats(c).await;
                    let _ = tx.send(Event::Subscribed(false)).await;
                }
                _ => {}
            }
        }
        let retry_at = retry.unwrap_or_else(|| tokio::time::Instant::now() + ABSENT_RETRY);
        let event = tokio::select! {
            _ = tokio::time::sleep_until(retry_at), if retry.is_some() => {
                retry = None;
                sync_wanted = true;
                continue;
            }
            changed = wanted.changed() => {
                if changed.is_err() {
                    return Ok(End::UiClosed);
                }
                sync_wanted = true;
                continue;
            }
            change = owners.next() => {
                let Some(change) = change else { return Err(zbus::Error::InvalidReply) };
                // The instance this session talks to left (a restart included); a name
                // appearing is the next instance, already being served.
                if change.args().is_ok_and(|a| a.old_owner().is_some()) {
                    if cookie.is_some() {
                        let _ = tx.send(Event::Subscribed(false)).await;
                    }
                    return Ok(End::Gone);
                }
                continue;
            }
            change = changes.next() => {
                let Some(change) = change else { return Ok(End::Gone) };
                let Ok(args) = change.args() else { continue };
                if args.interface_name.as_str() != INTERFACE {
                    continue;
                }
                let mut props: Props = args
                    .changed_properties
                    .iter()
                    .filter_map(|(k, v)| Some((k.to_string(), v.try_to_owned().ok()?)))
                    .collect();
                // Invalidated ones are read again.
                for name in args.invalidated_properties.iter() {
                    if let Ok(v) = props_get(conn, name).await {
                        props.insert(name.to_string(), v);
                    }
                }
                Event::Changed(props)
            }
            signal = stats.next() => {
                let Some(signal) = signal else { return Ok(End::Gone) };
                let Ok(args) = signal.args() else { continue };
                Event::Stats(Box::new(gearshift_dbus::model::stats_from_dict(&args.stats)))
            }
            signal = exits.next() => {
                let Some(signal) = signal else { return Ok(End::Gone) };
                let Ok(args) = signal.args() else { continue };
                Event::Exited { reason: args.reason.clone(), will_restart: args.will_restart }
            }
        };
        if tx.send(event).await.is_err() {
            if let Some(c) = cookie {
                let _ = proxy.unsubscribe_stats(c).await;
            }
            return Ok(End::UiClosed);
        }
    }
}

/// org.freedesktop.DBus.Properties of gearshiftd's object.
async fn properties(conn: &Connection) -> zbus::Result<PropertiesProxy<'static>> {
    PropertiesProxy::builder(conn)
        .destination(BUS_NAME)?
        .path(OBJECT_PATH)?
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

async fn props_get(conn: &Connection, name: &str) -> zbus::fdo::Result<OwnedValue> {
    properties(conn)
        .await?
        .get(InterfaceName::from_static_str_unchecked(INTERFACE), name)
        .await
}
