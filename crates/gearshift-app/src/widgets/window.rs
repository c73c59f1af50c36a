//! The main window: status, profiles, preemption, automatic rules, activity graphs. It shows
//! what the client reports and turns a person's clicks into calls; nothing here waits for the
//! daemon on the main thread.

use std::cell::{Cell, OnceCell, RefCell};
use std::future::Future;
use std::rc::Rc;

use adw::prelude::*;
use adw::subclass::prelude::*;
use gearshift_dbus::{DaemonProperties, ProfileInfo, SchedulerState};
use gettextrs::gettext;
use gtk::{gdk, glib};

use crate::check_model;
use crate::client::{Client, Event, Switch};
use crate::history::{History, Series};
use crate::model::{self, Action, DaemonText};
use crate::widgets::{CheckPage, StatsGraph, StatusPanel};

/// One row of the profile list.
#[derive(Debug, Clone)]
pub struct ProfileRow {
    pub name: String,
    pub row: adw::ActionRow,
    pub check: gtk::Image,
}

mod imp {
    use super::*;

    #[derive(Default, gtk::CompositeTemplate)]
    #[template(file = "window.ui")]
    pub struct Window {
        #[template_child]
        pub toasts: TemplateChild<adw::ToastOverlay>,
        #[template_child]
        pub status: TemplateChild<StatusPanel>,
        #[template_child]
        pub profiles_group: TemplateChild<adw::PreferencesGroup>,
        #[template_child]
        pub profile_list: TemplateChild<gtk::ListBox>,
        #[template_child]
        pub settings_group: TemplateChild<adw::PreferencesGroup>,
        #[template_child]
        pub preemption_switch: TemplateChild<gtk::Switch>,
        #[template_child]
        pub mode_label: TemplateChild<gtk::Label>,
        #[template_child]
        pub rules_group: TemplateChild<adw::PreferencesGroup>,
        #[template_child]
        pub battery_switch: TemplateChild<gtk::Switch>,
        #[template_child]
        pub power_mode_switch: TemplateChild<gtk::Switch>,
        #[template_child]
        pub reason_row: TemplateChild<adw::ActionRow>,
        #[template_child]
        pub dispatch_graph: TemplateChild<StatsGraph>,
        #[template_child]
        pub queued_graph: TemplateChild<StatsGraph>,
        #[template_child]
        pub tasks_graph: TemplateChild<StatsGraph>,
        #[template_child]
        pub pages: TemplateChild<adw::ViewStack>,
        #[template_child]
        pub check_page: TemplateChild<CheckPage>,
        /// The running check's last progress report.
        pub check_progress: RefCell<Option<check_model::Progress>>,

        pub client: OnceCell<Client>,
        /// None while gearshiftd is absent.
        pub daemon: RefCell<Option<DaemonProperties>>,
        /// Why it is absent.
        pub absent: RefCell<String>,
        pub history: Rc<RefCell<History>>,
        /// Set while the window writes widgets from the daemon's state, so their change
        /// handlers know it was not a person.
        pub updating: Cell<bool>,
        pub rows: RefCell<Vec<ProfileRow>>,
        pub shown_profiles: RefCell<Vec<ProfileInfo>>,
        pub subscribed: Cell<bool>,
        pub shown_toasts: RefCell<Vec<adw::Toast>>,
        pub minimized: Cell<bool>,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for Window {
        const NAME: &'static str = "GearshiftWindow";
        type Type = super::Window;
        type ParentType = adw::ApplicationWindow;

        fn class_init(klass: &mut Self::Class) {
            StatusPanel::ensure_type();
            StatsGraph::ensure_type();
            CheckPage::ensure_type();
            klass.bind_template();
        }

        fn instance_init(obj: &glib::subclass::InitializingObject<Self>) {
            obj.init_template();
        }
    }

    impl ObjectImpl for Window {
        fn constructed(&self) {
            self.parent_constructed();
            self.obj().setup();
        }
    }

