//! The app's side of the D-Bus contract: one task on the tokio runtime follows gearshiftd
//! (gearshift-dbus's model of its properties, its signals) and reports [`Event`]s to the UI;
//! the [`Client`] handle makes calls.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use gearshift_dbus::settings::{self, Prompt};
use gearshift_dbus::{DaemonProperties, Error, Followed, Scheduler1Proxy};
use gearshift_types::Stats;
use gettextrs::gettext;
use tokio::sync::watch;
use zbus::proxy::CacheProperties;
use zbus::Connection;

use crate::runtime;

/// How often the app asks for stats while its window shows.
pub const STATS_INTERVAL_MS: u32 = 500;
/// How long to wait before trying the system bus again.
const BUS_RETRY: Duration = Duration::from_secs(3);
/// How long to wait before asking again for a refused stats subscription.
const SUBSCRIBE_RETRY: Duration = Duration::from_secs(5);

/// What the UI hears about the daemon.
#[derive(Debug, Clone)]
pub enum Event {
    /// Connected to gearshiftd (an instance of it): all its properties.
    Connected(DaemonProperties),
    /// gearshiftd is not there (not running, restarting, or no system bus): why, in words.
    Absent(String),
    /// Properties changed: the model with the changes in.
    Changed(DaemonProperties),
    Stats(Box<Stats>),
    /// The scheduler exited on its own.
    Exited {
        reason: String,
        will_restart: bool,
    },
    /// The stats subscription started (true) or ended (false).
    Subscribed(bool),
    /// How far the running responsiveness check is (0–1) and what it measures.
    CheckProgress {
        fraction: f64,
        scheduler: String,
    },
    /// The check ended: completed (LastCheck has the result), or why not.
    CheckFinished {
        completed: bool,
        message: String,
    },
}

/// The window's switches, each a setting of the daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    Preemption,
    AutoPowerSource,
    FollowPowerProfile,
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
        self.with_proxy(
            move |p| async move { settings::set_profile(&p, &name, Prompt::Allowed).await },
        )
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

    /// Starts a responsiveness check of every profile, `seconds` each (polkit may ask).
    pub async fn start_check(&self, seconds: u32) -> Result<(), String> {
        let options = gearshift_dbus::CheckOptions {
            seconds,
            ..Default::default()
        };
        self.with_proxy(move |p| async move { p.start_check(options.to_dict()).await })
            .await
    }

    pub async fn cancel_check(&self) -> Result<(), String> {
        self.with_proxy(|p| async move { p.cancel_check().await })
            .await
    }

    /// Turns a switch's setting on or off, letting polkit ask for a password where its
    /// policy says so.
    pub async fn set_switch(&self, switch: Switch, on: bool) -> Result<(), String> {
        self.with_proxy(move |p| async move {
            match switch {
                Switch::Preemption => settings::set_preemption(&p, on, Prompt::Allowed).await,
                Switch::AutoPowerSource => {
                    settings::set_auto_power_source(&p, on, Prompt::Allowed).await
                }
                Switch::FollowPowerProfile => {
                    settings::set_follow_power_profile(&p, on, Prompt::Allowed).await
                }
            }
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

/// Follows the daemon on one connection; `Ok` when the UI is gone, an error when the bus is.
async fn on_bus(
    conn: &Connection,
    tx: &async_channel::Sender<Event>,
    wanted: &mut watch::Receiver<bool>,
) -> zbus::Result<()> {
    let mut updates = gearshift_dbus::follow(conn).await?;
    let proxy = Scheduler1Proxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await?;
    // The signal streams follow the name from one daemon instance to the next.
    let mut stats = proxy.receive_stats().await?;
    let mut exits = proxy.receive_scheduler_exited().await?;
    let mut check_progress = proxy.receive_check_progress().await?;
    let mut check_finished = proxy.receive_check_finished().await?;
    let mut present = false;
    let mut cookie: Option<u32> = None;
    let mut sync_wanted = false;
    // A refused subscription (too many subscribers) is asked for again later.
    let mut retry: Option<tokio::time::Instant> = None;
    loop {
        if sync_wanted && present {
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
        let retry_at = retry.unwrap_or_else(|| tokio::time::Instant::now() + SUBSCRIBE_RETRY);
        let event = tokio::select! {
            _ = tokio::time::sleep_until(retry_at), if retry.is_some() => {
                retry = None;
                sync_wanted = true;
                continue;
            }
            changed = wanted.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                sync_wanted = true;
                continue;
            }
            update = updates.next() => {
                let Some(update) = update else { return Err(zbus::Error::InvalidReply) };
                match update {
                    Followed::Appeared(daemon) => {
                        // A new instance: an earlier one's subscription went with it.
                        if cookie.take().is_some() {
                            let _ = tx.send(Event::Subscribed(false)).await;
                        }
                        present = true;
                        sync_wanted = true;
                        retry = None;
                        Event::Connected(daemon)
                    }
                    Followed::Changed(daemon) => Event::Changed(daemon),
                    Followed::Gone => {
                        if cookie.take().is_some() {
                            let _ = tx.send(Event::Subscribed(false)).await;
                        }
                        present = false;
                        retry = None;
                        Event::Absent(gettext("The Gearshift service (gearshiftd) is not running."))
                    }
                }
            }
            signal = stats.next() => {
                let Some(signal) = signal else { return Err(zbus::Error::InvalidReply) };
                let Ok(args) = signal.args() else { continue };
                Event::Stats(Box::new(gearshift_dbus::model::stats_from_dict(&args.stats)))
            }
            signal = exits.next() => {
                let Some(signal) = signal else { return Err(zbus::Error::InvalidReply) };
                let Ok(args) = signal.args() else { continue };
                Event::Exited { reason: args.reason.clone(), will_restart: args.will_restart }
            }
            signal = check_progress.next() => {
                let Some(signal) = signal else { return Err(zbus::Error::InvalidReply) };
                let Ok(args) = signal.args() else { continue };
                Event::CheckProgress { fraction: args.fraction, scheduler: args.scheduler.clone() }
            }
            signal = check_finished.next() => {
                let Some(signal) = signal else { return Err(zbus::Error::InvalidReply) };
                let Ok(args) = signal.args() else { continue };
                Event::CheckFinished { completed: args.completed, message: args.message.clone() }
            }
        };
        if tx.send(event).await.is_err() {
            if let Some(c) = cookie {
                let _ = proxy.unsubscribe_stats(c).await;
            }
            return Ok(());
        }
    }
}
