//! The check page: runs a responsiveness check in gearshiftd, shows its progress, and the last
//! result as a bar chart per scheduler (late frames, wakeup p99) with the verdict and its date.

use std::cell::RefCell;

use adw::prelude::*;
use adw::subclass::prelude::*;
use gettextrs::gettext;
use gtk::glib;

use crate::check_model::{CheckPageView, ResultView};
use crate::i18n::fill;

mod imp {
    use super::*;

    #[derive(Default, gtk::CompositeTemplate)]
    #[template(file = "check_page.ui")]
    pub struct CheckPage {
        #[template_child]
        pub seconds: TemplateChild<gtk::SpinButton>,
        #[template_child]
        pub run_button: TemplateChild<gtk::Button>,
        #[template_child]
        pub cancel_button: TemplateChild<gtk::Button>,
        #[template_child]
        pub progress: TemplateChild<gtk::ProgressBar>,
        #[template_child]
        pub note: TemplateChild<gtk::Label>,
        #[template_child]
        pub result_group: TemplateChild<adw::PreferencesGroup>,
        #[template_child]
        pub verdict: TemplateChild<gtk::Label>,
        #[template_child]
        pub chart: TemplateChild<gtk::Grid>,
        /// The result the chart shows (None before the first), so it is rebuilt only when it
        /// changes.
        pub shown: RefCell<Option<Option<ResultView>>>,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for CheckPage {
        const NAME: &'static str = "GearshiftCheckPage";
        type Type = super::CheckPage;
        type ParentType = adw::Bin;

        fn class_init(klass: &mut Self::Class) {
            klass.bind_template();
        }

        fn instance_init(obj: &glib::subclass::InitializingObject<Self>) {
            obj.init_template();
        }
    }

    impl ObjectImpl for CheckPage {}
    impl WidgetImpl for CheckPage {}
    impl BinImpl for CheckPage {}
}

glib::wrapper! {
    pub struct CheckPage(ObjectSubclass<imp::CheckPage>)
        @extends adw::Bin, gtk::Widget,
        @implements gtk::Buildable, gtk::ConstraintTarget;
}

impl Default for CheckPage {
    fn default() -> Self {
        glib::Object::new()
    }
}

impl CheckPage {
    /// Calls `run(seconds)` when a person starts a check and `cancel()` when they cancel it.
    pub fn connect(&self, run: impl Fn(u32) + 'static, cancel: impl Fn() + 'static) {
        let imp = self.imp();
        let seconds = imp.seconds.clone();
        imp.run_button.connect_clicked(move |button| {
            button.set_sensitive(false);
            run(seconds.value_as_int().clamp(3, 120) as u32);
        });
        imp.cancel_button.connect_clicked(move |button| {
            button.set_sensitive(false);
            cancel();
        });
    }

    /// The Run button again after a start the daemon refused.
    pub fn start_refused(&self) {
        self.imp().run_button.set_sensitive(true);
    }

    pub fn show(&self, view: &CheckPageView) {
        let imp = self.imp();
        imp.run_button.set_sensitive(view.can_start);
        imp.seconds.set_sensitive(!view.running);
        imp.cancel_button.set_visible(view.running);
        if !view.running {
            imp.cancel_button.set_sensitive(true);
        }
        match &view.progress {
            Some((fraction, text)) => {
                imp.progress.set_fraction(*fraction);
                imp.progress.set_text(Some(text));
                imp.progress.set_visible(true);
            }
            None => imp.progress.set_visible(false),
        }
        imp.note.set_label(&view.note);
        imp.note.set_visible(!view.note.is_empty());
        if imp.shown.borrow().as_ref() != Some(&view.result) {
            self.show_result(view.result.as_ref());
            imp.shown.replace(Some(view.result.clone()));
        }
    }

    fn show_result(&self, result: Option<&ResultView>) {
        let imp = self.imp();
        while let Some(child) = imp.chart.first_child() {
            imp.chart.remove(&child);
        }
        let Some(r) = result else {
            imp.result_group
                .set_description(Some(&gettext("No check has been run on this machine yet.")));
            imp.verdict.set_visible(false);
            imp.chart.set_visible(false);
            return;
        };
        let when = glib::DateTime::from_unix_local(r.finished)
            .and_then(|t| t.format("%x %X"))
            .map(|s| s.to_string())
            .unwrap_or_default();
        imp.result_group
            .set_description(Some(&fill(&gettext("Measured on {}"), &when)));
        imp.verdict.set_label(&r.verdict);
        imp.verdict.set_visible(true);
        imp.chart.set_visible(true);
        let heading = |text: String, column: i32| {
            let label = gtk::Label::builder().label(text).xalign(0.0).build();
            label.add_css_class("heading");
            imp.chart.attach(&label, column, 0, 2, 1);
        };
        heading(gettext("Late frames"), 1);
        heading(gettext("Wakeup delay (p99)"), 3);
        for (i, bar) in r.bars.iter().enumerate() {
            let row = i as i32 + 1;
            let name = gtk::Label::builder().label(&bar.label).xalign(0.0).build();
            if bar.is_default {
                name.add_css_class("dim-label");
            }
            imp.chart.attach(&name, 0, row, 1, 1);
            let pairs = [
                (bar.miss_pct / 100.0, &bar.miss_text, 1),
                (bar.p99_ms / r.p99_full_ms, &bar.p99_text, 3),
            ];
            for (fraction, text, column) in pairs {
                let level = gtk::ProgressBar::builder()
                    .fraction(fraction.clamp(0.0, 1.0))
                    .hexpand(true)
                    .valign(gtk::Align::Center)
                    .build();
                level.set_tooltip_text(Some(text));
                imp.chart.attach(&level, column, row, 1, 1);
                let value = gtk::Label::builder()
                    .label(text)
                    .xalign(1.0)
                    .width_chars(8)
                    .build();
                value.add_css_class("numeric");
                imp.chart.attach(&value, column + 1, row, 1, 1);
            }
        }
        imp.chart.set_margin_top(6);
    }

    /// The Run button, for the tests.
    pub fn run_button(&self) -> gtk::Button {
        self.imp().run_button.clone()
    }

    /// The seconds per scheduler, for the tests.
    pub fn seconds(&self) -> gtk::SpinButton {
        self.imp().seconds.clone()
    }
}