    impl WidgetImpl for Window {}
    impl WindowImpl for Window {}
    impl ApplicationWindowImpl for Window {}
    impl AdwApplicationWindowImpl for Window {}
}

glib::wrapper! {
    pub struct Window(ObjectSubclass<imp::Window>)
        @extends adw::ApplicationWindow, gtk::ApplicationWindow, gtk::Window, gtk::Widget,
        @implements gtk::gio::ActionGroup, gtk::gio::ActionMap, gtk::Buildable,
                    gtk::ConstraintTarget, gtk::Native, gtk::Root, gtk::ShortcutManager;
}

impl Window {
    /// A window showing what `client` reports through `events`.
    pub fn new(
        app: &adw::Application,
        client: Client,
        events: async_channel::Receiver<Event>,
    ) -> Self {
        let window: Self = glib::Object::builder().property("application", app).build();
        window.imp().absent.replace(gettext("Connecting…"));
        let _ = window.imp().client.set(client);
        window.render();
        let weak = window.downgrade();
        glib::spawn_future_local(async move {
            while let Ok(event) = events.recv().await {
                let Some(window) = weak.upgrade() else { break };
                window.handle(event);
            }
        });
        window
    }

    fn setup(&self) {
        let imp = self.imp();
        let history = imp.history.clone();
        imp.dispatch_graph.setup(
            &gettext("Dispatches"),
            Series::Dispatches,
            vec![gettext("user space"), gettext("kernel")],
            &gettext("/s"),
            history.clone(),
        );
        imp.queued_graph.setup(
            &gettext("Queued to the policy"),
            Series::Queued,
            vec![gettext("tasks")],
            &gettext("/s"),
            history.clone(),
        );
        imp.tasks_graph.setup(
            &gettext("Tasks"),
            Series::Tasks,
            vec![gettext("running"), gettext("waiting")],
            "",
            history,
        );

        let this = self.downgrade();
        imp.status.connect_action(move |action| {
            if let Some(this) = this.upgrade() {
                this.run_action(action);
            }
        });
        let (run, cancel) = (self.downgrade(), self.downgrade());
        imp.check_page.connect(
            move |seconds| {
                let Some(this) = run.upgrade() else { return };
                this.call(
                    move |client| async move { client.start_check(seconds).await },
                    |this, ok| {
                        if !ok {
                            this.imp().check_page.start_refused();
                        }
                    },
                );
            },
            move || {
                let Some(this) = cancel.upgrade() else { return };
                this.call(
                    |client| async move { client.cancel_check().await },
                    |_, _| {},
                );
            },
        );
        let this = self.downgrade();
        imp.profile_list.connect_row_activated(move |_, row| {
            let Some(this) = this.upgrade() else { return };
            let name = this
                .imp()
                .rows
                .borrow()
                .iter()
                .find(|r| r.row.upcast_ref::<gtk::ListBoxRow>() == row)
                .map(|r| r.name.clone());
            if let Some(name) = name {
                this.choose_profile(name);
            }
        });
        for (switch, setting) in [
            (&*imp.preemption_switch, Switch::Preemption),
            (&*imp.battery_switch, Switch::AutoPowerSource),
            (&*imp.power_mode_switch, Switch::FollowPowerProfile),
        ] {
            let this = self.downgrade();
            switch.connect_active_notify(move |switch| {
                let Some(this) = this.upgrade() else { return };
                if !this.imp().updating.get() {
                    this.write_switch(switch.clone(), setting);
                }
            });
        }

        self.connect_map(|w| w.update_stats_wanted());
        self.connect_unmap(|w| w.update_stats_wanted());
        self.connect_realize(|w| {
            let Some(toplevel) = gtk::prelude::NativeExt::surface(w)
                .and_then(|s| s.downcast::<gdk::Toplevel>().ok())
            else {
                return;
            };
            let this = w.downgrade();
            toplevel.connect_state_notify(move |t| {
                if let Some(this) = this.upgrade() {
                    let minimized = t.state().contains(gdk::ToplevelState::MINIMIZED);
                    this.imp().minimized.set(minimized);
                    this.update_stats_wanted();
                }
            });
        });
    }

    fn client(&self) -> Option<Client> {
        self.imp().client.get().cloned()
    }

