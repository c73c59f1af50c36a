//! `/etc/gearshift/config.toml`: profiles, autostart, restart and stats limits.
//!
//! A file that does not parse or validate is reported with its line and replaced by the
//! defaults as a whole: half a config is harder to reason about than none.

use std::path::{Path, PathBuf};

use gearshift_dbus::{ProfileInfo, CUSTOM_PROFILE};
use gearshift_types::Mode;
use serde::Deserialize;

/// Where the packaged daemon reads its config.
pub const DEFAULT_PATH: &str = "/etc/gearshift/config.toml";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Start the scheduler when the daemon starts.
    pub autostart: bool,
    /// Profile used when no choice was saved (or the saved one no longer exists).
    pub default_profile: String,
    /// Initial value of AutoPowerSource until someone changes it.
    pub auto_power_source: bool,
    /// Initial value of FollowPowerProfile until someone changes it.
    pub follow_power_profile: bool,
    pub scheduler: SchedulerConfig,
    pub restart: RestartConfig,
    pub stats: StatsConfig,
    pub auto: AutoConfig,
    pub compat: CompatConfig,
    #[serde(rename = "profile")]
    pub profiles: Vec<ProfileConfig>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulerConfig {
    /// The scheduler binary.
    pub path: PathBuf,
    /// Extra arguments (tunables such as `--slice-max-ns`).
    pub args: Vec<String>,
    /// How long the kernel may take to report the scheduler enabled.
    pub start_timeout_ms: u64,
    /// How long a stopping scheduler gets after SIGTERM before SIGKILL.
    pub stop_timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RestartConfig {
    /// This many unexpected exits within `window_s` leave the scheduler `failed`.
    pub max_failures: u32,
    pub window_s: u64,
    /// First restart delay; doubles with each failure in the window.
    pub initial_backoff_ms: u64,
    pub max_backoff_ms: u64,
    /// A profile that ran this long without a failure or a change is the last known good one:
    /// when the restart policy gives up on another profile, the scheduler falls back to it
    /// before ending `failed`. 0 turns falling back off.
    pub known_good_after_s: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Shortest Stats signal interval; shorter requests are raised to it.
    pub min_interval_ms: u32,
    /// Most subscriptions at once (over all clients).
    pub max_subscriptions: u32,
}

/// The automatic rules' targets. Unset entries fall back to built-in choices that exist in
/// any profile list (see [`Config::battery_profile`] and [`Config::for_power_profile`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoConfig {
    /// Profile on battery power.
    pub battery_profile: Option<String>,
    /// Profile selected by plugging in; unset, replugging restores what was there before.
    pub ac_profile: Option<String>,
    /// On battery, a charge below this many percent selects the low-battery profile;
    /// unset, there is no low-battery rule. Validated while parsing (1..=99).
    #[serde(deserialize_with = "low_battery_percent")]
    pub low_battery_percent: Option<u8>,
    /// Profile below `low_battery_percent`.
    pub low_battery_profile: Option<String>,
    /// Profile per power-profiles-daemon profile.
    pub power_profiles: PowerProfileMap,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct PowerProfileMap {
    pub power_saver: Option<String>,
    pub balanced: Option<String>,
    pub performance: Option<String>,
}

/// Other programs' D-Bus interfaces that gearshiftd also serves.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CompatConfig {
    /// Serve scx_loader's `org.scx.Loader` (scxctl, scx-manager) while no one else owns it.
    pub scx_loader: bool,
    /// The profile each scx_loader mode selects; unset entries use the built-in mapping
    /// (scx_loader.rs in the daemon).
    pub scx_loader_modes: ScxLoaderModes,
}

/// Keys are scx_loader's own names for its modes (`scxctl switch -m powersave`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScxLoaderModes {
    pub auto: Option<String>,
    pub gaming: Option<String>,
    pub powersave: Option<String>,
    pub lowlatency: Option<String>,
    pub server: Option<String>,
}

impl Default for CompatConfig {
    fn default() -> Self {
        Self {
            scx_loader: true,
            scx_loader_modes: ScxLoaderModes::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub mode: Mode,
    #[serde(default = "yes")]
    pub preemption: bool,
    /// Favour the app in front of the user (the one the desktop names with SetForeground).
    #[serde(default = "yes")]
    pub foreground_boost: bool,
}

fn yes() -> bool {
    true
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            path: PathBuf::from("/usr/bin/scx_gearshift"),
            args: Vec::new(),
            start_timeout_ms: 30_000,
            stop_timeout_ms: 10_000,
        }
    }
}

impl Default for RestartConfig {
    fn default() -> Self {
        Self {
            max_failures: 5,
            window_s: 60,
            initial_backoff_ms: 500,
            max_backoff_ms: 30_000,
            known_good_after_s: 60,
        }
    }
}

