//! The Gearshift desktop app (GTK 4 + libadwaita): shows and steers gearshiftd over D-Bus.
//!
//! A library so the tests can run the app in their own process and drive its widgets; the
//! `gearshift` binary is [`run`].

pub mod check_model;
pub mod client;
pub mod history;
pub mod i18n;
pub mod model;
pub mod runtime;
pub mod widgets;

use adw::prelude::*;
use gettextrs::gettext;
use gtk::{gio, glib};

pub use widgets::Window;

/// The application id (also the icon's name and the desktop file's).
pub const APP_ID: &str = "io.github.gearshift.Gearshift";

/// Runs the app with the process's arguments.
pub fn run() -> glib::ExitCode {
    i18n::init();
    if let Err(e) = runtime::start() {
        eprintln!("gearshift: cannot start the D-Bus thread: {e}");
        return glib::ExitCode::FAILURE;
    }
    build_app().run()
}

/// The application object: on activation it opens (or presents) the window.
pub fn build_app() -> adw::Application {
    glib::set_application_name(&gettext("Gearshift"));
    let app = adw::Application::builder().application_id(APP_ID).build();
    app.connect_startup(|app| {
        gtk::Window::set_default_icon_name(APP_ID);
        // From the build tree, the icons come from the repository's data/icons.
        if i18n::in_build_tree() {
            if let Some(display) = gtk::gdk::Display::default() {
                gtk::IconTheme::for_display(&display)
                    .add_search_path(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/icons"));
            }
        }
        let about = gio::SimpleAction::new("about", None);
        let weak = app.downgrade();
        about.connect_activate(move |_, _| {
            if let Some(app) = weak.upgrade() {
                show_about(&app);
            }
        });
        app.add_action(&about);
        let quit = gio::SimpleAction::new("quit", None);
        let weak = app.downgrade();
        quit.connect_activate(move |_, _| {
            if let Some(app) = weak.upgrade() {
                app.quit();
            }
        });
        app.add_action(&quit);
        app.set_accels_for_action("app.quit", &["<Control>q"]);
        app.set_accels_for_action("window.close", &["<Control>w"]);
    });
    app.connect_activate(|app| {
        if let Some(window) = app.active_window() {
            window.present();
            return;
        }
        let (client, events) = client::Client::start();
        let window = Window::new(app, client, events);
        gtk::prelude::GtkWindowExt::present(&window);
    });
    app
}

/// The app's main window, once activated.
pub fn main_window(app: &adw::Application) -> Option<Window> {
    app.windows()
        .into_iter()
        .find_map(|w| w.downcast::<Window>().ok())
}

/// The About window.
pub fn show_about(app: &adw::Application) -> adw::AboutWindow {
    let about = adw::AboutWindow::builder()
        .application_name(gettext("Gearshift"))
        .application_icon(APP_ID)
        .developer_name(gettext("The Gearshift developers"))
        .version(env!("CARGO_PKG_VERSION"))
        .website(env!("CARGO_PKG_REPOSITORY"))
        .issue_url(format!("{}/issues", env!("CARGO_PKG_REPOSITORY")))
        .license_type(gtk::License::Gpl20Only)
        .comments(gettext(
            "Runs a sched_ext CPU scheduler on your desktop and lets you steer it.",
        ))
        // Translators: your names, one per line.
        .translator_credits(gettext("translator-credits"))
        .modal(true)
        .build();
    if let Some(window) = app.active_window() {
        about.set_transient_for(Some(&window));
    }
    about.present();
    about
}
