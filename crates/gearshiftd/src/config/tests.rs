use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("test.toml"))
}

#[test]
fn shipped_example_is_the_defaults() {
    let text = include_str!("../../../../data/gearshift/config.toml");
    assert_eq!(parse(text).expect("example parses"), Config::default());
}

#[test]
fn empty_file_is_the_defaults() {
    assert_eq!(parse("").expect("empty parses"), Config::default());
}

#[test]
fn custom_profiles_replace_the_builtin_ones() {
    let config = parse(
        r#"
default_profile = "quiet"
[[profile]]
name = "quiet"
mode = "low-power"
"#,
    )
    .expect("parses");
    assert_eq!(config.profiles.len(), 1);
    let quiet = config.profile("quiet").expect("profile");
    assert_eq!(quiet.mode, Mode::LowPower);
    assert!(quiet.preemption, "preemption defaults to on");
    assert!(quiet.foreground_boost, "foreground_boost defaults to on");
}

#[test]
fn foreground_boost_is_a_profile_key() {
    let config = parse(
        r#"
default_profile = "batch"
[[profile]]
name = "batch"
mode = "interactive"
foreground_boost = false
"#,
    )
    .expect("parses");
    assert!(!config.profile("batch").expect("profile").foreground_boost);
    assert!(
        !config
            .profile("batch")
            .expect("profile")
            .info()
            .foreground_boost
    );
    // The built-in desktop profiles favour the app in front, the batch and battery ones not.
    let builtin = Config::default();
    let boost = |name: &str| builtin.profile(name).expect("built-in").foreground_boost;
    assert!(boost("interactive") && boost("fifo"));
    assert!(!boost("throughput") && !boost("low-power"));
    // Not a switch: the line is named.
    let err = parse("[[profile]]\nname = \"x\"\nmode = \"fifo\"\nforeground_boost = \"yes\"\n")
        .unwrap_err();
    assert!(err.to_string().contains("line 4"), "{err}");
}

#[test]
fn syntax_errors_name_the_line() {
    let err = parse("autostart = true\n\n[scheduler\npath = 1\n").unwrap_err();
    match err {
        ConfigError::Syntax { line, .. } => assert_eq!(line, 3),
        other => panic!("expected a syntax error, got {other}"),
    }
}

#[test]
fn unknown_mode_is_rejected_with_its_line() {
    let err = parse("[[profile]]\nname = \"x\"\nmode = \"turbo\"\n").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("line 3"), "{text}");
    assert!(text.contains("turbo"), "{text}");
}

#[test]
fn unknown_keys_are_rejected() {
    assert!(parse("autostrat = false\n").is_err());
}

#[test]
fn invalid_values_are_rejected() {
    for text in [
        "default_profile = \"nope\"\n",
        "[[profile]]\nname = \"Bad Name\"\nmode = \"fifo\"\n",
        "[[profile]]\nname = \"custom\"\nmode = \"fifo\"\n",
        "default_profile = \"a\"\n[[profile]]\nname = \"a\"\nmode = \"fifo\"\n[[profile]]\nname = \"a\"\nmode = \"fifo\"\n",
        "[stats]\nmin_interval_ms = 0\n",
        "[restart]\nmax_failures = 0\n",
        "[scheduler]\nstart_timeout_ms = 0\n",
        "[auto]\nbattery_profile = \"nope\"\n",
        "[auto.power_profiles]\nperformance = \"nope\"\n",
    ] {
        assert!(
            matches!(parse(text), Err(ConfigError::Invalid { .. })),
            "accepted: {text}"
        );
    }
}

// ---- the battery level: AC and low-battery profiles ----

#[test]
fn battery_level_keys_are_read() {
    let config = parse(
        "[auto]\nac_profile = \"throughput\"\nlow_battery_percent = 15\n\
         low_battery_profile = \"fifo\"\n",
    )
    .expect("parses");
    let name = |p: Option<&ProfileConfig>| p.map(|p| p.name.clone());
    assert_eq!(name(config.ac_profile()), Some("throughput".into()));
    let (percent, profile) = config.low_battery().expect("the low-battery rule");
    assert_eq!((percent, profile.name.as_str()), (15, "fifo"));
    // The range's ends are in it.
    for percent in [1, 99] {
        let text = format!("[auto]\nlow_battery_percent = {percent}\n");
        let config = parse(&text).expect("parses");
        assert_eq!(config.auto.low_battery_percent, Some(percent));
    }
}

#[test]
fn without_the_new_keys_the_battery_level_rules_are_off() {
    let config = Config::default();
    assert!(config.ac_profile().is_none(), "replug restores, as before");
    assert!(config.low_battery().is_none());
    // A threshold alone: "low-power", else the default profile.
    let config = parse("[auto]\nlow_battery_percent = 10\n").expect("parses");
    let (_, profile) = config.low_battery().expect("the low-battery rule");
    assert_eq!(profile.name, "low-power");
    let custom = parse(
        "default_profile = \"a\"\n[auto]\nlow_battery_percent = 10\n\
         [[profile]]\nname = \"a\"\nmode = \"fifo\"\n",
    )
    .expect("parses");
    assert_eq!(
        custom.low_battery().map(|(_, p)| p.name.as_str()),
        Some("a")
    );
}

