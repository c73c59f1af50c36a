//! The app in German (LANGUAGE=de): its own strings and the built-in profiles' descriptions
//! come from po/de.po. One test function: GTK lives on one thread of the process.

mod common;

use gearshift_testbus::Setup;

#[test]
fn the_window_speaks_german() {
    let w = common::world_with(Setup::default(), Some("de"));
    w.wait_shows("Gearshift ist gestoppt");
    assert!(w.shows("Der Standard-Scheduler des Kernels ist zuständig."));
    for heading in ["Profil", "Planung", "Automatische Profile", "Aktivität"] {
        assert!(w.shows(heading), "{heading}: {:?}", w.text());
    }
    w.wait("the profiles", || w.window.profile_rows().len() == 4);
    assert!(w.shows("Energiesparend"), "{:?}", w.text());
    assert!(
        w.shows("Bündelt die Arbeit auf wenigen Kernen"),
        "a built-in profile's description: {:?}",
        w.text()
    );
    w.press("Starten");
    w.wait_shows("Gearshift läuft");
    w.wait_shows("Profil „Interaktiv“ ist aktiv.");
    w.screenshot("german");
}
