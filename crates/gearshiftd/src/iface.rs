//! `io.github.gearshift.Scheduler1` on the bus: authorization, then the daemon's operations.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use gearshift_dbus::{
    model::stats_to_dict, CheckOptions, Error, HoldInfo, ACTION_MANAGE, ACTION_SET_FOREGROUND,
    ACTION_SWITCH_PROFILE, OBJECT_PATH,
};
use gearshift_types::Stats;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;
use zbus::Connection;

use crate::check::Checks;
use crate::daemon::Daemon;
use crate::known_good::FellBack;
use crate::model::Changed;
use crate::polkit::{authorize, caller_uid};

pub struct Scheduler1 {
    daemon: Arc<Daemon>,
    checks: Arc<Checks>,
}

impl Scheduler1 {
    pub fn new(daemon: Arc<Daemon>, checks: Arc<Checks>) -> Self {
        Self { daemon, checks }
    }
}

/// Property writes from the bus are authorized like method calls; a write without a message
/// comes from inside the daemon.
async fn authorize_write(
    conn: &Connection,
    header: Option<&Header<'_>>,
    action: &str,
) -> Result<(), Error> {
    match header {
        Some(header) => authorize(conn, header, action).await,
        None => Ok(()),
    }
}

fn sender(header: &Header<'_>) -> String {
    header.sender().map(|s| s.to_string()).unwrap_or_default()
}

