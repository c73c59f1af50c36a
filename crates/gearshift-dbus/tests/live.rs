//! The client side against a live gearshiftd on a private system bus (polkit's double, the
//! scheduler double): the settings functions, the model and follow().

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use gearshift_dbus::settings::{self, Prompt};
use gearshift_dbus::{
    follow, DaemonProperties, Followed, Scheduler1Proxy, SchedulerState, ACTION_SWITCH_PROFILE,
};
use gearshift_testbus::{DaemonUnderTest, Setup, TestBus, NOBODY};

const DENIED: &str = "org.freedesktop.DBus.Error.AccessDenied";

async fn proxy(conn: &zbus::Connection) -> Scheduler1Proxy<'static> {
    Scheduler1Proxy::builder(conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy")
}

/// The next update that `pick` accepts; earlier ones are skipped.
async fn next_matching(
    updates: &mut (impl Stream<Item = Followed> + Unpin),
    what: &str,
    pick: impl Fn(&Followed) -> bool,
) -> Followed {
    let wait = async {
        loop {
            let update = updates.next().await.expect("the stream goes on");
            if pick(&update) {
                return update;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

#[tokio::test]
async fn set_preemption_changes_preemption_and_needs_authorization() {
    let mut bus = TestBus::start();
    bus.start_polkit();
    let _daemon = DaemonUnderTest::start(&bus, Setup::default());
    let conn = bus.connect().await;
    let p = proxy(&conn).await;
    p.start().await.expect("Start");
    assert!(
        DaemonProperties::read(&conn)
            .await
            .expect("GetAll")
            .preemption
    );

    // polkit's double allows nothing yet: refused, and nothing changed.
    match bus.call_as(Some(NOBODY), "SetPreemption", "b", "[false]") {
        Err((name, message)) if name == DENIED => {
            assert!(message.contains(ACTION_SWITCH_PROFILE), "{message}")
        }
        other => panic!("expected AccessDenied, got {other:?}"),
    }
    let d = DaemonProperties::read(&conn).await.expect("GetAll");
    assert!(d.preemption);
    assert_eq!(d.profile, "interactive");

    // The active session's grant suffices.
    bus.polkit_allow(&[ACTION_SWITCH_PROFILE]);
    bus.call_as(Some(NOBODY), "SetPreemption", "b", "[false]")
        .expect("SetPreemption with switch-profile granted");
    let d = DaemonProperties::read(&conn).await.expect("GetAll");
    assert!(!d.preemption);
    // Interactive without preemption is the throughput profile.
    assert_eq!(d.profile, "throughput");

    // The clients' shared function (root needs no polkit), and the property for scripts.
    settings::set_preemption(&p, true, Prompt::Never)
        .await
        .expect("set_preemption");
    assert!(p.preemption().await.expect("Preemption"));
    bus.set_property_as(Some(NOBODY), "Preemption", "false")
        .expect("Preemption write with switch-profile granted");
    assert!(!p.preemption().await.expect("Preemption"));
}

#[tokio::test]
async fn follow_reports_changes_and_the_daemon_coming_and_going() {
    let mut bus = TestBus::start();
    bus.start_polkit();
    let mut daemon = DaemonUnderTest::start(&bus, Setup::default());
    let conn = bus.connect().await;
    let p = proxy(&conn).await;
    let mut updates = follow(&conn).await.expect("follow");

    match next_matching(&mut updates, "the first update", |_| true).await {
        Followed::Appeared(d) => {
            assert_eq!(d.state, SchedulerState::Stopped);
            assert_eq!(d.profile, "interactive");
            assert!(d.preemption);
        }
        other => panic!("expected Appeared, got {other:?}"),
    }

    settings::set_mode(&p, "fifo", Prompt::Never)
        .await
        .expect("set_mode");
    let Followed::Changed(d) = next_matching(
        &mut updates,
        "the mode change",
        |u| matches!(u, Followed::Changed(d) if d.mode == "fifo"),
    )
    .await
    else {
        unreachable!()
    };
    // What did not change is still there.
    assert_eq!(d.profiles.len(), 4, "{d:?}");

    settings::set_profile(&p, "low-power", Prompt::Never)
        .await
        .expect("set_profile");
    next_matching(
        &mut updates,
        "the profile change",
        |u| matches!(u, Followed::Changed(d) if d.profile == "low-power" && d.mode == "low-power"),
    )
    .await;

    daemon.stop();
    next_matching(&mut updates, "the daemon leaving", |u| *u == Followed::Gone).await;
    daemon.restart();
    match next_matching(&mut updates, "the daemon coming back", |u| {
        matches!(u, Followed::Appeared(_))
    })
    .await
    {
        Followed::Appeared(d) => assert_eq!(d.state, SchedulerState::Stopped),
        other => panic!("expected Appeared, got {other:?}"),
    }
}

#[tokio::test]
async fn follow_says_gone_when_there_is_no_daemon() {
    let bus = TestBus::start();
    let conn = bus.connect().await;
    let mut updates = follow(&conn).await.expect("follow");
    next_matching(&mut updates, "the first update", |u| *u == Followed::Gone).await;
}
