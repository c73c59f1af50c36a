//! The precedence table, case by case.

use gearshift_types::Mode;

use super::*;

fn s(mode: Mode, preemption: bool) -> Settings {
    Settings { mode, preemption }
}

fn interactive() -> (String, Settings) {
    ("interactive".into(), s(Mode::Interactive, true))
}

fn low_power() -> (String, Settings) {
    ("low-power".into(), s(Mode::LowPower, false))
}

fn fifo() -> (String, Settings) {
    ("fifo".into(), s(Mode::Fifo, true))
}

fn rules() -> Rules {
    let (profile, settings) = interactive();
    Rules::new(Choice {
        profile,
        settings,
        reason: Reason::Default,
    })
}

fn hold(profile: (String, Settings), owner: &str) -> Hold {
    Hold {
        cookie: 0,
        profile: profile.0,
        settings: profile.1,
        reason: "test".into(),
        application_id: "org.example.Test".into(),
        owner: owner.into(),
    }
}

fn now(r: &Rules) -> (String, &'static str) {
    let e = r.effective();
    (e.profile, e.reason.as_str())
}

fn is(profile: &str, reason: &'static str) -> (String, &'static str) {
    (profile.to_owned(), reason)
}

#[test]
fn default_until_someone_chooses() {
    let mut r = rules();
    assert_eq!(now(&r), is("interactive", "default"));
    r.user_choice(fifo().0, fifo().1);
    assert_eq!(now(&r), is("fifo", "user"));
}

#[test]
fn unplug_switches_and_replug_restores() {
    let mut r = rules();
    r.user_choice(fifo().0, fifo().1);
    r.power_source(true, low_power());
    assert_eq!(now(&r), is("low-power", "battery"));
    // A second "on battery" (e.g. the first reading after a restart) keeps what to restore.
    r.power_source(true, low_power());
    r.power_source(false, low_power());
    assert_eq!(now(&r), is("fifo", "user"));
}

#[test]
fn the_users_choice_on_battery_stands_after_replug() {
    let mut r = rules();
    r.power_source(true, low_power());
    r.user_choice(fifo().0, fifo().1);
    r.power_source(false, low_power());
    assert_eq!(now(&r), is("fifo", "user"));
    // …until the next unplug.
    r.power_source(true, low_power());
    assert_eq!(now(&r), is("low-power", "battery"));
}

#[test]
fn a_hold_beats_the_automatic_rules() {
    let mut r = rules();
    let cookie = r.hold(hold(fifo(), ":1.5"));
    assert_eq!(now(&r), is("fifo", "hold"));
    r.power_source(true, low_power());
    assert_eq!(now(&r), is("fifo", "hold"));
    r.power_profile(interactive());
    assert_eq!(now(&r), is("fifo", "hold"));
    assert!(r.release(cookie, Some(":1.5")));
    assert_eq!(now(&r), is("interactive", "power-profile"));
}

#[test]
fn the_newest_hold_wins_and_releases_unwind() {
    let mut r = rules();
    let first = r.hold(hold(low_power(), ":1.5"));
    let second = r.hold(hold(fifo(), ":1.6"));
    assert_ne!(first, second);
    assert_eq!(now(&r), is("fifo", "hold"));
    assert!(r.release(second, Some(":1.6")));
    assert_eq!(now(&r), is("low-power", "hold"));
    assert!(r.release(first, Some(":1.5")));
    assert_eq!(now(&r), is("interactive", "default"));
}

#[test]
fn release_order_does_not_matter() {
    let mut r = rules();
    let first = r.hold(hold(low_power(), ":1.5"));
    let second = r.hold(hold(fifo(), ":1.6"));
    assert!(r.release(first, Some(":1.5")));
    assert_eq!(now(&r), is("fifo", "hold"));
    assert!(r.release(second, Some(":1.6")));
    assert_eq!(now(&r), is("interactive", "default"));
}

#[test]
fn only_the_holder_releases_a_hold() {
    let mut r = rules();
    let cookie = r.hold(hold(fifo(), ":1.5"));
    assert!(!r.release(cookie, Some(":1.9")));
    assert!(!r.release(cookie + 1, Some(":1.5")));
    assert_eq!(now(&r), is("fifo", "hold"));
}

#[test]
fn a_holder_that_leaves_loses_only_its_holds() {
    let mut r = rules();
    let a = r.hold(hold(low_power(), ":1.5"));
    r.hold(hold(fifo(), ":1.6"));
    r.hold(hold(interactive(), ":1.5"));
    let mut gone = r.release_owner(":1.5");
    gone.sort_unstable();
    assert_eq!(gone.len(), 2);
    assert_eq!(gone[0], a);
    assert_eq!(now(&r), is("fifo", "hold"));
}

#[test]
fn the_users_choice_releases_every_hold() {
    let mut r = rules();
    let a = r.hold(hold(low_power(), ":1.5"));
    let b = r.hold(hold(fifo(), ":1.6"));
    let released = r.user_choice(interactive().0, interactive().1);
    assert_eq!(released, [a, b]);
    assert!(r.holds().is_empty());
    assert_eq!(now(&r), is("interactive", "user"));
}

#[test]
fn power_profile_events_and_user_choices_alternate() {
    let mut r = rules();
    r.power_profile(low_power());
    assert_eq!(now(&r), is("low-power", "power-profile"));
    r.user_choice(fifo().0, fifo().1);
    assert_eq!(now(&r), is("fifo", "user"));
    r.power_profile(interactive());
    assert_eq!(now(&r), is("interactive", "power-profile"));
}

// ---- the battery level: AC profile and low battery ----

