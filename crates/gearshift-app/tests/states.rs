//! The unsupported and failed states render with their reasons and the action that helps, and
//! a fallback to the last known good profile says what failed.
//! One test function: GTK lives on one thread of the process.

mod common;

use adw::prelude::*;
use gearshift_testbus::{DaemonUnderTest, Setup};

#[test]
fn unsupported_and_failed_states_say_why() {
    // A kernel without sched_ext: the window says so, offers no start, and the controls are
    // insensitive.
    let mut w = common::world(Setup {
        supported: false,
        ..Setup::default()
    });
    w.wait_shows("Your kernel has no sched_ext");
    assert!(w.shows("CONFIG_SCHED_CLASS_EXT"), "{:?}", w.text());
    assert!(
        common::find_button(w.window.upcast_ref(), "Start").is_none(),
        "no Start without sched_ext"
    );
    w.wait("the profile rows", || !w.window.profile_rows().is_empty());
    // Nothing to choose while there is no scheduler to run (effective sensitivity).
    assert!(!w.window.profile_rows()[0].row.is_sensitive());
    assert!(!w.window.preemption_switch().is_sensitive());
    w.screenshot("unsupported");

    // Another daemon, on a kernel with sched_ext, whose scheduler crashes at every start.
    w.daemon.take();
    w.wait_shows("Gearshift service unavailable");
    let daemon = DaemonUnderTest::start(&w.bus, Setup::default());
    daemon.double.set("fail-start");
    w.daemon = Some(daemon);
    w.wait_shows("Gearshift is stopped");
    w.press("Start");
    w.wait_shows("Gearshift failed");
    w.wait_shows("told to fail");
    assert!(w.shows("Retry"), "{:?}", w.text());
    w.screenshot("failed");

    // Retry once the cause is gone.
    w.daemon
        .as_ref()
        .expect("daemon")
        .double
        .clear("fail-start");
    w.press("Retry");
    w.wait_property("State", "s \"running\"");
    w.wait_shows("Gearshift is running");

    // A daemon whose interactive profile runs cleanly past known_good_after_s, then fifo
    // fails whenever it runs: the window shows the fallback with the daemon's words.
    w.daemon.take();
    w.wait_shows("Gearshift service unavailable");
    let double =
        gearshift_testbus::repo_root().join("crates/gearshift-testbus/scheduler_double.py");
    let daemon = DaemonUnderTest::start(
        &w.bus,
        Setup {
            config: Some(format!(
                "autostart = true\n[scheduler]\npath = {:?}\n\
                 [restart]\nmax_failures = 2\ninitial_backoff_ms = 200\nknown_good_after_s = 1\n",
                double.display().to_string()
            )),
            ..Setup::default()
        },
    );
    daemon.double.fail_in_mode(Some("fifo"));
    w.daemon = Some(daemon);
    w.wait_property("State", "s \"running\"");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let dest = [
        gearshift_dbus::BUS_NAME,
        gearshift_dbus::OBJECT_PATH,
        gearshift_dbus::INTERFACE,
    ];
    let out = w.bus.busctl_call(
        None,
        &[dest[0], dest[1], dest[2], "SetProfile", "s", "fifo"],
    );
    assert!(out.status.success(), "{out:?}");
    w.wait_shows("Gearshift is running a fallback profile");
    w.wait_shows("profile fifo failed 2 times");
    assert!(w.shows("Interactive"), "{:?}", w.text());
}
