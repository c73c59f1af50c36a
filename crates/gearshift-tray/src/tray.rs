//! The StatusNotifierItem (ksni): icon, tooltip and menu drawn from a [`View`]. Menu clicks
//! become [`Command`]s for the daemon task; the menu changes only when gearshiftd reports the
//! change, so it always shows the daemon's state.

use gearshift_dbus::SchedulerState;
use ksni::menu::{CheckmarkItem, RadioGroup, RadioItem, StandardItem};
use ksni::{MenuItem, ToolTip};
use tokio::sync::mpsc::UnboundedSender;

use crate::view::View;

/// What a click asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    SetProfile(String),
    SetPreemption(bool),
    Start,
    OpenApp,
    Quit,
}

/// Menu labels, shared with the tests.
pub const OPEN_APP: &str = "Open Gearshift";
pub const PREEMPTION: &str = "Preemption";
pub const START: &str = "Start scheduler";
pub const QUIT: &str = "Quit";

pub struct GearshiftTray {
    pub view: View,
    commands: UnboundedSender<Command>,
    icon_theme_path: String,
}

impl GearshiftTray {
    pub fn new(commands: UnboundedSender<Command>, icon_theme_path: String) -> Self {
        Self {
            view: View::default(),
            commands,
            icon_theme_path,
        }
    }

    fn send(&self, command: Command) {
        // Fails only while the daemon task is gone, i.e. the tray is quitting.
        let _ = self.commands.send(command);
    }

    fn label(text: impl Into<String>) -> MenuItem<Self> {
        StandardItem {
            label: text.into(),
            enabled: false,
            ..Default::default()
        }
        .into()
    }

    fn action(text: &str, command: Command) -> MenuItem<Self> {
        StandardItem {
            label: text.to_owned(),
            activate: Box::new(move |tray: &mut Self| tray.send(command.clone())),
            ..Default::default()
        }
        .into()
    }
}

impl ksni::Tray for GearshiftTray {
    fn id(&self) -> String {
        "io.github.gearshift.Gearshift.Tray".into()
    }

    fn title(&self) -> String {
        "Gearshift".into()
    }

    fn category(&self) -> ksni::Category {
        ksni::Category::SystemServices
    }

    fn status(&self) -> ksni::Status {
        if self.view.needs_attention() {
            ksni::Status::NeedsAttention
        } else {
            ksni::Status::Active
        }
    }

    fn icon_name(&self) -> String {
        self.view.icon_name()
    }

    fn icon_theme_path(&self) -> String {
        self.icon_theme_path.clone()
    }

    fn tool_tip(&self) -> ToolTip {
        let (title, description) = self.view.tooltip();
        ToolTip {
            icon_name: self.view.icon_name(),
            title,
            description,
            ..Default::default()
        }
    }

    fn activate(&mut self, _x: i32, _y: i32) {
        self.send(Command::OpenApp);
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        let mut items = Vec::new();
        if let Some(line) = self.view.status_line() {
            items.push(Self::label(line));
        }
        if let Some(err) = &self.view.last_error {
            items.push(Self::label(err.clone()));
        }
        if let Some(daemon) = &self.view.daemon {
            if matches!(
                daemon.state,
                SchedulerState::Stopped | SchedulerState::Failed
            ) {
                items.push(Self::action(START, Command::Start));
            }
            if !items.is_empty() {
                items.push(MenuItem::Separator);
            }
            let profiles = &daemon.profiles;
            let active = &daemon.profile;
            // No radio item is checked while the profile is "custom".
            let selected = profiles
                .iter()
                .position(|p| &p.name == active)
                .unwrap_or(usize::MAX);
            let names: Vec<String> = profiles.iter().map(|p| p.name.clone()).collect();
            items.push(
                RadioGroup {
                    selected,
                    select: Box::new(move |tray: &mut Self, index: usize| {
                        if let Some(name) = names.get(index) {
                            tray.send(Command::SetProfile(name.clone()));
                        }
                    }),
                    options: profiles
                        .iter()
                        .map(|p| RadioItem {
                            label: p.name.clone(),
                            ..Default::default()
                        })
                        .collect(),
                }
                .into(),
            );
            let preemption = daemon.preemption;
            items.push(
                CheckmarkItem {
                    label: PREEMPTION.into(),
                    checked: preemption,
                    activate: Box::new(move |tray: &mut Self| {
                        tray.send(Command::SetPreemption(!preemption));
                    }),
                    ..Default::default()
                }
                .into(),
            );
        }
        if !items.is_empty() {
            items.push(MenuItem::Separator);
        }
        items.push(Self::action(OPEN_APP, Command::OpenApp));
        items.push(Self::action(QUIT, Command::Quit));
        items
    }
}
