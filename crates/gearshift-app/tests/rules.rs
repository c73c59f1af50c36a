//! The automatic rules from the window, with UPower's and power-profiles-daemon's doubles, and
//! an application's hold: the window says which profile is active and why.
//! One test function: GTK lives on one thread of the process.

mod common;

use std::process::{Command, Stdio};

use gearshift_testbus::{Setup, PPD_LEGACY, UPOWER};

#[test]
fn the_rules_say_what_is_active_and_why() {
    let mut w = common::world(Setup::default());
    w.bus.start_template("upower", UPOWER.0);
    w.bus.start_template("power_profiles_daemon", PPD_LEGACY.0);
    w.wait_shows("Gearshift is stopped");
    w.press("Start");
    w.wait_shows("Gearshift is running");
    w.wait_shows("On AC power; power mode “balanced”");

    // Turn the battery rule on from its row, then unplug.
    w.activate_row("Battery Profile on Battery Power");
    w.wait_property("AutoPowerSource", "b true");
    w.bus.set_property(UPOWER, "OnBattery", "b", "true");
    w.wait_shows("The computer runs on battery.");
    w.wait_shows("On battery; power mode “balanced”");
    w.wait("the check mark on Low power", || {
        w.checked_profile().as_deref() == Some("Low power")
    });
    w.screenshot("battery");

    // An application holds FIFO while it runs (gearshiftctl hold, as a video call app would).
    let mut holder = Command::new(gearshift_testbus::workspace_bin("gearshiftctl"));
    holder.args([
        "hold",
        "fifo",
        "--reason",
        "video call",
        "--app-id",
        "org.example.Call",
        "--",
        "sleep",
        "60",
    ]);
    w.bus.env(&mut holder);
    let mut holder = holder
        .stdout(Stdio::null())
        .spawn()
        .expect("gearshiftctl hold");
    w.wait_shows("org.example.Call asked for this profile: video call");
    w.wait("the check mark on FIFO", || {
        w.checked_profile().as_deref() == Some("FIFO")
    });
    // The holder goes: its hold ends, and the battery profile is back.
    let _ = holder.kill();
    let _ = holder.wait();
    w.wait_shows("The computer runs on battery.");

    // The person's choice beats the rules until their next event.
    gearshift_app_row(&w, "Throughput");
    w.wait_shows("You chose this profile.");
    w.wait_property("Profile", "s \"throughput\"");

    // The other rule's row writes its property.
    w.activate_row("Follow the Power Mode");
    w.wait_property("FollowPowerProfile", "b true");
}

fn gearshift_app_row(w: &common::World, title: &str) {
    use adw::prelude::*;
    WidgetExt::activate(&w.profile_row(title));
}
