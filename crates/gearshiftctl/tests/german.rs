//! gearshiftctl speaks the reader's language (LANGUAGE=de) in its text output and errors, against
//! the real gearshiftd on a private system bus, while `--json` stays byte for byte the same.

use std::process::{Command, Output};

use gearshift_testbus::{DaemonUnderTest, Setup, TestBus};

/// Runs gearshiftctl with the build's catalogs, in German (`Some("de")`) or in the C locale.
fn ctl(bus: &TestBus, lang: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gearshiftctl"));
    cmd.args(args)
        .env("GEARSHIFT_LOCALEDIR", gearshift_i18n::BUILD_LOCALEDIR)
        .env_remove("LC_MESSAGES");
    match lang {
        Some(lang) => cmd
            .env("LANGUAGE", lang)
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8"),
        None => cmd
            .env_remove("LANGUAGE")
            .env("LANG", "C")
            .env("LC_ALL", "C"),
    };
    bus.env(&mut cmd);
    cmd.output().expect("run gearshiftctl")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

#[test]
fn text_is_german_and_json_is_unchanged() {
    assert!(
        std::path::Path::new(gearshift_i18n::BUILD_LOCALEDIR)
            .join("de/LC_MESSAGES/gearshift.mo")
            .is_file(),
        "the build compiled po/de.po (is gettext's msgfmt installed?)"
    );
    let mut bus = TestBus::start();
    bus.start_polkit();
    let _daemon = DaemonUnderTest::start(&bus, Setup::default());

    let out = ctl(&bus, Some("de"), &["status"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status = text(&out.stdout);
    // The values line up after the longest label, "Unterbrechung:".
    for want in [
        "Zustand:        gestoppt: ", // then the daemon's reason, in its English
        "\nProfil:         interactive (Standard)\n",
        "\nModus:          interactive\n",
        "\nUnterbrechung:  an\n",
        "\nAutomatik:      Stromquelle aus, Energiemodus folgen aus\n",
        "\nVersion:        gearshiftd ",
    ] {
        assert!(status.contains(want), "{want:?} in\n{status}");
    }
    let english = text(&ctl(&bus, None, &["status"]).stdout);
    assert!(english.starts_with("State:       stopped: "), "{english}");
    assert!(english.contains("\nPreemption:  on\n"), "{english}");

    // An error: the daemon's own message, then gearshiftctl's hint in German.
    let out = ctl(&bus, Some("de"), &["profile", "no-such-profile"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no-such-profile")
            && stderr
                .contains("gearshiftctl: Hinweis: `gearshiftctl list-profiles` zeigt die Profile"),
        "{stderr}"
    );

    // Scripts get the same JSON whatever the language.
    for args in [&["--json", "status"][..], &["--json", "list-profiles"]] {
        let german = ctl(&bus, Some("de"), args);
        let c = ctl(&bus, None, args);
        assert!(german.status.success() && c.status.success(), "{args:?}");
        assert_eq!(text(&german.stdout), text(&c.stdout), "{args:?}");
        let json: serde_json::Value =
            serde_json::from_slice(&german.stdout).expect("JSON under LANGUAGE=de");
        assert!(json.is_object(), "{json}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&ctl(&bus, Some("de"), &["--json", "status"]).stdout).expect("JSON");
    assert_eq!(json["state"], "stopped");
    assert_eq!(json["profile_reason"], "default");
    assert_eq!(json["preemption"].as_bool(), Some(true));
}
