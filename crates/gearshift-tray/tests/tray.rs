//! gearshift-tray against the real gearshiftd (private system bus, gearshift-testbus) and a
//! test StatusNotifierWatcher on a private session bus: the menu is read and clicked through
//! com.canonical.dbusmenu, as a panel would.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use gearshift_testbus::Setup;
use support::{checked_profiles, find, menu_until, next_menu_signal, SessionBus, World};

const ICON_DIR: &str = "data/icons/hicolor/symbolic/apps";

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn menu_shows_and_switches_profiles() {
    let mut w = World::start().await;
    w.proxy.start().await.expect("Start");
    let item = w.start_tray().await;

    // The profiles as radio items, the active one checked.
    let menu = menu_until(&item, "interactive checked", |m| {
        checked_profiles(m) == ["interactive"]
    })
    .await;
    for name in ["interactive", "throughput", "low-power", "fifo"] {
        assert_eq!(find(&menu, name).toggle_type, "radio", "{menu:#?}");
    }
    let preemption = find(&menu, "Preemption");
    assert_eq!(preemption.toggle_type, "checkmark");
    assert!(preemption.checked, "the interactive profile preempts");
    find(&menu, "Open Gearshift");
    assert!(
        menu.iter().all(|i| !i.label.starts_with("Scheduler")),
        "no state line while running: {menu:#?}"
    );
    assert_eq!(
        item.icon_name().await,
        "io.github.gearshift.Gearshift-interactive-symbolic"
    );

    // A click on another profile switches the daemon, and the menu follows.
    item.click(find(&menu, "low-power").id).await;
    support::eventually("Profile low-power", || async {
        w.profile().await == "low-power"
    })
    .await;
    let menu = menu_until(&item, "low-power checked", |m| {
        checked_profiles(m) == ["low-power"]
    })
    .await;
    assert!(!find(&menu, "Preemption").checked);
    support::eventually("low-power icon", || async {
        item.icon_name().await == "io.github.gearshift.Gearshift-low-power-symbolic"
    })
    .await;

    // A change made elsewhere is signalled and shows in the menu.
    let mut signals = item.menu_signals().await;
    w.proxy.set_profile("throughput").await.expect("SetProfile");
    let member = next_menu_signal(&mut signals).await;
    assert!(
        member == "ItemsPropertiesUpdated" || member == "LayoutUpdated",
        "{member}"
    );
    menu_until(&item, "throughput checked", |m| {
        checked_profiles(m) == ["throughput"]
    })
    .await;

    // The preemption item toggles the daemon's Preemption.
    let menu = item.layout().await;
    assert!(!find(&menu, "Preemption").checked);
    item.click(find(&menu, "Preemption").id).await;
    support::eventually("Preemption on", || async {
        w.proxy.preemption().await.expect("Preemption")
    })
    .await;
    menu_until(&item, "Preemption checked", |m| {
        find(m, "Preemption").checked
    })
    .await;

    // "Open Gearshift" starts the app.
    item.click(find(&menu, "Open Gearshift").id).await;
    support::eventually("the app started", || async { w.app_opened() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_state_and_survives_daemon_restart() {
    let mut w = World::start().await;
    let item = w.start_tray().await;

    // Stopped: the state line, the Start item and the stopped icon.
    let menu = menu_until(&item, "the stopped line", |m| {
        m.iter().any(|i| i.label.starts_with("Scheduler stopped"))
    })
    .await;
    assert!(!find(&menu, menu[0].label.as_str()).enabled, "{menu:#?}");
    assert_eq!(
        item.icon_name().await,
        "io.github.gearshift.Gearshift-stopped-symbolic"
    );

    // Start from the menu.
    item.click(find(&menu, "Start scheduler").id).await;
    menu_until(&item, "running", |m| {
        m.iter().all(|i| !i.label.starts_with("Scheduler")) && m.iter().any(|i| i.label == "fifo")
    })
    .await;

    // The daemon goes away: the menu says so; it comes back: the menu is whole again.
    w.daemon.crash();
    let menu = menu_until(&item, "daemon absent", |m| {
        m.iter().any(|i| i.label == "gearshiftd is not running")
    })
    .await;
    assert!(
        menu.iter().all(|i| i.toggle_type != "radio"),
        "no profiles without the daemon: {menu:#?}"
    );
    assert!(item.icon_name().await.ends_with("-stopped-symbolic"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    w.daemon.restart();
    w.proxy.set_profile("fifo").await.expect("SetProfile");
    menu_until(&item, "profiles again, fifo checked", |m| {
        checked_profiles(m) == ["fifo"] && m.iter().all(|i| i.label != "gearshiftd is not running")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_shows_and_asks_for_attention() {
    // A profile counts as known good after 1 s of clean running.
    let setup = Setup {
        restart_extra: "known_good_after_s = 1".into(),
        ..Setup::default()
    };
    let mut w = World::start_with_setup(SessionBus::start(), setup).await;
    w.proxy.start().await.expect("Start");
    let item = w.start_tray().await;
    menu_until(&item, "interactive checked", |m| {
        checked_profiles(m) == ["interactive"]
    })
    .await;
    assert_eq!(item.status().await, "Active");
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // fifo keeps failing: gearshiftd goes back to interactive, and the tray says why.
    w.daemon.double.fail_in_mode(Some("fifo"));
    w.proxy.set_profile("fifo").await.expect("SetProfile");
    let menu = menu_until(&item, "the fallback line", |m| {
        m.iter()
            .any(|i| i.label.starts_with("Fell back to profile interactive"))
    })
    .await;
    let line = menu
        .iter()
        .find(|i| i.label.starts_with("Fell back"))
        .expect("line");
    assert!(line.label.contains("profile fifo failed"), "{menu:#?}");
    assert!(!line.enabled, "a label, not an action: {menu:#?}");
    assert_eq!(checked_profiles(&menu), ["interactive"]);
    support::eventually("NeedsAttention", || async {
        item.status().await == "NeedsAttention"
    })
    .await;

    // The user's next choice ends it.
    w.daemon.double.fail_in_mode(None);
    item.click(find(&menu, "low-power").id).await;
    menu_until(&item, "low-power, no fallback line", |m| {
        checked_profiles(m) == ["low-power"] && m.iter().all(|i| !i.label.starts_with("Fell back"))
    })
    .await;
    support::eventually("Active again", || async { item.status().await == "Active" }).await;
}

#[test]
fn autostart_file_validates() {
    let file = repo().join("data/autostart/io.github.gearshift.Gearshift.Tray.desktop");
    let out = Command::new("desktop-file-validate")
        .arg(&file)
        .output()
        .expect("desktop-file-validate (apt package desktop-file-utils)");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.trim().is_empty(), "{text}");
    let content = std::fs::read_to_string(&file).expect("read");
    assert!(content.contains("\nExec=gearshift-tray\n"), "{content}");
}

#[test]
fn every_mode_has_an_icon() {
    for kind in ["interactive", "fifo", "low-power", "stopped"] {
        let path = repo()
            .join(ICON_DIR)
            .join(format!("io.github.gearshift.Gearshift-{kind}-symbolic.svg"));
        let out = Command::new("xmllint")
            .arg("--noout")
            .arg(&path)
            .output()
            .expect("xmllint (apt package libxml2-utils)");
        assert!(
            out.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = std::fs::read_to_string(&path).expect("read");
        assert!(svg.contains("viewBox=\"0 0 16 16\""), "{}", path.display());
    }
}