    /// Stats flow only while a person can see the graphs.
    fn update_stats_wanted(&self) {
        let visible = gtk::prelude::WidgetExt::is_mapped(self) && !self.imp().minimized.get();
        if let Some(client) = self.client() {
            client.want_stats(visible);
        }
    }

    fn handle(&self, event: Event) {
        let imp = self.imp();
        match event {
            Event::Connected(daemon) => {
                imp.daemon.replace(Some(daemon));
                imp.history.borrow_mut().clear();
            }
            Event::Absent(why) => {
                imp.daemon.replace(None);
                imp.absent.replace(why);
                imp.history.borrow_mut().clear();
            }
            Event::Changed(daemon) => {
                imp.daemon.replace(Some(daemon));
            }
            Event::Stats(stats) => {
                imp.history
                    .borrow_mut()
                    .push(glib::monotonic_time(), &stats);
                for graph in [&imp.dispatch_graph, &imp.queued_graph, &imp.tasks_graph] {
                    graph.refresh();
                }
                return;
            }
            Event::Exited {
                reason,
                will_restart,
            } => {
                // Without a restart the state (stopped, failed) shows the reason; a crash
                // loop shows one message at a time.
                if will_restart && imp.shown_toasts.borrow().is_empty() {
                    let text = gettext("The scheduler exited and is being restarted: {}");
                    self.toast(&crate::i18n::fill(&text, &reason));
                }
                return;
            }
            Event::Subscribed(on) => {
                imp.subscribed.set(on);
                return;
            }
            Event::CheckProgress {
                fraction,
                scheduler,
            } => {
                imp.check_progress.replace(Some(check_model::Progress {
                    fraction,
                    scheduler,
                }));
            }
            Event::CheckFinished { completed, message } => {
                imp.check_progress.replace(None);
                if !completed {
                    let text = gettext("The check ended early ({}); what ran before runs again.");
                    self.toast(&crate::i18n::fill(&text, &message));
                }
            }
        }
        self.render();
    }

    /// Shows a short message at the bottom of the window.
    pub fn toast(&self, text: &str) {
        let toast = adw::Toast::new(text);
        let this = self.downgrade();
        toast.connect_dismissed(move |toast| {
            if let Some(this) = this.upgrade() {
                this.imp().shown_toasts.borrow_mut().retain(|t| t != toast);
            }
        });
        self.imp().toasts.add_toast(toast.clone());
        self.imp().shown_toasts.borrow_mut().push(toast);
    }

    /// How many messages are on show or waiting to be.
    pub fn toasts_shown(&self) -> usize {
        self.imp().shown_toasts.borrow().len()
    }

    fn render(&self) {
        let imp = self.imp();
        let daemon = imp.daemon.borrow();
        let progress = imp.check_progress.borrow();
        imp.check_page.show(&check_model::check_page_view(
            daemon.as_ref(),
            progress.as_ref(),
        ));
        let groups = [
            &*imp.profiles_group,
            &*imp.settings_group,
            &*imp.rules_group,
        ];
        let Some(d) = daemon.as_ref() else {
            imp.status.show(&model::absent_view(&imp.absent.borrow()));
            for group in groups {
                group.set_sensitive(false);
            }
            return;
        };
        imp.status.show(&d.status_view());
        let usable = d.state != SchedulerState::Unsupported;
        for group in groups {
            group.set_sensitive(usable);
        }
        imp.updating.set(true);
        self.render_profiles(d);
        imp.preemption_switch.set_active(d.preemption);
        imp.battery_switch.set_active(d.auto_power_source);
        imp.power_mode_switch.set_active(d.follow_power_profile);
        imp.updating.set(false);
        imp.mode_label.set_label(&model::mode_label(&d.mode));
        match d.reason_text() {
            Some(why) => {
                imp.reason_row.set_subtitle(&why);
                imp.reason_row.set_visible(true);
            }
            None => imp.reason_row.set_visible(false),
        }
        let power = d.power_text();
        imp.rules_group
            .set_description((!power.is_empty()).then_some(power.as_str()));
    }

