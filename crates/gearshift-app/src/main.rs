//! `gearshift`: the Gearshift desktop app.

fn main() -> gtk::glib::ExitCode {
    gearshift_app::run()
}
