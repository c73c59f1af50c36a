//! The status area: the scheduler's state in words, and the action that helps (start, stop,
//! retry).

use std::cell::{Cell, RefCell};

use gtk::glib;
use gtk::prelude::*;
use gtk::subclass::prelude::*;

use crate::model::{Action, StatusView};

/// What the window does when the action button is pressed.
pub type ActionHandler = Box<dyn Fn(Action)>;

mod imp {
    use super::*;

    #[derive(Default, gtk::CompositeTemplate)]
    #[template(file = "status_panel.ui")]
    pub struct StatusPanel {
        #[template_child]
        pub icon: TemplateChild<gtk::Image>,
        #[template_child]
        pub title: TemplateChild<gtk::Label>,
        #[template_child]
        pub description: TemplateChild<gtk::Label>,
        #[template_child]
        pub foreground: TemplateChild<gtk::Label>,
        #[template_child]
        pub details: TemplateChild<gtk::Label>,
        #[template_child]
        pub spinner: TemplateChild<gtk::Spinner>,
        #[template_child]
        pub action: TemplateChild<gtk::Button>,
        pub current: Cell<Option<Action>>,
        pub style: RefCell<&'static str>,
        pub on_action: RefCell<Option<ActionHandler>>,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for StatusPanel {
        const NAME: &'static str = "GearshiftStatusPanel";
        type Type = super::StatusPanel;
        type ParentType = gtk::Box;

        fn class_init(klass: &mut Self::Class) {
            klass.bind_template();
        }

        fn instance_init(obj: &glib::subclass::InitializingObject<Self>) {
            obj.init_template();
        }
    }

    impl ObjectImpl for StatusPanel {
        fn constructed(&self) {
            self.parent_constructed();
            let obj = self.obj().downgrade();
            self.action.connect_clicked(move |_| {
                let Some(obj) = obj.upgrade() else { return };
                let imp = obj.imp();
                let Some(action) = imp.current.get() else {
                    return;
                };
                let on_action = imp.on_action.borrow();
                if let Some(f) = on_action.as_ref() {
                    f(action);
                }
            });
        }
    }

    impl WidgetImpl for StatusPanel {}
    impl BoxImpl for StatusPanel {}
}

glib::wrapper! {
    pub struct StatusPanel(ObjectSubclass<imp::StatusPanel>)
        @extends gtk::Box, gtk::Widget,
        @implements gtk::Buildable, gtk::ConstraintTarget, gtk::Orientable;
}

impl Default for StatusPanel {
    fn default() -> Self {
        glib::Object::new()
    }
}

impl StatusPanel {
    pub fn show(&self, view: &StatusView) {
        let imp = self.imp();
        imp.icon.set_icon_name(Some(view.icon));
        let old = imp.style.replace(view.style);
        if !old.is_empty() {
            imp.icon.remove_css_class(old);
        }
        imp.icon.add_css_class(view.style);
        imp.title.set_label(&view.title);
        imp.description.set_label(&view.description);
        imp.foreground.set_label(&view.foreground);
        imp.foreground.set_visible(!view.foreground.is_empty());
        imp.details.set_label(&view.details);
        imp.details.set_visible(!view.details.is_empty());
        imp.current.set(view.action);
        match view.action {
            Some(action) => {
                imp.action.set_label(&action.label());
                imp.action.set_visible(true);
                if action == Action::Stop {
                    imp.action.remove_css_class("suggested-action");
                } else {
                    imp.action.add_css_class("suggested-action");
                }
            }
            None => imp.action.set_visible(false),
        }
    }

    /// While a call is under way: a spinner, and the action can't be pressed twice.
    pub fn set_busy(&self, busy: bool) {
        let imp = self.imp();
        imp.spinner.set_visible(busy);
        imp.spinner.set_spinning(busy);
        imp.action.set_sensitive(!busy);
    }

    pub fn connect_action(&self, f: impl Fn(Action) + 'static) {
        self.imp().on_action.replace(Some(Box::new(f)));
    }

    /// The action button (tests press it as a person would).
    pub fn action_button(&self) -> gtk::Button {
        self.imp().action.get()
    }
}
