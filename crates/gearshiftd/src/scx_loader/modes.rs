//! scx_loader's scheduler modes and the Gearshift profiles they select.
//!
//! scx_loader starts each scheduler with per-mode flags; Gearshift has profiles instead. Each
//! mode selects one profile (`[compat.scx_loader_modes]`, else the built-in choice below), and
//! the mode reported back is the one that selects the active profile.

use crate::config::Config;

/// scx_loader's modes, numbered as on its bus (the `sched_mode` arguments, `SchedulerMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoaderMode {
    Auto = 0,
    Gaming = 1,
    PowerSave = 2,
    LowLatency = 3,
    Server = 4,
}

impl LoaderMode {
    pub const ALL: [LoaderMode; 5] = [
        LoaderMode::Auto,
        LoaderMode::Gaming,
        LoaderMode::PowerSave,
        LoaderMode::LowLatency,
        LoaderMode::Server,
    ];

    pub fn from_number(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.number() == n)
    }

    pub fn number(self) -> u32 {
        self as u32
    }

    /// Every mode with its number, for error messages: "0 (Auto), 1 (Gaming), …".
    pub fn listing() -> String {
        Self::ALL
            .iter()
            .map(|m| format!("{} ({m:?})", m.number()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The profile configured for this mode, if any.
    fn configured(self, config: &Config) -> Option<&str> {
        let m = &config.compat.scx_loader_modes;
        match self {
            LoaderMode::Auto => m.auto.as_deref(),
            LoaderMode::Gaming => m.gaming.as_deref(),
            LoaderMode::PowerSave => m.powersave.as_deref(),
            LoaderMode::LowLatency => m.lowlatency.as_deref(),
            LoaderMode::Server => m.server.as_deref(),
        }
    }

    /// The built-in choice. Auto is "let the scheduler decide": the default profile. Games and
    /// latency-sensitive work want interactive tasks first with wakeup preemption; a server
    /// wants throughput (no preemption); power saving packs work onto few cores.
    fn builtin(self) -> Option<&'static str> {
        match self {
            LoaderMode::Auto => None,
            LoaderMode::Gaming | LoaderMode::LowLatency => Some("interactive"),
            LoaderMode::PowerSave => Some("low-power"),
            LoaderMode::Server => Some("throughput"),
        }
    }

    /// The profile this mode selects: as configured, else the built-in choice if that profile
    /// exists (a config may replace the built-in profiles), else the default profile.
    pub fn profile(self, config: &Config) -> &str {
        self.configured(config)
            .or(self.builtin())
            .filter(|name| config.profile(name).is_some())
            .unwrap_or(&config.default_profile)
    }

    /// The mode to report while `profile` is active: `asked` (the last mode a client chose) if
    /// it selects that profile — several modes may select the same one — else the first mode
    /// that does, else Auto (a profile no mode selects, or "custom").
    pub fn for_profile(profile: &str, asked: Option<LoaderMode>, config: &Config) -> LoaderMode {
        asked
            .into_iter()
            .chain(Self::ALL)
            .find(|m| m.profile(config) == profile)
            .unwrap_or(LoaderMode::Auto)
    }

    /// The scx_gearshift command line that runs this mode's profile, for clients that show
    /// scx_loader's per-mode arguments (gearshiftd sets them over the control socket).
    pub fn scheduler_args(self, config: &Config) -> Vec<String> {
        match config.profile(self.profile(config)) {
            Some(p) => vec![
                "--mode".into(),
                p.mode.to_string(),
                "--preemption".into(),
                p.preemption.to_string(),
            ],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("test.toml")).expect("config parses")
    }

    #[test]
    fn numbers_are_scx_loaders() {
        for (n, mode) in LoaderMode::ALL.iter().enumerate() {
            assert_eq!(LoaderMode::from_number(n as u32), Some(*mode));
        }
        assert_eq!(LoaderMode::from_number(3), Some(LoaderMode::LowLatency));
        assert_eq!(LoaderMode::from_number(5), None);
        assert!(LoaderMode::listing().starts_with("0 (Auto), 1 (Gaming)"));
    }

    #[test]
    fn builtin_mapping_with_the_builtin_profiles() {
        let c = config("");
        let got: Vec<&str> = LoaderMode::ALL.iter().map(|m| m.profile(&c)).collect();
        assert_eq!(
            got,
            [
                "interactive",
                "interactive",
                "low-power",
                "interactive",
                "throughput"
            ]
        );
        let c = config("default_profile = \"fifo\"\n");
        assert_eq!(LoaderMode::Auto.profile(&c), "fifo");
        assert_eq!(LoaderMode::Gaming.profile(&c), "interactive");
    }

    #[test]
    fn missing_builtin_profiles_fall_back_to_the_default() {
        let c = config(
            "default_profile = \"quiet\"\n[[profile]]\nname = \"quiet\"\nmode = \"low-power\"\n\
             [[profile]]\nname = \"throughput\"\nmode = \"interactive\"\npreemption = false\n",
        );
        assert_eq!(LoaderMode::Gaming.profile(&c), "quiet");
        assert_eq!(LoaderMode::PowerSave.profile(&c), "quiet");
        assert_eq!(LoaderMode::Server.profile(&c), "throughput");
    }

    #[test]
    fn configured_profiles_win() {
        let c = config("[compat.scx_loader_modes]\ngaming = \"fifo\"\nserver = \"low-power\"\n");
        assert_eq!(LoaderMode::Gaming.profile(&c), "fifo");
        assert_eq!(LoaderMode::Server.profile(&c), "low-power");
        assert_eq!(LoaderMode::LowLatency.profile(&c), "interactive");
        assert_eq!(
            LoaderMode::Gaming.scheduler_args(&c),
            ["--mode", "fifo", "--preemption", "true"]
        );
    }

    #[test]
    fn reported_mode_prefers_what_was_asked() {
        let c = config("");
        let asked = Some(LoaderMode::LowLatency);
        assert_eq!(
            LoaderMode::for_profile("interactive", asked, &c),
            LoaderMode::LowLatency
        );
        // Without a wish, the first mode that selects it (Auto selects the default profile).
        assert_eq!(
            LoaderMode::for_profile("interactive", None, &c),
            LoaderMode::Auto
        );
        // A wish that no longer matches the profile (someone else switched) is ignored.
        assert_eq!(
            LoaderMode::for_profile("throughput", asked, &c),
            LoaderMode::Server
        );
        assert_eq!(LoaderMode::for_profile("fifo", None, &c), LoaderMode::Auto);
        assert_eq!(
            LoaderMode::for_profile("custom", None, &c),
            LoaderMode::Auto
        );
    }
}
