//! GameMode: while Feral's GameMode runs a game in this session, hold a profile with gearshiftd.
//!
//! GameMode's daemon (`gamemoded`) lives on each user's session bus and counts the games that
//! asked for it (`ClientCount`, sent in `PropertiesChanged` whenever a game registers or
//! leaves). The tray follows that count by signal and keeps one hold (`HoldProfile`) on the
//! system bus while it is above zero. The hold ends with `ReleaseProfile` when the last game
//! leaves, when GameMode leaves the bus, and by itself when the tray exits (gearshiftd drops a
//! holder's holds when its connection closes). After gearshiftd restarts, the hold is taken again.
//!
//! GameMode is never started by this: it is D-Bus activated, and the tray only calls it while
//! it has an owner, by its unique name.

use std::collections::HashMap;

use futures_util::StreamExt;
use gearshift_dbus::{Followed, Scheduler1Proxy};
use zbus::fdo::{DBusProxy, PropertiesProxy};
use zbus::names::{BusName, InterfaceName, UniqueName};
use zbus::zvariant::OwnedValue;
use zbus::Connection;

const GAMEMODE_NAME: &str = "com.feralinteractive.GameMode";
const GAMEMODE_PATH: &str = "/com/feralinteractive/GameMode";
const GAMEMODE_INTERFACE: &str = "com.feralinteractive.GameMode";
const CLIENT_COUNT: &str = "ClientCount";
/// The application id gearshiftd shows for the hold (`ActiveHolds`).
const APPLICATION_ID: &str = "io.github.gearshift.Gearshift.Tray";

/// What the tray knows, and what it should do about it: a pure state machine, so that every
/// order of events (a game starts before gearshiftd, GameMode crashes mid-game, …) is testable
/// without buses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GameModeHold {
    /// Games GameMode counts now; 0 while GameMode is not on the bus.
    games: u32,
    /// Whether gearshiftd is on the system bus.
    daemon_present: bool,
    /// The cookie of our hold, while gearshiftd has it.
    cookie: Option<u32>,
    /// gearshiftd refused the hold for the current run of games: don't ask again until the
    /// games end or gearshiftd restarts (a denial or an unknown profile will not change).
    refused: bool,
}

/// The call the state asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Hold,
    Release(u32),
    Nothing,
}

impl GameModeHold {
    pub fn games_changed(&mut self, games: u32) {
        if games == 0 {
            self.refused = false;
        }
        self.games = games;
    }

    pub fn daemon_changed(&mut self, present: bool) {
        self.daemon_present = present;
        // A hold lives in gearshiftd's memory: it ends with the process either way.
        self.cookie = None;
        self.refused = false;
    }

    pub fn held(&mut self, cookie: u32) {
        self.cookie = Some(cookie);
    }

    pub fn hold_refused(&mut self) {
        self.refused = true;
    }

    pub fn released(&mut self) {
        self.cookie = None;
    }

    pub fn next(&self) -> Action {
        match (self.games > 0, self.cookie) {
            (true, None) if self.daemon_present && !self.refused => Action::Hold,
            (false, Some(cookie)) => Action::Release(cookie),
            _ => Action::Nothing,
        }
    }
}