#[zbus::interface(name = "io.github.gearshift.Scheduler1")]
impl Scheduler1 {
    #[zbus(name = "SetProfile")]
    async fn set_profile_method(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        profile: String,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_SWITCH_PROFILE).await?;
        self.daemon.set_profile(&profile).await
    }

    async fn set_mode(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        mode: String,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_SWITCH_PROFILE).await?;
        self.daemon.set_mode(&mode).await
    }

    #[zbus(name = "SetPreemption")]
    async fn set_preemption_method(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        enabled: bool,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_SWITCH_PROFILE).await?;
        self.daemon.set_preemption(enabled).await
    }

    async fn start(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_MANAGE).await?;
        self.daemon.start().await
    }

    async fn stop(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_MANAGE).await?;
        self.daemon.stop().await
    }

    async fn restart(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_MANAGE).await?;
        self.daemon.restart().await
    }

    /// Measures responsiveness under the default scheduler and the chosen profiles; returns
    /// once under way (CheckProgress, then CheckFinished and LastCheck).
    async fn start_check(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        options: HashMap<String, OwnedValue>,
    ) -> Result<(), Error> {
        let options = CheckOptions::from_dict(&options)?;
        authorize(conn, &header, ACTION_MANAGE).await?;
        self.checks.start(options, &sender(&header)).await
    }

    async fn cancel_check(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_MANAGE).await?;
        self.checks.cancel()
    }

    #[zbus(out_args("cookie"))]
    async fn hold_profile(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        profile: String,
        reason: String,
        application_id: String,
    ) -> Result<u32, Error> {
        authorize(conn, &header, ACTION_SWITCH_PROFILE).await?;
        self.daemon
            .choices()
            .hold_profile(&profile, &reason, &application_id, &sender(&header))
            .await
    }

    async fn release_profile(
        &self,
        #[zbus(header)] header: Header<'_>,
        cookie: u32,
    ) -> Result<(), Error> {
        self.daemon
            .choices()
            .release_profile(cookie, &sender(&header))
            .await
    }

    async fn set_foreground(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] conn: &Connection,
        pid: u32,
    ) -> Result<(), Error> {
        authorize(conn, &header, ACTION_SET_FOREGROUND).await?;
        let uid = caller_uid(conn, &header).await?;
        self.daemon
            .foreground()
            .set(pid, uid, &sender(&header))
            .await
    }

    #[zbus(out_args("stats"))]
    async fn get_stats(&self) -> Result<HashMap<String, OwnedValue>, Error> {
        Ok(stats_to_dict(&self.daemon.stats().await?))
    }

    #[zbus(out_args("cookie"))]
    async fn subscribe_stats(
        &self,
        #[zbus(header)] header: Header<'_>,
        interval_ms: u32,
    ) -> Result<u32, Error> {
        self.daemon
            .stats_hub
            .subscribe(&sender(&header), interval_ms)
    }

    async fn unsubscribe_stats(
        &self,
        #[zbus(header)] header: Header<'_>,
        cookie: u32,
    ) -> Result<(), Error> {
        self.daemon.stats_hub.unsubscribe(&sender(&header), cookie)
    }

    #[zbus(signal)]
    async fn stats(
        emitter: &SignalEmitter<'_>,
        stats: HashMap<String, OwnedValue>,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn scheduler_exited(
        emitter: &SignalEmitter<'_>,
        reason: &str,
        will_restart: bool,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn check_progress(
        emitter: &SignalEmitter<'_>,
        fraction: f64,
        scheduler: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn check_finished(
        emitter: &SignalEmitter<'_>,
        completed: bool,
        message: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn profile_released(emitter: &SignalEmitter<'_>, cookie: u32) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn fell_back(
        emitter: &SignalEmitter<'_>,
        failed_profile: &str,
        fallback_profile: &str,
        failures: u32,
        reason: &str,
    ) -> zbus::Result<()>;

    #[zbus(property)]
    fn state(&self) -> String {
        self.daemon.model().state.to_string()
    }

    #[zbus(property)]
    fn state_reason(&self) -> String {
        self.daemon.model().reason
    }

    #[zbus(property)]
    fn profile(&self) -> String {
        self.daemon.model().profile
    }

    #[zbus(property)]
    async fn set_profile(
        &self,
        value: String,
        #[zbus(header)] header: Option<Header<'_>>,
        #[zbus(connection)] conn: &Connection,
    ) -> zbus::fdo::Result<()> {
        authorize_write(conn, header.as_ref(), ACTION_SWITCH_PROFILE).await?;
        Ok(self.daemon.set_profile(&value).await?)
    }

    #[zbus(property)]
    fn profile_reason(&self) -> String {
        self.daemon.model().profile_reason.as_str().to_owned()
    }

    #[zbus(property)]
    fn active_holds(&self) -> Vec<HashMap<String, OwnedValue>> {
        self.daemon
            .model()
            .holds
            .iter()
            .map(|hold| {
                HoldInfo {
                    cookie: hold.cookie,
                    profile: hold.profile.clone(),
                    reason: hold.reason.clone(),
                    application_id: hold.application_id.clone(),
                }
                .to_dict()
            })
            .collect()
    }

    #[zbus(property)]
    fn on_battery(&self) -> bool {
        self.daemon.model().on_battery
    }

    #[zbus(property)]
    fn power_profile(&self) -> String {
        self.daemon.model().power_profile
    }

    #[zbus(property)]
    fn profiles(&self) -> Vec<HashMap<String, OwnedValue>> {
        self.daemon.profiles().iter().map(|p| p.to_dict()).collect()
    }

    #[zbus(property)]
    fn mode(&self) -> String {
        self.daemon.model().settings.mode.to_string()
    }

    #[zbus(property)]
    fn preemption(&self) -> bool {
        self.daemon.model().settings.preemption
    }

    #[zbus(property)]
    async fn set_preemption(
        &self,
        value: bool,
        #[zbus(header)] header: Option<Header<'_>>,
        #[zbus(connection)] conn: &Connection,
    ) -> zbus::fdo::Result<()> {
        authorize_write(conn, header.as_ref(), ACTION_SWITCH_PROFILE).await?;
        Ok(self.daemon.set_preemption(value).await?)
    }

    #[zbus(property)]
    fn auto_power_source(&self) -> bool {
        self.daemon.model().auto_power_source
    }

    #[zbus(property)]
    async fn set_auto_power_source(
        &self,
        value: bool,
        #[zbus(header)] header: Option<Header<'_>>,
        #[zbus(connection)] conn: &Connection,
    ) -> zbus::fdo::Result<()> {
        authorize_write(conn, header.as_ref(), ACTION_MANAGE).await?;
        self.daemon.set_auto_power_source(value).await;
        Ok(())
    }

    #[zbus(property)]
    fn follow_power_profile(&self) -> bool {
        self.daemon.model().follow_power_profile
    }

    #[zbus(property)]
    async fn set_follow_power_profile(
        &self,
        value: bool,
        #[zbus(header)] header: Option<Header<'_>>,
        #[zbus(connection)] conn: &Connection,
    ) -> zbus::fdo::Result<()> {
        authorize_write(conn, header.as_ref(), ACTION_MANAGE).await?;
        self.daemon.set_follow_power_profile(value).await;
        Ok(())
    }

    #[zbus(property)]
    fn foreground_app(&self) -> String {
        self.daemon.model().foreground_name().to_owned()
    }

    #[zbus(property)]
    fn foreground_boost(&self) -> bool {
        self.daemon.model().foreground_boost
    }

    #[zbus(property)]
    fn sched_ext_supported(&self) -> bool {
        self.daemon.sched_ext_supported()
    }

    #[zbus(property)]
    fn check_running(&self) -> bool {
        self.checks.running()
    }

    #[zbus(property)]
    fn last_check(&self) -> HashMap<String, OwnedValue> {
        self.checks
            .last()
            .map(|report| report.to_dict())
            .unwrap_or_default()
    }

    #[zbus(property)]
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_owned()
    }
}

/// Emits PropertiesChanged for what changed. Failing to emit is logged, not fatal.
pub async fn publish(conn: &Connection, changed: Changed) {
    let iface = match conn
        .object_server()
        .interface::<_, Scheduler1>(OBJECT_PATH)
        .await
    {
        Ok(iface) => iface,
        Err(_) => return, // not served yet
    };
    let emitter = iface.signal_emitter();
    let iface = iface.get().await;
    let mut results = Vec::new();
    if changed.state {
        results.push(iface.state_changed(emitter).await);
    }
    if changed.reason {
        results.push(iface.state_reason_changed(emitter).await);
    }
    if changed.profile {
        results.push(iface.profile_changed(emitter).await);
    }
    if changed.profile_reason {
        results.push(iface.profile_reason_changed(emitter).await);
    }
    if changed.holds {
        results.push(iface.active_holds_changed(emitter).await);
    }
    if changed.on_battery {
        results.push(iface.on_battery_changed(emitter).await);
    }
    if changed.power_profile {
        results.push(iface.power_profile_changed(emitter).await);
    }
    if changed.mode {
        results.push(iface.mode_changed(emitter).await);
    }
    if changed.preemption {
        results.push(iface.preemption_changed(emitter).await);
    }
    if changed.auto_power_source {
        results.push(iface.auto_power_source_changed(emitter).await);
    }
    if changed.follow_power_profile {
        results.push(iface.follow_power_profile_changed(emitter).await);
    }
    if changed.foreground_app {
        results.push(iface.foreground_app_changed(emitter).await);
    }
    if changed.foreground_boost {
        results.push(iface.foreground_boost_changed(emitter).await);
    }
    if changed.check {
        results.push(iface.check_running_changed(emitter).await);
        results.push(iface.last_check_changed(emitter).await);
    }
    for e in results.into_iter().filter_map(Result::err) {
        tracing::warn!("cannot emit PropertiesChanged: {e}");
    }
}

fn emitter(conn: &Connection) -> Option<SignalEmitter<'_>> {
    SignalEmitter::new(conn, OBJECT_PATH).ok()
}

pub async fn scheduler_exited(conn: &Connection, reason: &str, will_restart: bool) {
    if let Some(e) = emitter(conn) {
        if let Err(err) = Scheduler1::scheduler_exited(&e, reason, will_restart).await {
            tracing::warn!("cannot emit SchedulerExited: {err}");
        }
    }
}

pub async fn fell_back(conn: &Connection, f: &FellBack) {
    if let Some(e) = emitter(conn) {
        let sent = Scheduler1::fell_back(
            &e,
            &f.failed_profile,
            &f.fallback_profile,
            f.failures,
            &f.reason,
        )
        .await;
        if let Err(err) = sent {
            tracing::warn!("cannot emit FellBack: {err}");
        }
    }
}

pub async fn profile_released(conn: &Connection, cookie: u32) {
    if let Some(e) = emitter(conn) {
        if let Err(err) = Scheduler1::profile_released(&e, cookie).await {
            tracing::warn!("cannot emit ProfileReleased: {err}");
        }
    }
}

pub async fn check_progress(conn: &Connection, fraction: f64, scheduler: &str) {
    if let Some(e) = emitter(conn) {
        if let Err(err) = Scheduler1::check_progress(&e, fraction, scheduler).await {
            tracing::warn!("cannot emit CheckProgress: {err}");
        }
    }
}

pub async fn check_finished(conn: &Connection, completed: bool, message: &str) {
    if let Some(e) = emitter(conn) {
        if let Err(err) = Scheduler1::check_finished(&e, completed, message).await {
            tracing::warn!("cannot emit CheckFinished: {err}");
        }
    }
}

pub async fn emit_stats(conn: &Connection, stats: &Stats) {
    if let Some(e) = emitter(conn) {
        if let Err(err) = Scheduler1::stats(&e, stats_to_dict(stats)).await {
            tracing::warn!("cannot emit Stats: {err}");
        }
    }
}

/// Drops the stats subscriptions, holds and foreground of clients that leave the bus, and
/// cancels a check one of them started.
pub async fn watch_departures(
    conn: Connection,
    daemon: Arc<Daemon>,
    checks: Arc<Checks>,
) -> zbus::Result<()> {
    let dbus = zbus::fdo::DBusProxy::new(&conn).await?;
    let mut changes = dbus.receive_name_owner_changed().await?;
    while let Some(signal) = changes.next().await {
        let Ok(args) = signal.args() else { continue };
        if args.new_owner().is_none() && args.name().starts_with(':') {
            daemon.stats_hub.owner_left(args.name());
            daemon.choices().holder_left(args.name()).await;
            daemon.foreground().setter_left(args.name()).await;
            checks.owner_left(args.name());
        }
    }
    Ok(())
}