fn throughput() -> (String, Settings) {
    ("throughput".into(), s(Mode::Interactive, false))
}

#[test]
fn low_battery_replaces_the_battery_profile_and_recovery_restores_it() {
    let mut r = rules();
    r.user_choice(fifo().0, fifo().1);
    r.power_source(true, throughput());
    assert_eq!(now(&r), is("throughput", "battery"));
    r.battery_low(low_power());
    assert_eq!(now(&r), is("low-power", "low-battery"));
    // A repeated "low" keeps what to restore.
    r.battery_low(low_power());
    r.battery_recovered();
    assert_eq!(now(&r), is("throughput", "battery"));
    // Low again, then replug: what was there before the unplug.
    r.battery_low(low_power());
    r.power_source(false, throughput());
    assert_eq!(now(&r), is("fifo", "user"));
}

#[test]
fn low_battery_is_an_event_over_the_users_choice_on_battery() {
    let mut r = rules();
    r.power_source(true, throughput());
    r.user_choice(fifo().0, fifo().1);
    r.battery_low(low_power());
    assert_eq!(now(&r), is("low-power", "low-battery"));
    // Recovering brings back the user's choice; so does replugging instead.
    r.battery_recovered();
    assert_eq!(now(&r), is("fifo", "user"));
    r.battery_low(low_power());
    r.power_source(false, throughput());
    assert_eq!(now(&r), is("fifo", "user"));
}

#[test]
fn the_users_choice_on_low_battery_stands_until_the_next_event() {
    let mut r = rules();
    r.power_source(true, throughput());
    r.battery_low(low_power());
    r.user_choice(fifo().0, fifo().1);
    assert_eq!(now(&r), is("fifo", "user"));
    // Recovering is not the low-battery rule's to undo any more.
    r.battery_recovered();
    assert_eq!(now(&r), is("fifo", "user"));
    // Neither is replugging (as with the battery profile).
    r.power_source(false, throughput());
    assert_eq!(now(&r), is("fifo", "user"));
    // The next low-battery event counts again.
    r.power_source(true, throughput());
    r.battery_low(low_power());
    assert_eq!(now(&r), is("low-power", "low-battery"));
}

#[test]
fn a_power_mode_change_on_low_battery_is_not_undone_by_recovery() {
    let mut r = rules();
    r.power_source(true, throughput());
    r.battery_low(low_power());
    r.power_profile(interactive());
    r.battery_recovered();
    assert_eq!(now(&r), is("interactive", "power-profile"));
}

#[test]
fn a_hold_beats_low_battery_and_releasing_it_uncovers_it() {
    let mut r = rules();
    let cookie = r.hold(hold(fifo(), ":1.5"));
    r.power_source(true, throughput());
    r.battery_low(low_power());
    assert_eq!(now(&r), is("fifo", "hold"));
    assert!(r.release(cookie, Some(":1.5")));
    assert_eq!(now(&r), is("low-power", "low-battery"));
}

#[test]
fn a_second_on_battery_reading_does_not_remember_low_battery_for_replug() {
    let mut r = rules();
    r.user_choice(fifo().0, fifo().1);
    r.power_source(true, throughput());
    r.battery_low(low_power());
    // The rule turned on again while on battery: its event, then low again.
    r.power_source(true, throughput());
    r.battery_low(low_power());
    r.power_source(false, throughput());
    assert_eq!(now(&r), is("fifo", "user"));
}

#[test]
fn with_an_ac_profile_plugging_in_selects_it() {
    let mut r = rules();
    r.user_choice(fifo().0, fifo().1);
    r.power_source(true, throughput());
    r.battery_low(low_power());
    r.plugged_in(interactive());
    assert_eq!(now(&r), is("interactive", "ac"));
    // It is an event: it replaces the user's choice made on battery too…
    r.power_source(true, throughput());
    r.user_choice(fifo().0, fifo().1);
    r.plugged_in(interactive());
    assert_eq!(now(&r), is("interactive", "ac"));
    // …which then stands on AC until the next event; unplugging remembers it for later.
    r.user_choice(fifo().0, fifo().1);
    r.power_source(true, throughput());
    r.power_source(false, throughput());
    assert_eq!(now(&r), is("fifo", "user"));
}

#[test]
fn a_hold_beats_the_ac_profile() {
    let mut r = rules();
    r.hold(hold(fifo(), ":1.5"));
    r.power_source(true, throughput());
    r.plugged_in(interactive());
    assert_eq!(now(&r), is("fifo", "hold"));
    r.release_owner(":1.5");
    assert_eq!(now(&r), is("interactive", "ac"));
}

#[test]
fn a_power_profile_event_on_battery_is_not_undone_by_replug() {
    let mut r = rules();
    r.power_source(true, low_power());
    r.power_profile(fifo());
    r.power_source(false, low_power());
    assert_eq!(now(&r), is("fifo", "power-profile"));
}

#[test]
fn falling_back_beats_holds_and_stands_until_the_next_event() {
    let mut r = rules();
    r.hold(hold(fifo(), ":1.5"));
    r.power_source(true, low_power());
    assert_eq!(now(&r), is("fifo", "hold"));
    // fifo kept failing: the known good profile replaces the hold and the battery rule's base.
    let released = r.fall_back(interactive().0, interactive().1);
    assert_eq!(released.len(), 1, "the hold of the failing profile ended");
    assert_eq!(now(&r), is("interactive", "fallback"));
    r.power_source(false, low_power());
    assert_eq!(now(&r), is("interactive", "fallback"), "nothing to restore");
    // The user's choice afterwards counts as always.
    r.user_choice(low_power().0, low_power().1);
    assert_eq!(now(&r), is("low-power", "user"));
}
