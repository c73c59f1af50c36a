//! The clients' model of gearshiftd: its properties, typed, read with GetAll and kept up to
//! date from PropertiesChanged.

use zbus::fdo::PropertiesProxy;
use zbus::names::InterfaceName;
use zbus::proxy::CacheProperties;
use zbus::Connection;

use crate::check::CheckReport;
use crate::model::{HoldInfo, ProfileInfo, ProfileReason, SchedulerState};
use crate::values::{dict, dicts, flag, text, Dict};
use crate::{Error, BUS_NAME, INTERFACE, OBJECT_PATH};

/// The daemon's properties. The ones newer daemons added are `Option`s: `None` when this
/// daemon does not have them. Unknown property names and values of the wrong type are
/// ignored, so an older or newer daemon still reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DaemonProperties {
    /// An unknown spelling counts as stopped, as a missing one does.
    pub state: SchedulerState,
    pub state_reason: String,
    pub profile: String,
    /// Entries that do not parse are left out.
    pub profiles: Vec<ProfileInfo>,
    pub mode: String,
    pub preemption: bool,
    pub auto_power_source: bool,
    pub follow_power_profile: bool,
    pub sched_ext_supported: bool,
    pub version: String,
    pub profile_reason: Option<ProfileReason>,
    /// Oldest first; entries that do not parse are left out.
    pub active_holds: Option<Vec<HoldInfo>>,
    pub on_battery: Option<bool>,
    pub power_profile: Option<String>,
    /// The foreground app's cgroup name; "" for none, and with daemons that do not know it.
    pub foreground_app: String,
    /// The profile in effect favours the foreground app (false with daemons that do not).
    pub foreground_boost: bool,
    /// A responsiveness check is under way (false with daemons that have none).
    pub check_running: bool,
    /// The last completed responsiveness check.
    pub last_check: Option<CheckReport>,
}

impl DaemonProperties {
    /// The model of a GetAll answer.
    pub fn from_props(props: &Dict) -> Self {
        let mut model = Self::default();
        model.apply(props);
        model
    }

    /// Takes in changed properties (a PropertiesChanged's values).
    pub fn apply(&mut self, props: &Dict) {
        for (name, value) in props {
            match name.as_str() {
                "State" => {
                    self.state = text(value).and_then(|s| s.parse().ok()).unwrap_or_default()
                }
                "StateReason" => self.state_reason = text(value).unwrap_or_default(),
                "Profile" => self.profile = text(value).unwrap_or_default(),
                "Profiles" => {
                    self.profiles = dicts(value)
                        .iter()
                        .filter_map(ProfileInfo::from_dict)
                        .collect()
                }
                "Mode" => self.mode = text(value).unwrap_or_default(),
                "Preemption" => self.preemption = flag(value).unwrap_or_default(),
                "AutoPowerSource" => self.auto_power_source = flag(value).unwrap_or_default(),
                "FollowPowerProfile" => self.follow_power_profile = flag(value).unwrap_or_default(),
                "SchedExtSupported" => self.sched_ext_supported = flag(value).unwrap_or_default(),
                "Version" => self.version = text(value).unwrap_or_default(),
                "ProfileReason" => {
                    self.profile_reason = text(value).map(|s| ProfileReason::from(s.as_str()))
                }
                "ActiveHolds" => {
                    self.active_holds = Some(
                        dicts(value)
                            .iter()
                            .filter_map(HoldInfo::from_dict)
                            .collect(),
                    )
                }
                "OnBattery" => self.on_battery = flag(value),
                "PowerProfile" => self.power_profile = text(value),
                "ForegroundApp" => self.foreground_app = text(value).unwrap_or_default(),
                "ForegroundBoost" => self.foreground_boost = flag(value).unwrap_or_default(),
                "CheckRunning" => self.check_running = flag(value).unwrap_or_default(),
                "LastCheck" => {
                    self.last_check = dict(value).as_ref().and_then(CheckReport::from_dict)
                }
                _ => {}
            }
        }
    }

