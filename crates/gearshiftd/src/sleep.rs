//! Sleep and resume as logind announces them: `PrepareForSleep(true)` before the machine
//! sleeps, `PrepareForSleep(false)` once it has resumed and user space is thawed. Nothing here
//! delays suspend (no inhibitor lock): the scheduler is frozen and thawed like every other
//! task, and checked after resume. logind may be absent, start later or restart: the watch is
//! a match rule on the signal, whose sender must be logind's current owner. [`follow`] has the
//! daemon check the scheduler on each resume.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc;
use zbus::message::Type;
use zbus::names::BusName;
use zbus::{Connection, MatchRule, MessageStream};

use crate::daemon::Daemon;

const LOGIND: &str = "org.freedesktop.login1";

/// Sends `true` on `tx` when the machine is about to sleep and `false` once it has resumed.
/// Ends when the receiver is gone or the bus connection fails.
pub async fn watch(conn: Connection, tx: mpsc::UnboundedSender<bool>) -> zbus::Result<()> {
    let rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .path("/org/freedesktop/login1")?
        .interface("org.freedesktop.login1.Manager")?
        .member("PrepareForSleep")?
        .build();
    let mut signals = MessageStream::for_match_rule(rule, &conn, None).await?;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await?;
    let logind = BusName::try_from(LOGIND)?;
    while let Some(message) = signals.next().await {
        let Ok(message) = message else { continue };
        // Anyone may send a signal with that interface; only logind's count.
        let header = message.header();
        let Ok(owner) = dbus.get_name_owner(logind.clone()).await else {
            continue;
        };
        if header.sender().map(|s| s.as_str()) != Some(owner.as_str()) {
            continue;
        }
        let Ok(sleeping) = message.body().deserialize::<bool>() else {
            continue;
        };
        if tx.send(sleeping).is_err() {
            return Ok(());
        }
    }
    Ok(())
}

/// Follows logind's sleep announcements and checks the scheduler on resume.
pub async fn follow(conn: Connection, daemon: Arc<Daemon>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        if let Err(e) = watch(conn, tx).await {
            tracing::warn!("cannot watch logind for sleep and resume: {e}");
        }
    });
    while let Some(sleeping) = rx.recv().await {
        if sleeping {
            tracing::info!("the machine is going to sleep");
        } else {
            daemon.check_after_resume().await;
        }
    }
}