impl Default for StatsConfig {
    fn default() -> Self {
        Self {
            min_interval_ms: 250,
            max_subscriptions: 32,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            autostart: true,
            default_profile: "interactive".into(),
            auto_power_source: false,
            follow_power_profile: false,
            scheduler: SchedulerConfig::default(),
            restart: RestartConfig::default(),
            stats: StatsConfig::default(),
            auto: AutoConfig::default(),
            compat: CompatConfig::default(),
            profiles: default_profiles(),
        }
    }
}

fn profile(
    name: &str,
    description: &str,
    mode: Mode,
    preemption: bool,
    foreground_boost: bool,
) -> ProfileConfig {
    ProfileConfig {
        name: name.into(),
        description: description.into(),
        mode,
        preemption,
        foreground_boost,
    }
}

/// The built-in profiles, used when the config lists none. The desktop-facing ones favour the
/// app in front; "throughput" does not, because it is meant for builds and batch jobs that
/// should not lose CPU time to whatever window happens to have focus, nor "low-power", where
/// keeping a busy app's tasks ahead works against packing work onto few cores.
pub fn default_profiles() -> Vec<ProfileConfig> {
    vec![
        profile(
            "interactive",
            "Responsive desktop: interactive tasks go first and may preempt CPU-bound work",
            Mode::Interactive,
            true,
            true,
        ),
        profile(
            "throughput",
            "Interactive ordering without preemption: fewer switches for builds and batch jobs",
            Mode::Interactive,
            false,
            false,
        ),
        profile(
            "low-power",
            "Packs work onto few cores so the others stay in deep idle; for battery",
            Mode::LowPower,
            false,
            false,
        ),
        profile(
            "fifo",
            "Lightest scheduling: arrival order in the kernel while the system is lightly loaded",
            Mode::Fifo,
            true,
            true,
        ),
    ]
}

impl ProfileConfig {
    pub fn info(&self) -> ProfileInfo {
        ProfileInfo {
            name: self.name.clone(),
            description: self.description.clone(),
            mode: self.mode,
            preemption: self.preemption,
            foreground_boost: self.foreground_boost,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// Parses and validates `text` (read from `path`, named in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            path: path.to_owned(),
            line: e.span().map_or(0, |span| {
                text[..span.start.min(text.len())].lines().count().max(1)
            }),
            message: e.message().to_owned(),
        })?;
        if config.profiles.is_empty() {
            config.profiles = default_profiles();
        }
        config.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_owned(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        for (i, p) in self.profiles.iter().enumerate() {
            let valid_name = !p.name.is_empty()
                && p.name.len() <= 64
                && p.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !valid_name {
                return Err(format!(
                    "profile name {:?}: use 1-64 characters of a-z, 0-9 and '-'",
                    p.name
                ));
            }
            if p.name == CUSTOM_PROFILE {
                return Err(format!("profile name {CUSTOM_PROFILE:?} is reserved"));
            }
            if self.profiles[..i].iter().any(|q| q.name == p.name) {
                return Err(format!("profile {:?} is defined twice", p.name));
            }
        }
        if self.profile(&self.default_profile).is_none() {
            return Err(format!(
                "default_profile {:?} is not one of the profiles",
                self.default_profile
            ));
        }
        let auto = &self.auto;
        let pp = &auto.power_profiles;
        let modes = &self.compat.scx_loader_modes;
        for (key, name) in [
            ("auto.battery_profile", &auto.battery_profile),
            ("auto.ac_profile", &auto.ac_profile),
            ("auto.low_battery_profile", &auto.low_battery_profile),
            ("auto.power_profiles.power-saver", &pp.power_saver),
            ("auto.power_profiles.balanced", &pp.balanced),
            ("auto.power_profiles.performance", &pp.performance),
            ("compat.scx_loader_modes.auto", &modes.auto),
            ("compat.scx_loader_modes.gaming", &modes.gaming),
            ("compat.scx_loader_modes.powersave", &modes.powersave),
            ("compat.scx_loader_modes.lowlatency", &modes.lowlatency),
            ("compat.scx_loader_modes.server", &modes.server),
        ] {
            if let Some(name) = name {
                if self.profile(name).is_none() {
                    return Err(format!("{key} = {name:?} is not one of the profiles"));
                }
            }
        }
        if let (Some(name), None) = (&auto.low_battery_profile, auto.low_battery_percent) {
            return Err(format!(
                "auto.low_battery_profile = {name:?} needs auto.low_battery_percent (1-99)"
            ));
        }
        if self.scheduler.start_timeout_ms == 0 || self.scheduler.stop_timeout_ms == 0 {
            return Err("scheduler timeouts must be above 0".into());
        }
        if self.restart.max_failures == 0 || self.restart.initial_backoff_ms == 0 {
            return Err(
                "restart.max_failures and restart.initial_backoff_ms must be above 0".into(),
            );
        }
        if self.stats.min_interval_ms == 0 || self.stats.max_subscriptions == 0 {
            return Err("stats.min_interval_ms and stats.max_subscriptions must be above 0".into());
        }
        Ok(())
    }

