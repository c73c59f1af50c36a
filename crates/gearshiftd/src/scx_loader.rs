//! scx_loader's D-Bus interface, `org.scx.Loader` at `/org/scx/Loader`, served by gearshiftd
//! so that scxctl, CachyOS's scx-manager and its power-profiles-daemon patch can see and drive
//! scx_gearshift. The contract is `dbus/org.scx.Loader.xml`.
//!
//! This layer only translates: scx_loader's modes become profiles (modes.rs), its start, stop
//! and restart are the daemon's own, authorized with the same polkit actions as
//! `io.github.gearshift.Scheduler1`. The name is taken only while nobody owns it and no
//! scx_loader is installed to be started on demand: a real scx_loader always comes first.

mod modes;

use std::sync::{Arc, Mutex};

use gearshift_dbus::{Error, ACTION_MANAGE, ACTION_SWITCH_PROFILE};
use zbus::fdo::{DBusProxy, RequestNameFlags, RequestNameReply};
use zbus::message::Header;
use zbus::names::BusName;
use zbus::object_server::SignalEmitter;
use zbus::Connection;

use crate::daemon::Daemon;
use crate::polkit::authorize;
use crate::state::lock;
use modes::LoaderMode;

pub const BUS_NAME: &str = "org.scx.Loader";
pub const OBJECT_PATH: &str = "/org/scx/Loader";
/// The one scheduler this loader runs, as scx_loader names schedulers (the binary's name).
pub const SCHEDULER: &str = "scx_gearshift";
/// What scx_loader reports as the current scheduler while none runs.
const NO_SCHEDULER: &str = "unknown";
pub const ERROR_UNSUPPORTED_SCHEDULER: &str = "io.github.gearshift.Error.UnsupportedScheduler";
pub const ERROR_UNSUPPORTED_ARGUMENTS: &str = "io.github.gearshift.Error.UnsupportedArguments";

/// The object behind `org.scx.Loader`.
pub struct Loader {
    daemon: Arc<Daemon>,
    /// The mode a client chose last: reported while the profile it selected is active, since
    /// several modes may select the same profile.
    asked: Mutex<Option<LoaderMode>>,
    /// The property values last announced with PropertiesChanged.
    announced: Mutex<Announced>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Announced {
    scheduler: &'static str,
    mode: u32,
}

/// Refuses any scheduler but ours, naming it. "gearshift" is accepted too: scxctl shows the
/// names without their "scx_" prefix.
fn check_scheduler(name: &str) -> Result<(), Error> {
    if name == SCHEDULER || name == "gearshift" {
        return Ok(());
    }
    Err(Error::Other {
        name: ERROR_UNSUPPORTED_SCHEDULER.into(),
        message: format!(
            "gearshiftd cannot run {name:?}: it serves org.scx.Loader for {SCHEDULER} only. \
             To run other sched_ext schedulers, use scx_loader itself and set \
             [compat] scx_loader = false in /etc/gearshift/config.toml."
        ),
    })
}

fn check_mode(number: u32) -> Result<LoaderMode, Error> {
    LoaderMode::from_number(number).ok_or_else(|| {
        Error::InvalidMode(format!(
            "{number} is not an scx_loader mode; the modes are {}.",
            LoaderMode::listing()
        ))
    })
}

/// The `…WithArgs` methods: gearshiftd sets the scheduler's settings itself, so only an empty
/// list (the scheduler's own defaults, i.e. Auto) is accepted.
fn check_no_args(args: &[String]) -> Result<(), Error> {
    if args.is_empty() {
        return Ok(());
    }
    Err(Error::Other {
        name: ERROR_UNSUPPORTED_ARGUMENTS.into(),
        message: format!(
            "gearshiftd does not pass command-line arguments to {SCHEDULER} (asked for {args:?}): \
             choose a mode instead, or a profile with gearshiftctl; the scheduler's tunables are \
             [scheduler] args in /etc/gearshift/config.toml."
        ),
    })
}

impl Loader {
    fn new(daemon: Arc<Daemon>) -> Self {
        let this = Self {
            daemon,
            asked: Mutex::new(None),
            announced: Mutex::new(Announced {
                scheduler: NO_SCHEDULER,
                mode: 0,
            }),
        };
        *lock(&this.announced) = this.now();
        this
    }

    /// The property values as they are now.
    fn now(&self) -> Announced {
        let model = self.daemon.model();
        if !model.scheduler_active() {
            // scx_loader's contract: Auto while no scheduler runs.
            return Announced {
                scheduler: NO_SCHEDULER,
                mode: LoaderMode::Auto.number(),
            };
        }
        let asked = *lock(&self.asked);
        Announced {
            scheduler: SCHEDULER,
            mode: LoaderMode::for_profile(&model.profile, asked, self.daemon.config()).number(),
        }
    }