    fn render_profiles(&self, d: &DaemonProperties) {
        let imp = self.imp();
        if *imp.shown_profiles.borrow() != d.profiles {
            let mut rows = imp.rows.borrow_mut();
            for old in rows.drain(..) {
                imp.profile_list.remove(&old.row);
            }
            for p in &d.profiles {
                let row = adw::ActionRow::builder()
                    .title(model::profile_title(&p.name))
                    .subtitle(model::profile_description(&p.description))
                    .activatable(true)
                    .build();
                row.set_widget_name(&format!("profile-{}", p.name));
                let check = gtk::Image::from_icon_name("object-select-symbolic");
                check.set_tooltip_text(Some(&gettext("Active profile")));
                row.add_suffix(&check);
                imp.profile_list.append(&row);
                rows.push(ProfileRow {
                    name: p.name.clone(),
                    row,
                    check,
                });
            }
            imp.shown_profiles.replace(d.profiles.clone());
        }
        for r in imp.rows.borrow().iter() {
            let active = r.name == d.profile;
            r.check.set_opacity(if active { 1.0 } else { 0.0 });
        }
        let description = if d.profile == gearshift_dbus::CUSTOM_PROFILE {
            Some(gettext(
                "Custom settings: the mode or preemption was changed and matches no profile.",
            ))
        } else {
            None
        };
        imp.profiles_group.set_description(description.as_deref());
    }

    /// Runs a call to the daemon on the main loop, showing its error as a toast.
    fn call<F, Fut>(&self, make: F, after: impl FnOnce(&Self, bool) + 'static)
    where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = Result<(), String>> + 'static,
    {
        let Some(client) = self.client() else { return };
        let fut = make(client);
        let weak = self.downgrade();
        glib::spawn_future_local(async move {
            let result = fut.await;
            let Some(this) = weak.upgrade() else { return };
            if let Err(e) = &result {
                this.toast(e);
            }
            after(&this, result.is_ok());
        });
    }

    fn run_action(&self, action: Action) {
        self.imp().status.set_busy(true);
        self.call(
            move |client| async move {
                match action {
                    Action::Start => client.start_scheduler().await,
                    Action::Stop => client.stop_scheduler().await,
                    Action::Retry => client.restart_scheduler().await,
                }
            },
            |this, _| this.imp().status.set_busy(false),
        );
    }

    fn choose_profile(&self, name: String) {
        let current = self
            .imp()
            .daemon
            .borrow()
            .as_ref()
            .map(|d| d.profile.clone());
        if current.as_deref() == Some(name.as_str()) {
            return;
        }
        self.imp().profile_list.set_sensitive(false);
        self.call(
            move |client| async move { client.set_profile(name).await },
            |this, _| this.imp().profile_list.set_sensitive(true),
        );
    }

    fn write_switch(&self, switch: gtk::Switch, setting: Switch) {
        let on = switch.is_active();
        switch.set_sensitive(false);
        self.call(
            move |client| async move { client.set_switch(setting, on).await },
            move |this, ok| {
                switch.set_sensitive(true);
                if !ok {
                    // Put the switch back where the daemon has it.
                    this.render();
                }
            },
        );
    }

    /// The profile rows (name, row): tests activate them as a person would.
    pub fn profile_rows(&self) -> Vec<ProfileRow> {
        self.imp().rows.borrow().clone()
    }

    /// The check page, shown (as a person switching to it would).
    pub fn show_check_page(&self) -> CheckPage {
        let imp = self.imp();
        imp.pages.set_visible_child_name("check");
        imp.check_page.clone()
    }

    pub fn status_panel(&self) -> StatusPanel {
        self.imp().status.get()
    }

    pub fn preemption_switch(&self) -> gtk::Switch {
        self.imp().preemption_switch.get()
    }

    /// Whether the window holds a stats subscription now.
    pub fn stats_subscribed(&self) -> bool {
        self.imp().subscribed.get()
    }

    /// How many graph samples there are.
    pub fn graph_samples(&self) -> usize {
        self.imp().history.borrow().samples().len()
    }
}