/// Something that changed on either bus.
enum Change {
    Games(u32),
    GameModeOwner(Option<UniqueName<'static>>),
    DaemonOwner(bool),
}

/// Follows GameMode on `session` and holds `profile` with gearshiftd on `system` while a game
/// runs. Returns only if a bus connection ends.
pub async fn follow(session: Connection, system: Connection, profile: String) -> zbus::Result<()> {
    let session_bus = DBusProxy::new(&session).await?;
    let scheduler = Scheduler1Proxy::builder(&system)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await?;

    // Subscribe before reading the current values, so no change falls between the two.
    let gamemode_owner = session_bus
        .receive_name_owner_changed_with_args(&[(0, GAMEMODE_NAME)])
        .await?
        .filter_map(|signal| async move {
            let args = signal.args().ok()?;
            let owner = Option::<UniqueName<'_>>::from(args.new_owner().clone());
            Some(Change::GameModeOwner(owner.map(|o| o.into_owned())))
        });
    let counts = count_changes(&session).await?;
    // gearshiftd's comings and goings, as every client follows them; its first update says
    // whether it is there now. A new instance (Appeared) has none of the old one's holds.
    let daemon_owner = gearshift_dbus::follow(&system)
        .await?
        .filter_map(|update| async move {
            match update {
                Followed::Appeared(_) => Some(Change::DaemonOwner(true)),
                Followed::Gone => Some(Change::DaemonOwner(false)),
                Followed::Changed(_) => None,
            }
        });
    let changes = futures_util::stream::select(
        futures_util::stream::select(gamemode_owner, counts),
        daemon_owner,
    );
    let mut changes = std::pin::pin!(changes);

    let mut state = GameModeHold::default();
    if let Some(owner) = owner_of(&session_bus, GAMEMODE_NAME).await {
        state.games_changed(read_games(&session, owner).await);
    }
    act(&mut state, &scheduler, &profile).await;

    while let Some(change) = changes.next().await {
        match change {
            Change::Games(games) => state.games_changed(games),
            Change::GameModeOwner(None) => state.games_changed(0),
            Change::GameModeOwner(Some(owner)) => {
                state.games_changed(read_games(&session, owner).await)
            }
            Change::DaemonOwner(present) => state.daemon_changed(present),
        }
        act(&mut state, &scheduler, &profile).await;
    }
    Ok(())
}

/// `ClientCount` from GameMode's `PropertiesChanged`, matched by GameMode's well-known name (the
/// bus daemon resolves it to whoever owns it, across restarts).
async fn count_changes(
    session: &Connection,
) -> zbus::Result<impl futures_util::Stream<Item = Change>> {
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender(GAMEMODE_NAME)?
        .path(GAMEMODE_PATH)?
        .interface("org.freedesktop.DBus.Properties")?
        .member("PropertiesChanged")?
        .arg(0, GAMEMODE_INTERFACE)?
        .build();
    let stream = zbus::MessageStream::for_match_rule(rule, session, None).await?;
    Ok(stream.filter_map(|message| async move {
        let message = message.ok()?;
        let (_, changed, _): (InterfaceName<'_>, HashMap<String, OwnedValue>, Vec<String>) =
            message.body().deserialize().ok()?;
        let count = i32::try_from(changed.get(CLIENT_COUNT)?).ok()?;
        Some(Change::Games(u32::try_from(count).unwrap_or(0)))
    }))
}

async fn owner_of(bus: &DBusProxy<'_>, name: &str) -> Option<UniqueName<'static>> {
    let name = BusName::try_from(name).ok()?;
    let owner = bus.get_name_owner(name).await.ok()?;
    Some(owner.into_inner())
}

/// GameMode's count, asked of its current owner (a call to the well-known name could start
/// GameMode by D-Bus activation). A failed read counts as no game: the next signal corrects it.
async fn read_games(session: &Connection, owner: UniqueName<'static>) -> u32 {
    let read = async {
        let properties = PropertiesProxy::builder(session)
            .destination(owner)?
            .path(GAMEMODE_PATH)?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await?;
        let interface = InterfaceName::try_from(GAMEMODE_INTERFACE)?;
        let value = properties.get(interface, CLIENT_COUNT).await?;
        Ok::<i32, zbus::Error>(i32::try_from(&value)?)
    };
    match read.await {
        Ok(count) => u32::try_from(count).unwrap_or(0),
        Err(e) => {
            tracing::warn!("cannot read GameMode's {CLIENT_COUNT}: {e}");
            0
        }
    }
}

/// Carries out what the state asks for until it asks for nothing more.
async fn act(state: &mut GameModeHold, scheduler: &Scheduler1Proxy<'_>, profile: &str) {
    loop {
        match state.next() {
            Action::Nothing => return,
            Action::Hold => {
                let reason = "A game is running (GameMode)";
                match scheduler
                    .hold_profile(profile, reason, APPLICATION_ID)
                    .await
                {
                    Ok(cookie) => {
                        tracing::info!("GameMode runs a game: holding profile {profile}");
                        state.held(cookie);
                    }
                    Err(e) => {
                        tracing::warn!("GameMode runs a game, but holding {profile} failed: {e}");
                        state.hold_refused();
                    }
                }
            }
            Action::Release(cookie) => {
                if let Err(e) = scheduler.release_profile(cookie).await {
                    // Already gone (gearshiftd restarted meanwhile): nothing is left to end.
                    tracing::debug!("releasing the GameMode hold: {e}");
                }
                tracing::info!("no game runs under GameMode any more: hold released");
                state.released();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_daemon() -> GameModeHold {
        let mut s = GameModeHold::default();
        s.daemon_changed(true);
        s
    }

    #[test]
    fn a_game_is_held_and_released_when_it_ends() {
        let mut s = with_daemon();
        assert_eq!(s.next(), Action::Nothing);
        s.games_changed(1);
        assert_eq!(s.next(), Action::Hold);
        s.held(7);
        s.games_changed(2);
        assert_eq!(
            s.next(),
            Action::Nothing,
            "one hold for any number of games"
        );
        s.games_changed(0);
        assert_eq!(s.next(), Action::Release(7));
        s.released();
        assert_eq!(s.next(), Action::Nothing);
    }

    #[test]
    fn a_game_started_before_gearshiftd_is_held_once_it_appears() {
        let mut s = GameModeHold::default();
        s.games_changed(1);
        assert_eq!(s.next(), Action::Nothing);
        s.daemon_changed(true);
        assert_eq!(s.next(), Action::Hold);
    }

    #[test]
    fn a_restarted_gearshiftd_gets_the_hold_again() {
        let mut s = with_daemon();
        s.games_changed(1);
        s.held(3);
        s.daemon_changed(false);
        assert_eq!(
            s.next(),
            Action::Nothing,
            "no release to a daemon that is gone"
        );
        s.daemon_changed(true);
        assert_eq!(s.next(), Action::Hold);
    }

    #[test]
    fn a_refused_hold_is_not_asked_again_until_the_games_end() {
        let mut s = with_daemon();
        s.games_changed(1);
        s.hold_refused();
        assert_eq!(s.next(), Action::Nothing);
        s.games_changed(2);
        assert_eq!(s.next(), Action::Nothing);
        s.games_changed(0);
        s.games_changed(1);
        assert_eq!(s.next(), Action::Hold);
    }
}