    /// Selects the profile of `mode` and starts the scheduler unless it runs: what
    /// StartScheduler and SwitchScheduler mean here. Choosing a profile needs switch-profile,
    /// starting needs manage, as on Scheduler1; both are checked before anything changes.
    async fn select(
        &self,
        conn: &Connection,
        header: &Header<'_>,
        mode: LoaderMode,
    ) -> Result<(), Error> {
        let profile = mode.profile(self.daemon.config()).to_owned();
        authorize(conn, header, ACTION_SWITCH_PROFILE).await?;
        let needs_start = !self.daemon.model().scheduler_active();
        if needs_start {
            authorize(conn, header, ACTION_MANAGE).await?;
        }
        tracing::info!(
            "org.scx.Loader: {mode:?} mode, profile {profile}{}",
            if needs_start { ", starting" } else { "" }
        );
        // Before the switch, so that the PropertiesChanged it causes reports this mode.
        *lock(&self.asked) = Some(mode);
        let result = self.select_profile(&profile, needs_start).await;
        self.announce(conn).await;
        result
    }

    /// StartScheduler and SwitchScheduler: checked, then [`Loader::select`].
    async fn select_mode(
        &self,
        conn: &Connection,
        header: &Header<'_>,
        scx_name: &str,
        sched_mode: u32,
    ) -> Result<(), Error> {
        check_scheduler(scx_name)?;
        let mode = check_mode(sched_mode)?;
        self.select(conn, header, mode).await
    }

    /// The `…WithArgs` methods: only no arguments (Auto) can be honoured.
    async fn select_args(
        &self,
        conn: &Connection,
        header: &Header<'_>,
        scx_name: &str,
        scx_args: &[String],
    ) -> Result<(), Error> {
        check_scheduler(scx_name)?;
        check_no_args(scx_args)?;
        self.select(conn, header, LoaderMode::Auto).await
    }

    async fn select_profile(&self, profile: &str, start: bool) -> Result<(), Error> {
        self.daemon.set_profile(profile).await?;
        if start {
            self.daemon.start().await?;
        }
        Ok(())
    }

    /// Emits PropertiesChanged for the properties whose values differ from the last announced.
    async fn announce(&self, conn: &Connection) {
        let now = self.now();
        let before = std::mem::replace(&mut *lock(&self.announced), now.clone());
        if before == now {
            return;
        }
        let Ok(emitter) = SignalEmitter::new(conn, OBJECT_PATH) else {
            return;
        };
        let mut results = Vec::new();
        if before.scheduler != now.scheduler {
            results.push(self.current_scheduler_changed(&emitter).await);
        }
        if before.mode != now.mode {
            results.push(self.scheduler_mode_changed(&emitter).await);
        }
        for e in results.into_iter().filter_map(Result::err) {
            tracing::warn!("cannot emit PropertiesChanged on {OBJECT_PATH}: {e}");
        }
    }
}

#[zbus::interface(name = "org.scx.Loader")]
impl Loader {
    async fn start_scheduler(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        scx_name: String,
        sched_mode: u32,
    ) -> Result<(), Error> {
        self.select_mode(conn, &header, &scx_name, sched_mode).await
    }

    async fn start_scheduler_with_args(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        scx_name: String,
        scx_args: Vec<String>,
    ) -> Result<(), Error> {
        self.select_args(conn, &header, &scx_name, &scx_args).await
    }

    /// The same as StartScheduler: with one scheduler, switching is choosing its mode (and
    /// starting it if it does not run, as scx_loader does).
    async fn switch_scheduler(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        scx_name: String,
        sched_mode: u32,
    ) -> Result<(), Error> {
        self.select_mode(conn, &header, &scx_name, sched_mode).await
    }

    async fn switch_scheduler_with_args(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        scx_name: String,
        scx_args: Vec<String>,
    ) -> Result<(), Error> {
        self.select_args(conn, &header, &scx_name, &scx_args).await
    }

    async fn stop_scheduler(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_MANAGE).await?;
        tracing::info!("org.scx.Loader: stop");
        let result = self.daemon.stop().await;
        self.announce(conn).await;
        result
    }

