//! Bad input of every kind gets an answer and changes nothing; stats subscriptions end with
//! their subscribers; damaged files and crashes lose nothing.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use gearshift_dbus::{BUS_NAME, INTERFACE, OBJECT_PATH};
use zbus::zvariant::Value;

/// A small deterministic generator: failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Never a valid profile or mode name: those are shorter than 12 characters.
    fn junk(&mut self) -> String {
        let len = 12 + self.below(40);
        (0..len)
            .map(|_| char::from_u32(0x20 + self.below(0x2500) as u32).unwrap_or('x'))
            .collect()
    }
}

const MEMBERS: [&str; 10] = [
    "SetProfile",
    "SetMode",
    "Start",
    "Stop",
    "Restart",
    "GetStats",
    "SubscribeStats",
    "UnsubscribeStats",
    "NoSuchMethod",
    "",
];

async fn call_random(conn: &zbus::Connection, rng: &mut Rng) -> zbus::Result<()> {
    let member = MEMBERS[rng.below(MEMBERS.len())];
    let member = if member.is_empty() { "Set" } else { member };
    let iface = if member == "Set" {
        "org.freedesktop.DBus.Properties"
    } else {
        INTERFACE
    };
    macro_rules! call {
        ($body:expr) => {
            conn.call_method(Some(BUS_NAME), OBJECT_PATH, Some(iface), member, $body)
        };
    }
    // Bodies of every shape; none is a valid call that would change something.
    let reply = match (member, rng.below(7)) {
        ("Set", k) => {
            let props = [
                "Profile",
                "Preemption",
                "State",
                "Mode",
                "Version",
                "Bogus",
                "AutoPowerSource",
            ];
            let prop = props[rng.below(props.len())];
            let value = match k % 3 {
                0 => Value::from(rng.junk()),
                1 => Value::from(rng.next() as u32),
                _ => Value::from(rng.next() as i64),
            };
            call!(&(INTERFACE, prop, value)).await
        }
        (_, 0) => call!(&(rng.junk(),)).await,
        (_, 1) => call!(&(rng.next() as u32 | 0x8000_0000,)).await,
        (_, 2) => call!(&(rng.next().is_multiple_of(2),)).await,
        (_, 3) => call!(&(rng.next() as i64, rng.junk())).await,
        (_, 4) => call!(&(vec![rng.next() as u8; rng.below(64)],)).await,
        (_, 5) => call!(&(HashMap::from([(rng.junk(), Value::from(1u8))]),)).await,
        ("GetStats", _) => call!(&()).await,
        _ => call!(&(rng.junk(), rng.junk())).await,
    };
    reply.map(|_| ())
}

#[tokio::test]
async fn random_calls_are_all_answered_and_change_nothing() {
    let mut w = default_world().await;
    w.proxy.start().await.unwrap();
    let requests_before = w.daemon.double.requests().len();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut refused) = (0, 0);
    for _ in 0..400 {
        match tokio::time::timeout(SECS_10, call_random(&w.conn, &mut rng)).await {
            Ok(Ok(())) => ok += 1,
            Ok(Err(_)) => refused += 1,
            Err(_) => panic!("a call got no answer"),
        }
    }
    assert!(refused > 300, "only {refused} refused ({ok} accepted)");
    assert!(w.daemon.alive(), "gearshiftd died");
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert_eq!(w.proxy.mode().await.unwrap(), "interactive");
    assert!(w.proxy.preemption().await.unwrap());
    let changes: Vec<String> = w.daemon.double.requests()[requests_before..]
        .iter()
        .filter(|r| r.contains("set-"))
        .cloned()
        .collect();
    assert!(
        changes.is_empty(),
        "settings reached the scheduler: {changes:?}"
    );
}

/// Counts Stats signals seen on `conn` during `window`.
async fn count_stats(proxy: &Scheduler1Proxy<'_>, window: Duration) -> usize {
    let mut stream = proxy.receive_stats().await.unwrap();
    let mut n = 0;
    let _ = tokio::time::timeout(window, async {
        while stream.next().await.is_some() {
            n += 1;
        }
    })
    .await;
    n
}

