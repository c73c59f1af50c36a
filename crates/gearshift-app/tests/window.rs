//! The app against the real gearshiftd (scheduler double) on a private system bus, under Xvfb,
//! driven the way a person drives it: pressing buttons, activating rows and switches.
//! One test function: GTK lives on one thread of the process.

mod common;

use std::time::Duration;

use adw::prelude::*;
use common::World;
use gearshift_testbus::Setup;

#[test]
fn the_window_follows_and_steers_the_daemon() {
    let mut w = common::world(Setup::default());

    // Opens, connects, shows the scheduler stopped and offers to start it.
    w.wait_shows("Gearshift is stopped");
    assert!(w.shows("The kernel's default scheduler is in charge."));
    w.wait("the four profiles", || w.window.profile_rows().len() == 4);
    w.screenshot("stopped");

    // Start: the daemon runs the scheduler and the window says so.
    w.press("Start");
    w.wait_property("State", "s \"running\"");
    w.wait_shows("Gearshift is running");
    assert!(find_stop(&w), "a running scheduler offers Stop");

    // Choosing a profile in the list switches the daemon.
    WidgetExt::activate(&w.profile_row("Low power"));
    w.wait_property("Profile", "s \"low-power\"");
    w.wait("the check mark on Low power", || {
        w.checked_profile().as_deref() == Some("Low power")
    });
    w.wait_shows("Profile “Low power” is active.");
    assert!(w.shows("Low power"), "mode label");

    // A change made with gearshiftctl shows in the window.
    w.ctl(&["profile", "throughput"]);
    w.wait("the check mark on Throughput", || {
        w.checked_profile().as_deref() == Some("Throughput")
    });
    w.wait_shows("Profile “Throughput” is active.");
    w.wait("the preemption switch off", || {
        !w.window.preemption_switch().is_active()
    });

    // The preemption switch writes the property.
    w.window.preemption_switch().activate();
    w.wait_property("Preemption", "b true");

    // Graphs: stats flow while the window shows.
    w.wait("a stats subscription", || w.window.stats_subscribed());
    w.wait("graph samples", || w.window.graph_samples() >= 4);
    w.run_for(Duration::from_secs(4));
    w.screenshot("running");
    common::scroll(w.window.upcast_ref(), 1.0);
    w.run_for(Duration::from_secs(2));
    w.screenshot("activity");
    common::scroll(w.window.upcast_ref(), 0.0);

    // Hidden: the subscription ends; shown again: it comes back.
    w.window.set_visible(false);
    w.wait("no subscription while hidden", || {
        !w.window.stats_subscribed()
    });
    w.window.set_visible(true);
    w.wait("the subscription back", || w.window.stats_subscribed());

    // gearshiftd goes away: the window says so; it comes back: the window reconnects.
    daemon(&mut w).stop();
    w.wait_shows("Gearshift service unavailable");
    w.screenshot("absent");
    daemon(&mut w).restart();
    w.wait_shows("Gearshift is");
    w.wait("the profiles again", || w.window.profile_rows().len() == 4);
    w.wait("the subscription after the restart", || {
        w.window.stats_subscribed()
    });

    // Stop from the window.
    if w.property("State") == "s \"running\"" {
        w.press("Stop");
        w.wait_property("State", "s \"stopped\"");
    }
    w.wait_shows("Gearshift is stopped");

    // The About window.
    let about = gearshift_app::show_about(&w.app);
    w.wait("the About window", || about.is_mapped());
    common::save_png(about.upcast_ref(), "about");
    about.close();
}

fn daemon(w: &mut World) -> &mut gearshift_testbus::DaemonUnderTest {
    w.daemon.as_mut().expect("daemon")
}

fn find_stop(w: &World) -> bool {
    common::find_button(w.window.upcast_ref(), "Stop").is_some()
}