    /// Fails while nothing runs, as scx_loader's does.
    async fn restart_scheduler(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_MANAGE).await?;
        let model = self.daemon.model();
        if !model.scheduler_active() {
            return Err(Error::NotRunning(format!(
                "No scheduler is running to restart ({SCHEDULER} is {}); start it instead.",
                model.state
            )));
        }
        tracing::info!("org.scx.Loader: restart");
        let result = self.daemon.restart().await;
        self.announce(conn).await;
        result
    }

    /// scx_gearshift in the mode of gearshiftd's default profile.
    async fn restore_default(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        let config = self.daemon.config();
        let mode = LoaderMode::for_profile(&config.default_profile, None, config);
        self.select(conn, &header, mode).await
    }

    /// Every mode selects a profile, so all are "configured".
    #[zbus(out_args("modes"))]
    fn scheduler_modes(&self, scx_name: String) -> Result<Vec<u32>, Error> {
        check_scheduler(&scx_name)?;
        Ok(LoaderMode::ALL.iter().map(|m| m.number()).collect())
    }

    #[zbus(out_args("mode_args"))]
    fn scheduler_mode_args(&self, scx_name: String) -> Result<Vec<(u32, Vec<String>)>, Error> {
        check_scheduler(&scx_name)?;
        let config = self.daemon.config();
        Ok(LoaderMode::ALL
            .iter()
            .map(|m| (m.number(), m.scheduler_args(config)))
            .collect())
    }

    #[zbus(property)]
    fn current_scheduler(&self) -> String {
        self.now().scheduler.to_owned()
    }

    #[zbus(property)]
    fn scheduler_mode(&self) -> u32 {
        self.now().mode
    }

    /// Always empty: gearshiftd never runs the scheduler with a client's arguments.
    #[zbus(property)]
    fn current_scheduler_args(&self) -> Vec<String> {
        Vec::new()
    }

    #[zbus(property)]
    fn supported_schedulers(&self) -> Vec<String> {
        vec![SCHEDULER.to_owned()]
    }

    #[zbus(property)]
    fn default_scheduler(&self) -> String {
        SCHEDULER.to_owned()
    }

    #[zbus(property)]
    fn default_mode(&self) -> u32 {
        let config = self.daemon.config();
        LoaderMode::for_profile(&config.default_profile, None, config).number()
    }
}

/// Tells `org.scx.Loader`'s clients what changed in the daemon's model, if it is served.
pub async fn publish(conn: &Connection) {
    if let Ok(iface) = conn
        .object_server()
        .interface::<_, Loader>(OBJECT_PATH)
        .await
    {
        iface.get().await.announce(conn).await;
    }
}

/// Serves `org.scx.Loader` if nobody else has it: not while another program owns the name,
/// nor while the bus can start an installed scx_loader for it. Logs which; never fails the
/// daemon.
pub async fn serve(conn: &Connection, daemon: Arc<Daemon>) {
    match take_name(conn, daemon).await {
        Ok(Outcome::Serving) => tracing::info!(
            "serving {BUS_NAME} (scx_loader's interface) for scxctl and other scx_loader clients"
        ),
        Ok(Outcome::Owned(owner)) => tracing::info!(
            "{BUS_NAME} is owned by another program ({owner}, scx_loader?): leaving it to that \
             one; gearshiftd serves only io.github.gearshift.Scheduler1"
        ),
        Ok(Outcome::Activatable) => tracing::info!(
            "{BUS_NAME} belongs to an installed scx_loader (the bus starts it on demand): \
             leaving it to scx_loader; set [compat] scx_loader = false to silence this"
        ),
        Err(e) => tracing::warn!("cannot serve {BUS_NAME}: {e}"),
    }
}

enum Outcome {
    Serving,
    /// Another connection owns the name (its unique name).
    Owned(String),
    Activatable,
}

async fn take_name(conn: &Connection, daemon: Arc<Daemon>) -> zbus::Result<Outcome> {
    let dbus = DBusProxy::new(conn).await?;
    // With scx_loader installed, its bus policy would also apply to whoever owns the name,
    // and owning it would keep the bus from starting scx_loader when a client calls.
    let activatable = dbus.list_activatable_names().await?;
    if activatable.iter().any(|n| n.as_str() == BUS_NAME) {
        return Ok(Outcome::Activatable);
    }
    // The object first, so that no call arrives before it is there.
    conn.object_server()
        .at(OBJECT_PATH, Loader::new(daemon))
        .await?;
    // DoNotQueue without ReplaceExisting: fail rather than wait for or take over the name;
    // no AllowReplacement: a loader started later cannot take it from under its clients.
    let reply = conn
        .request_name_with_flags(BUS_NAME, RequestNameFlags::DoNotQueue.into())
        .await;
    match reply {
        Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => Ok(Outcome::Serving),
        Ok(RequestNameReply::Exists | RequestNameReply::InQueue) | Err(zbus::Error::NameTaken) => {
            conn.object_server()
                .remove::<Loader, _>(OBJECT_PATH)
                .await?;
            let owner = dbus
                .get_name_owner(BusName::from_static_str(BUS_NAME)?)
                .await
                .map(|o| o.to_string())
                .unwrap_or_else(|_| "gone meanwhile".into());
            Ok(Outcome::Owned(owner))
        }
        Err(e) => {
            let _ = conn.object_server().remove::<Loader, _>(OBJECT_PATH).await;
            Err(e)
        }
    }
}
