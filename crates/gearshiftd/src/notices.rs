//! What the core has to tell its clients, as notices. The core decides and emits them; the
//! D-Bus layer (bus_signals.rs) turns each into PropertiesChanged or a signal. The core never
//! names the bus.

use std::sync::OnceLock;

use gearshift_types::Stats;
use tokio::sync::{mpsc, oneshot};

use crate::known_good::FellBack;
use crate::model::Changed;

/// Something clients should hear about.
#[derive(Debug, Clone)]
pub enum Notice {
    /// These properties have new values (read them from the model).
    PropertiesChanged(Changed),
    /// The scheduler process ended or is being restarted.
    SchedulerExited { reason: String, will_restart: bool },
    /// The restart policy gave up on a profile and the last known good one took its place.
    FellBack(FellBack),
    /// A hold ended without its holder releasing it (or with, for the holder's own call).
    ProfileReleased(u32),
    /// A stats snapshot for the subscribers (boxed: it is by far the largest notice).
    Stats(Box<Stats>),
    /// How far the running check is (0–1) and which scheduler it measures.
    CheckProgress { fraction: f64, scheduler: String },
    /// The check ended: completed, or why not.
    CheckFinished { completed: bool, message: String },
}

/// One notice on its way; dropping it tells the core it has been handled.
pub struct Delivery {
    pub notice: Notice,
    _handled: oneshot::Sender<()>,
}

/// Where the core sends its notices. Until someone listens they go nowhere.
#[derive(Default)]
pub struct Notices {
    listener: OnceLock<mpsc::UnboundedSender<Delivery>>,
}

impl Notices {
    /// Hands out the notices from now on; None if someone listens already.
    pub fn listen(&self) -> Option<mpsc::UnboundedReceiver<Delivery>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.listener.set(tx).ok().map(|()| rx)
    }

    /// Sends `notice` and waits until it has been handled: a call's signals then go out
    /// before its reply, and in the order the core emitted them.
    pub async fn emit(&self, notice: Notice) {
        let Some(listener) = self.listener.get() else {
            return;
        };
        let (handled, done) = oneshot::channel();
        let delivery = Delivery {
            notice,
            _handled: handled,
        };
        if listener.send(delivery).is_ok() {
            // An error only says the listener dropped the notice: handled all the same.
            let _ = done.await;
        }
    }
}
