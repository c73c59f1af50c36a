//! The D-Bus side of the core's notices: each becomes PropertiesChanged or a signal on
//! `io.github.gearshift.Scheduler1`, and property changes reach `org.scx.Loader` too.

use tokio::sync::mpsc;
use zbus::Connection;

use crate::iface;
use crate::notices::{Delivery, Notice};
use crate::scx_loader;

/// Emits the notices on `conn` as they come, one at a time, until the core is gone.
pub async fn relay(conn: Connection, mut notices: mpsc::UnboundedReceiver<Delivery>) {
    while let Some(delivery) = notices.recv().await {
        match &delivery.notice {
            Notice::PropertiesChanged(changed) => {
                iface::publish(&conn, *changed).await;
                scx_loader::publish(&conn).await;
            }
            Notice::SchedulerExited {
                reason,
                will_restart,
            } => iface::scheduler_exited(&conn, reason, *will_restart).await,
            Notice::FellBack(fell_back) => iface::fell_back(&conn, fell_back).await,
            Notice::ProfileReleased(cookie) => iface::profile_released(&conn, *cookie).await,
            Notice::Stats(stats) => iface::emit_stats(&conn, stats).await,
            Notice::CheckProgress {
                fraction,
                scheduler,
            } => iface::check_progress(&conn, *fraction, scheduler).await,
            Notice::CheckFinished { completed, message } => {
                iface::check_finished(&conn, *completed, message).await
            }
        }
        // Dropping the delivery tells the core it has been handled.
    }
}