#[test]
fn a_bad_low_battery_percent_names_the_key_the_value_and_the_line() {
    for (value, words) in [
        ("0", "auto.low_battery_percent = 0 is out of range"),
        ("100", "auto.low_battery_percent = 100 is out of range"),
        ("150", "auto.low_battery_percent = 150 is out of range"),
        ("-5", "auto.low_battery_percent = -5 is out of range"),
        ("300000000000", "= 300000000000 is out of range"),
        // No whole number: serde's words, with the key in what was expected.
        ("\"20\"", "string \"20\""),
        ("20.5", "20.5"),
        ("true", "boolean `true`"),
        ("[20]", "sequence"),
    ] {
        let text = format!("autostart = false\n[auto]\nlow_battery_percent = {value}\n");
        let err = parse(&text).expect_err(value);
        let message = err.to_string();
        let line_3 = matches!(err, ConfigError::Syntax { line: 3, .. });
        assert!(
            line_3
                && message.contains(words)
                && message.contains("auto.low_battery_percent")
                && message.contains("from 1 to 99"),
            "{value}: {message}"
        );
    }
}

#[test]
fn battery_level_profiles_must_exist_and_need_their_threshold() {
    for (text, words) in [
        (
            "[auto]\nac_profile = \"nope\"\n",
            "auto.ac_profile = \"nope\"",
        ),
        (
            "[auto]\nlow_battery_percent = 20\nlow_battery_profile = \"nope\"\n",
            "auto.low_battery_profile = \"nope\" is not one of the profiles",
        ),
        (
            "[auto]\nlow_battery_profile = \"fifo\"\n",
            "needs auto.low_battery_percent",
        ),
    ] {
        match parse(text) {
            Err(e @ ConfigError::Invalid { .. }) => {
                assert!(e.to_string().contains(words), "{text}: {e}")
            }
            other => panic!("{text}: expected Invalid, got {other:?}"),
        }
    }
}

#[test]
fn a_broken_low_battery_percent_means_the_defaults_as_a_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "autostart = false\n[auto]\nac_profile = \"fifo\"\nlow_battery_percent = 0\n",
    )
    .expect("write");
    assert_eq!(Config::load_or_default(&path), Config::default());
}

#[test]
fn broken_file_falls_back_to_defaults() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "autostart = maybe\n").expect("write");
    assert_eq!(Config::load_or_default(&path), Config::default());
    assert_eq!(
        Config::load_or_default(&dir.path().join("missing.toml")),
        Config::default()
    );
}

#[test]
fn automatic_targets_default_sensibly() {
    let config = Config::default();
    let name = |p: Option<&ProfileConfig>| p.map(|p| p.name.clone());
    assert_eq!(name(config.battery_profile()), Some("low-power".into()));
    assert_eq!(
        name(config.for_power_profile("power-saver")),
        Some("low-power".into())
    );
    assert_eq!(
        name(config.for_power_profile("balanced")),
        Some("interactive".into())
    );
    assert_eq!(
        name(config.for_power_profile("performance")),
        Some("interactive".into())
    );
    assert_eq!(name(config.for_power_profile("turbo")), None);
    // Custom profiles without "low-power": the default profile.
    let custom = parse("default_profile = \"a\"\n[[profile]]\nname = \"a\"\nmode = \"fifo\"\n")
        .expect("parses");
    assert_eq!(name(custom.battery_profile()), Some("a".into()));
    let mapped = parse(
        "[auto]\nbattery_profile = \"fifo\"\n[auto.power_profiles]\nperformance = \"throughput\"\n",
    )
    .expect("parses");
    assert_eq!(name(mapped.battery_profile()), Some("fifo".into()));
    assert_eq!(
        name(mapped.for_power_profile("performance")),
        Some("throughput".into())
    );
}

#[test]
fn known_good_after_s_is_a_restart_key() {
    let config = parse("[restart]\nknown_good_after_s = 5\n").expect("parses");
    assert_eq!(config.restart.known_good_after_s, 5);
    assert_eq!(Config::default().restart.known_good_after_s, 60);
}

#[test]
fn compat_keys_are_read_and_checked() {
    assert!(Config::default().compat.scx_loader, "on by default");
    let config =
        parse("[compat]\nscx_loader = false\n[compat.scx_loader_modes]\ngaming = \"fifo\"\n")
            .expect("parses");
    assert!(!config.compat.scx_loader);
    assert_eq!(
        config.compat.scx_loader_modes.gaming.as_deref(),
        Some("fifo")
    );
    let err = parse("[compat.scx_loader_modes]\nserver = \"turbo\"\n").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("compat.scx_loader_modes.server") && text.contains("turbo"),
        "{text}"
    );
    for text in [
        "[compat]\nscx_loader = \"yes\"\n",
        "[compat]\nscx_loder = true\n",
        "[compat.scx_loader_modes]\nturbo = \"fifo\"\n",
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.to_string().contains("line"), "{text}: {err}");
    }
}