    /// gearshiftd runs the last profile that worked because the chosen one kept failing
    /// (see the FellBack signal); StateReason says which one failed and why.
    pub fn fell_back(&self) -> bool {
        self.profile_reason == Some(ProfileReason::Fallback)
    }

    /// The app in front of the user and whether the profile in effect favours it; None when
    /// no app is (or the daemon does not know).
    pub fn foreground(&self) -> Option<(&str, bool)> {
        (!self.foreground_app.is_empty())
            .then_some((self.foreground_app.as_str(), self.foreground_boost))
    }

    /// The newest hold on the profile in effect, if a hold put it there.
    pub fn hold_in_effect(&self) -> Option<&HoldInfo> {
        self.active_holds
            .as_ref()?
            .iter()
            .rev()
            .find(|hold| hold.profile == self.profile)
    }

    /// Reads every property of the daemon on `conn`.
    pub async fn read(conn: &Connection) -> Result<Self, Error> {
        let props = properties_proxy(conn).await?;
        Ok(Self::read_with(&props).await?)
    }

    pub(crate) async fn read_with(props: &PropertiesProxy<'_>) -> zbus::fdo::Result<Self> {
        let iface = InterfaceName::from_static_str_unchecked(INTERFACE);
        Ok(Self::from_props(&props.get_all(iface).await?))
    }
}