#[tokio::test]
async fn stats_signal_runs_only_while_someone_listens() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    assert_eq!(count_stats(&w.proxy, Duration::from_millis(1200)).await, 0);

    // A second client subscribes faster than allowed: raised to the 250 ms minimum.
    let other = w.bus.connect().await;
    let other_proxy = Scheduler1Proxy::new(&other).await.unwrap();
    let cookie = other_proxy.subscribe_stats(10).await.unwrap();
    let seen = count_stats(&w.proxy, Duration::from_millis(2000)).await;
    assert!(
        (3..=12).contains(&seen),
        "{seen} signals in 2 s at a 250 ms minimum"
    );

    // Only the subscriber may end its subscription.
    assert!(matches!(
        w.proxy.unsubscribe_stats(cookie).await,
        Err(Error::InvalidArgs(_))
    ));
    // The subscriber leaves the bus without unsubscribing: the signal stops.
    drop(other_proxy);
    drop(other);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count_stats(&w.proxy, Duration::from_millis(1200)).await, 0);

    // Explicit unsubscribe works too.
    let cookie = w.proxy.subscribe_stats(300).await.unwrap();
    assert!(count_stats(&w.proxy, Duration::from_millis(1000)).await >= 1);
    w.proxy.unsubscribe_stats(cookie).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(count_stats(&w.proxy, Duration::from_millis(1000)).await, 0);

    assert!(matches!(
        w.proxy.subscribe_stats(0).await,
        Err(Error::InvalidArgs(_))
    ));
}

#[tokio::test]
async fn subscriptions_are_limited() {
    let w = world(Setup {
        config: Some("autostart = false\n[stats]\nmax_subscriptions = 2\n".into()),
        ..Setup::default()
    })
    .await;
    w.proxy.subscribe_stats(1000).await.unwrap();
    w.proxy.subscribe_stats(1000).await.unwrap();
    assert!(matches!(
        w.proxy.subscribe_stats(1000).await,
        Err(Error::LimitExceeded(_))
    ));
}

#[tokio::test]
async fn a_broken_config_means_defaults_and_a_clear_log_line() {
    let w = world(Setup {
        config: Some("autostart = false\n[[profile]]\nname = \"x\"\nmode = \"turbo\"\n".into()),
        ..Setup::default()
    })
    .await;
    let names: Vec<String> = w
        .proxy
        .profiles()
        .await
        .unwrap()
        .iter()
        .filter_map(gearshift_dbus::ProfileInfo::from_dict)
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["interactive", "throughput", "low-power", "fifo"]);
    let log = w.daemon.log();
    assert!(
        log.contains("line 4") && log.contains("turbo") && log.contains("using the defaults"),
        "{log}"
    );
}

#[tokio::test]
async fn a_damaged_state_file_is_ignored_and_rewritten() {
    let mut w = default_world().await;
    w.daemon.stop();
    std::fs::create_dir_all(w.daemon.state_dir()).unwrap();
    let file = w.daemon.state_dir().join("state.json");
    std::fs::write(&file, b"{\"profile\": \"low-po").unwrap();
    w.daemon.restart();
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert!(
        w.daemon.log().contains("ignoring damaged"),
        "{}",
        w.daemon.log()
    );
    w.proxy.set_profile("low-power").await.unwrap();
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).expect("valid JSON again");
    assert_eq!(saved["profile"], "low-power");
}

#[tokio::test]
async fn choices_survive_a_daemon_crash() {
    let mut w = default_world().await;
    w.proxy.set_profile("low-power").await.unwrap();
    w.proxy.set_auto_power_source(true).await.unwrap();
    w.daemon.crash();
    w.daemon.restart();
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");
    assert_eq!(w.proxy.mode().await.unwrap(), "low-power");
    assert!(w.proxy.auto_power_source().await.unwrap());
}