    pub fn profile(&self, name: &str) -> Option<&ProfileConfig> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// Whether the profile `name` favours the foreground app. "custom" (settings changed one
    /// by one) keeps the key's default, on: it came from the user's own adjustments, not from
    /// a profile that asked for batch-like fairness.
    pub fn foreground_boost(&self, name: &str) -> bool {
        self.profile(name).is_none_or(|p| p.foreground_boost)
    }

    /// The profile of `name`, else the default profile (validation guarantees it exists).
    fn profile_or_default(&self, name: Option<&str>) -> Option<&ProfileConfig> {
        name.and_then(|n| self.profile(n))
            .or_else(|| self.profile(&self.default_profile))
    }

    /// The profile for battery power: as configured, else "low-power", else the default.
    pub fn battery_profile(&self) -> Option<&ProfileConfig> {
        self.profile_or_default(Some(
            self.auto.battery_profile.as_deref().unwrap_or("low-power"),
        ))
    }

    /// The profile for a power-profiles-daemon profile: as configured, else power-saver ->
    /// "low-power" and balanced/performance -> the default profile. None for names
    /// power-profiles-daemon does not define.
    pub fn for_power_profile(&self, ppd: &str) -> Option<&ProfileConfig> {
        let pp = &self.auto.power_profiles;
        let name = match ppd {
            "power-saver" => pp.power_saver.as_deref().or(Some("low-power")),
            "balanced" => pp.balanced.as_deref(),
            "performance" => pp.performance.as_deref(),
            _ => return None,
        };
        self.profile_or_default(name)
    }

    /// Loads `path`; a missing file means the defaults, a broken one is logged and replaced
    /// by the defaults.
    pub fn load_or_default(path: &Path) -> Config {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, path).unwrap_or_else(|e| {
                tracing::error!("invalid configuration, using the defaults: {e}");
                Config::default()
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!("{} not found; using the defaults", path.display());
                Config::default()
            }
            Err(source) => {
                let e = ConfigError::Read {
                    path: path.to_owned(),
                    source,
                };
                tracing::error!("{e}; using the defaults");
                Config::default()
            }
        }
    }
}

// ---- the battery level: AC and low-battery profiles ----

/// The thresholds `low_battery_percent` may have: a battery is never below 0 % and always
/// below 100 % once it discharges, so 0 and 100 would make a rule that never or always applies.
pub const LOW_BATTERY_PERCENT: std::ops::RangeInclusive<u8> = 1..=99;

/// Reads `low_battery_percent`, refusing anything but a whole number in
/// [`LOW_BATTERY_PERCENT`] with the key and the value (the error then also gets its line).
fn low_battery_percent<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    struct Percent;
    impl serde::de::Visitor<'_> for Percent {
        type Value = u8;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            let (low, high) = (LOW_BATTERY_PERCENT.start(), LOW_BATTERY_PERCENT.end());
            write!(
                f,
                "a whole number of percent from {low} to {high} for auto.low_battery_percent"
            )
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u8, E> {
            percent_in_range(v)
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u8, E> {
            percent_in_range(v)
        }
    }
    d.deserialize_i64(Percent).map(Some)
}

fn percent_in_range<T, E>(v: T) -> Result<u8, E>
where
    T: Copy + std::fmt::Display + TryInto<u8>,
    E: serde::de::Error,
{
    v.try_into()
        .ok()
        .filter(|p| LOW_BATTERY_PERCENT.contains(p))
        .ok_or_else(|| {
            let (low, high) = (LOW_BATTERY_PERCENT.start(), LOW_BATTERY_PERCENT.end());
            E::custom(format!(
                "auto.low_battery_percent = {v} is out of range: use a whole number of percent \
                 from {low} to {high}"
            ))
        })
}

impl Config {
    /// The profile plugging in selects, if one is configured.
    pub fn ac_profile(&self) -> Option<&ProfileConfig> {
        self.auto
            .ac_profile
            .as_deref()
            .and_then(|n| self.profile(n))
    }

    /// The threshold and profile of the low-battery rule, if it is configured: the profile as
    /// configured, else "low-power", else the default.
    pub fn low_battery(&self) -> Option<(u8, &ProfileConfig)> {
        let percent = self.auto.low_battery_percent?;
        let name = self.auto.low_battery_profile.as_deref();
        let profile = self.profile_or_default(Some(name.unwrap_or("low-power")))?;
        Some((percent, profile))
    }
}

#[cfg(test)]
mod tests;
