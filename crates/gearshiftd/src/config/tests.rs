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
