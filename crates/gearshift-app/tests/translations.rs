//! po/: the template matches the sources, every language is complete, and the desktop file,
//! metainfo and polkit policy merged with the translations validate.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

fn languages() -> Vec<String> {
    std::fs::read_to_string(root().join("po/LINGUAS"))
        .expect("po/LINGUAS")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_template_is_up_to_date() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fresh = dir.path().join("gearshift.pot");
    run(Command::new(root().join("tools/update-po.sh"))
        .arg("--pot")
        .arg(&fresh));
    let fresh = std::fs::read_to_string(fresh).expect("fresh pot");
    let committed = std::fs::read_to_string(root().join("po/gearshift.pot")).expect("pot");
    assert!(
        fresh == committed,
        "po/gearshift.pot is stale: run tools/update-po.sh and translate what changed"
    );
}

#[test]
fn potfiles_lists_every_file_with_strings() {
    let listed = std::fs::read_to_string(root().join("po/POTFILES.in")).expect("POTFILES.in");
    let mut stack = vec![
        root().join("crates/gearshift-app/src"),
        root().join("crates/gearshiftctl/src"),
    ];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let has_strings = text.contains("gettext(\"")
                || text.contains("gettext(\n")
                || text.contains("translatable=\"yes\"");
            let rel = path
                .strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            if has_strings && !rel.ends_with("/i18n.rs") && !rel.contains("/tests") {
                assert!(
                    listed.contains(&rel),
                    "{rel} is missing from po/POTFILES.in"
                );
            }
        }
    }
}

#[test]
fn every_language_is_complete() {
    let langs = languages();
    assert!(langs.len() >= 2, "at least two translations: {langs:?}");
    let pot = root().join("po/gearshift.pot");
    for lang in langs {
        let po = root().join(format!("po/{lang}.po"));
        let stats = run(Command::new("msgfmt")
            .args(["--check", "--statistics", "-o", "/dev/null"])
            .arg(&po));
        assert!(
            !stats.contains("untranslated") && !stats.contains("fuzzy"),
            "{lang}: {stats}"
        );
        // Every message of the template is in the translation.
        run(Command::new("msgcmp").arg(&po).arg(&pot));
    }
}

#[test]
fn merged_data_files_validate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prefix = dir.path();
    run(Command::new(root().join("tools/install-translations.sh")).arg(prefix));
    for lang in languages() {
        assert!(
            prefix
                .join(format!("share/locale/{lang}/LC_MESSAGES/gearshift.mo"))
                .is_file(),
            "{lang}.mo"
        );
    }
    let desktop = prefix.join("share/applications/io.github.gearshift.Gearshift.desktop");
    run(Command::new("desktop-file-validate").arg(&desktop));
    let text = std::fs::read_to_string(&desktop).expect("desktop file");
    assert!(
        text.contains("Comment[de]=") && text.contains("Comment[it]="),
        "{text}"
    );

    let metainfo = prefix.join("share/metainfo/io.github.gearshift.Gearshift.metainfo.xml");
    run(Command::new("appstreamcli")
        .args(["validate", "--no-net"])
        .arg(&metainfo));
    let text = std::fs::read_to_string(&metainfo).expect("metainfo");
    assert!(text.contains("xml:lang=\"it\""), "{text}");
    // Its screenshots are the ones the tests made, committed under data/screenshots.
    for name in ["running", "battery", "activity", "failed"] {
        let url = format!("data/screenshots/{name}.png</image>");
        assert!(text.contains(&url), "{name} in the metainfo");
        assert!(
            root()
                .join(format!("data/screenshots/{name}.png"))
                .is_file(),
            "data/screenshots/{name}.png"
        );
    }

    let policy = prefix.join("share/polkit-1/actions/io.github.gearshift.policy");
    run(Command::new("xmllint").arg("--noout").arg(&policy));
    let text = std::fs::read_to_string(&policy).expect("policy");
    assert!(
        text.contains("<description xml:lang=\"de\">Den CPU-Scheduler verwalten</description>"),
        "{text}"
    );
}

#[test]
fn the_source_files_validate_too() {
    // The validators want the names the files will have.
    let dir = tempfile::tempdir().expect("tempdir");
    let desktop = dir.path().join("io.github.gearshift.Gearshift.desktop");
    std::fs::copy(
        root().join("data/applications/io.github.gearshift.Gearshift.desktop.in"),
        &desktop,
    )
    .expect("copy");
    run(Command::new("desktop-file-validate").arg(&desktop));
    let copy = dir
        .path()
        .join("io.github.gearshift.Gearshift.metainfo.xml");
    std::fs::copy(
        root().join("data/metainfo/io.github.gearshift.Gearshift.metainfo.xml.in"),
        &copy,
    )
    .expect("copy");
    run(Command::new("appstreamcli")
        .args(["validate", "--no-net"])
        .arg(&copy));
}
