//! The tray holds a profile while GameMode runs a game: GameMode is a python-dbusmock double of
//! `com.feralinteractive.GameMode` on the private session bus, gearshiftd the real daemon on the
//! private system bus. The double's `ClientCount` changes as gamemoded's does, with a
//! `PropertiesChanged` signal.

mod support;

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};

use gearshift_dbus::HoldInfo;
use support::{eventually, World};
use zbus::zvariant::{OwnedValue, Value};

const NAME: &str = "com.feralinteractive.GameMode";
const PATH: &str = "/com/feralinteractive/GameMode";
const TRAY_ID: &str = "io.github.gearshift.Gearshift.Tray";

/// GameMode's double on the session bus.
struct GameMode {
    child: Child,
    conn: zbus::Connection,
}

impl GameMode {
    async fn start(w: &World, games: i32) -> Self {
        let child = Command::new("/usr/bin/python3")
            .args(["-m", "dbusmock", NAME, PATH, NAME])
            .env("DBUS_SESSION_BUS_ADDRESS", w.session.address())
            .stdout(Stdio::null())
            .spawn()
            .expect("python3-dbusmock");
        let conn = w.session.connect().await;
        let bus = zbus::fdo::DBusProxy::new(&conn).await.expect("bus proxy");
        eventually("GameMode's double on the session bus", || async {
            bus.name_has_owner(NAME.try_into().expect("name"))
                .await
                .unwrap_or(false)
        })
        .await;
        let double = Self { child, conn };
        double
            .call(
                "org.freedesktop.DBus.Mock",
                "AddProperty",
                &(NAME, "ClientCount", Value::from(games)),
            )
            .await;
        double
    }

    /// Calls `method` with (interface, property, value), as both calls used here take.
    async fn call(&self, interface: &str, method: &str, body: &(&str, &str, Value<'_>)) {
        self.conn
            .call_method(Some(NAME), PATH, Some(interface), method, body)
            .await
            .unwrap_or_else(|e| panic!("{method} on GameMode's double: {e}"));
    }

    /// A game registers or leaves: gamemoded sends the new count in `PropertiesChanged`.
    async fn set_games(&self, games: i32) {
        self.call(
            "org.freedesktop.DBus.Properties",
            "Set",
            &(NAME, "ClientCount", Value::from(games)),
        )
        .await;
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for GameMode {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The profiles held by the tray, as gearshiftd lists them.
async fn tray_holds(w: &World) -> Vec<String> {
    let holds: Vec<HashMap<String, OwnedValue>> = w.proxy.active_holds().await.expect("holds");
    holds
        .iter()
        .filter_map(HoldInfo::from_dict)
        .filter(|h| h.application_id == TRAY_ID)
        .map(|h| h.profile)
        .collect()
}

async fn wait_for_holds(w: &World, what: &str, want: &[&str]) {
    eventually(what, || async { tray_holds(w).await == want }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_game_holds_the_interactive_profile_until_it_ends() {
    let mut w = World::start().await;
    w.proxy.start().await.expect("Start");
    w.proxy.set_profile("throughput").await.expect("SetProfile");
    let mut gamemode = GameMode::start(&w, 0).await;
    w.start_tray().await;
    // Give the tray time to see GameMode idle; no game, no hold.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(tray_holds(&w).await.is_empty(), "{}", w.tray_log());

    gamemode.set_games(1).await;
    wait_for_holds(&w, "a hold while a game runs", &["interactive"]).await;
    eventually("Profile interactive", || async {
        w.profile().await == "interactive"
    })
    .await;
    gamemode.set_games(2).await;
    gamemode.set_games(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        tray_holds(&w).await,
        ["interactive"],
        "one hold for any number of games"
    );

    gamemode.set_games(0).await;
    wait_for_holds(&w, "the hold released after the last game", &[]).await;
    eventually("Profile throughput again", || async {
        w.profile().await == "throughput"
    })
    .await;

    // gearshiftd restarts mid-game: the tray holds again with the new daemon.
    gamemode.set_games(1).await;
    wait_for_holds(&w, "a hold for the next game", &["interactive"]).await;
    w.daemon.restart();
    wait_for_holds(&w, "the hold taken again after a restart", &["interactive"]).await;

    // GameMode leaves the bus (crashed, or its session ended): the hold ends with it.
    gamemode.stop();
    wait_for_holds(&w, "the hold released when GameMode left", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_running_before_the_tray_started_is_held() {
    let mut w = World::start().await;
    w.proxy.start().await.expect("Start");
    let _gamemode = GameMode::start(&w, 1).await;
    w.start_tray().await;
    wait_for_holds(&w, "a hold for the game already running", &["interactive"]).await;
}