/// org.freedesktop.DBus.Properties of gearshiftd's object, uncached: every read goes to the
/// daemon.
pub(crate) async fn properties_proxy(conn: &Connection) -> zbus::Result<PropertiesProxy<'static>> {
    PropertiesProxy::builder(conn)
        .destination(BUS_NAME)?
        .path(OBJECT_PATH)?
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use gearshift_types::Mode;
    use zbus::zvariant::Value;

    use super::*;
    use crate::values::owned;

    fn get_all() -> Dict {
        let profile = ProfileInfo {
            name: "fifo".into(),
            description: "d".into(),
            mode: Mode::Fifo,
            preemption: false,
            foreground_boost: true,
        };
        let hold = HoldInfo {
            cookie: 3,
            profile: "fifo".into(),
            reason: "game".into(),
            application_id: "org.example.Game".into(),
        };
        HashMap::from([
            ("State".to_owned(), owned(Value::from("running"))),
            ("StateReason".to_owned(), owned(Value::from(""))),
            ("Profile".to_owned(), owned(Value::from("fifo"))),
            ("ProfileReason".to_owned(), owned(Value::from("hold"))),
            (
                "ActiveHolds".to_owned(),
                owned(Value::from(vec![hold.to_dict()])),
            ),
            (
                "Profiles".to_owned(),
                owned(Value::from(vec![profile.to_dict()])),
            ),
            ("Mode".to_owned(), owned(Value::from("fifo"))),
            ("Preemption".to_owned(), owned(Value::from(false))),
            ("OnBattery".to_owned(), owned(Value::from(true))),
            ("PowerProfile".to_owned(), owned(Value::from("balanced"))),
            ("AutoPowerSource".to_owned(), owned(Value::from(true))),
            ("FollowPowerProfile".to_owned(), owned(Value::from(false))),
            ("SchedExtSupported".to_owned(), owned(Value::from(true))),
            ("Version".to_owned(), owned(Value::from("1.2.3"))),
            (
                "ForegroundApp".to_owned(),
                owned(Value::from("app-gnome-org.gnome.Calculator-1234.scope")),
            ),
            ("ForegroundBoost".to_owned(), owned(Value::from(true))),
            ("SomethingNew".to_owned(), owned(Value::from(1u32))),
            ("CheckRunning".to_owned(), owned(Value::from(true))),
            (
                "LastCheck".to_owned(),
                owned(Value::from(check_report().to_dict())),
            ),
        ])
    }

    fn check_report() -> CheckReport {
        CheckReport {
            finished: 1_764_000_000,
            seconds: 8,
            results: vec![crate::CheckResult {
                scheduler: "default".into(),
                expected: 479,
                on_time: 400,
                miss_pct: 16.5,
                wakeup_p50_us: 900,
                wakeup_p99_us: 12_000,
                load_per_s: 3000.0,
            }],
        }
    }

    #[test]
    fn get_all_reads_every_property() {
        let d = DaemonProperties::from_props(&get_all());
        assert!(d.check_running);
        assert_eq!(d.last_check, Some(check_report()));
        assert_eq!(d.state, SchedulerState::Running);
        assert_eq!(d.profile, "fifo");
        assert_eq!(d.profile_reason, Some(ProfileReason::Hold));
        assert_eq!(d.profiles.len(), 1);
        assert_eq!(d.profiles[0].mode, Mode::Fifo);
        assert_eq!(d.mode, "fifo");
        assert!(!d.preemption && d.auto_power_source && !d.follow_power_profile);
        assert!(d.sched_ext_supported);
        assert_eq!(d.version, "1.2.3");
        assert_eq!(d.on_battery, Some(true));
        assert_eq!(d.power_profile.as_deref(), Some("balanced"));
        let hold = d.hold_in_effect().expect("a hold put fifo there");
        assert_eq!((hold.cookie, hold.reason.as_str()), (3, "game"));
        assert!(!d.fell_back());
        assert_eq!(
            d.foreground(),
            Some(("app-gnome-org.gnome.Calculator-1234.scope", true))
        );
        assert!(d.profiles[0].foreground_boost);
    }

    #[test]
    fn an_older_daemon_leaves_the_newer_properties_unknown() {
        let mut props = get_all();
        for newer in [
            "ProfileReason",
            "ActiveHolds",
            "OnBattery",
            "PowerProfile",
            "ForegroundApp",
            "ForegroundBoost",
            "CheckRunning",
            "LastCheck",
        ] {
            props.remove(newer);
        }
        let d = DaemonProperties::from_props(&props);
        assert_eq!(d.profile_reason, None);
        assert_eq!(d.active_holds, None);
        assert_eq!(d.on_battery, None);
        assert_eq!(d.power_profile, None);
        assert_eq!(d.hold_in_effect(), None);
        assert_eq!(d.foreground_app, "");
        assert!(!d.foreground_boost);
        assert_eq!(d.foreground(), None);
        assert!(!d.check_running);
        assert_eq!(d.last_check, None);
    }

    #[test]
    fn properties_changed_updates_what_it_names() {
        let mut d = DaemonProperties::from_props(&get_all());
        d.apply(&HashMap::from([
            ("ProfileReason".to_owned(), owned(Value::from("fallback"))),
            ("Profile".to_owned(), owned(Value::from("interactive"))),
            (
                "ActiveHolds".to_owned(),
                owned(Value::from(Vec::<Dict>::new())),
            ),
            ("State".to_owned(), owned(Value::from("exploded"))),
        ]));
        assert!(d.fell_back());
        assert_eq!(d.profile, "interactive");
        d.apply(&HashMap::from([
            ("ForegroundApp".to_owned(), owned(Value::from(""))),
            ("ForegroundBoost".to_owned(), owned(Value::from(false))),
        ]));
        assert_eq!(d.foreground(), None);
        assert_eq!(d.active_holds, Some(Vec::new()));
        // Unknown spellings of State count as stopped.
        assert_eq!(d.state, SchedulerState::Stopped);
        // What the change does not name stays.
        assert_eq!(d.version, "1.2.3");
        assert_eq!(d.mode, "fifo");
        // A value of the wrong type is no value.
        d.apply(&HashMap::from([(
            "Preemption".to_owned(),
            owned(Value::from("yes")),
        )]));
        assert!(!d.preemption);
        d.apply(&HashMap::from([(
            "ProfileReason".to_owned(),
            owned(Value::from("moon-phase")),
        )]));
        assert_eq!(
            d.profile_reason,
            Some(ProfileReason::Other("moon-phase".into()))
        );
    }
}
