//! The battery level's rules from the window, with UPower's double: the window says that the
//! low-battery profile is active because the battery is low, and that plugging in selected the
//! AC profile. One test function: GTK lives on one thread of the process.

mod common;

use gearshift_testbus::{Setup, UPOWER, UPOWER_DISPLAY};

#[test]
fn the_window_says_which_battery_rule_chose_the_profile() {
    let double =
        gearshift_testbus::repo_root().join("crates/gearshift-testbus/scheduler_double.py");
    let config = format!(
        "autostart = false\nauto_power_source = true\n\
         [auto]\nac_profile = \"fifo\"\nlow_battery_percent = 20\n\
         [scheduler]\npath = {:?}\nstart_timeout_ms = 10000\n",
        double.display().to_string()
    );
    let mut w = common::world(Setup {
        config: Some(config),
        ..Setup::default()
    });
    w.bus.start_template("upower", UPOWER.0);
    w.bus.set_property(UPOWER_DISPLAY, "Percentage", "d", "50");
    w.wait_shows("The computer runs on AC power.");
    w.press("Start");
    w.wait_shows("Gearshift is running");

    w.bus.set_property(UPOWER, "OnBattery", "b", "true");
    w.wait_shows("The computer runs on battery.");
    w.bus.set_property(UPOWER_DISPLAY, "Percentage", "d", "12");
    w.wait_shows("The battery is low.");
    w.wait("the check mark on Low power", || {
        w.checked_profile().as_deref() == Some("Low power")
    });

    w.bus.set_property(UPOWER, "OnBattery", "b", "false");
    w.wait_shows("The computer runs on AC power.");
    w.wait("the check mark on FIFO", || {
        w.checked_profile().as_deref() == Some("FIFO")
    });
}
