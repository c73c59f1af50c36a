//! Compiles the translations (po/*.po, the languages in po/LINGUAS) into
//! OUT_DIR/locale/<lang>/LC_MESSAGES/gearshift.mo, where the app and gearshiftctl look for them
//! while they run from the build tree. Without msgfmt (gettext) they build and speak English.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let po = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../po");
    println!("cargo:rerun-if-changed={}", po.display());
    println!("cargo:rerun-if-env-changed=GEARSHIFT_LOCALEDIR");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("locale");
    let linguas = std::fs::read_to_string(po.join("LINGUAS")).unwrap_or_default();
    for lang in linguas
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let src = po.join(format!("{lang}.po"));
        println!("cargo:rerun-if-changed={}", src.display());
        let dir = out.join(lang).join("LC_MESSAGES");
        if std::fs::create_dir_all(&dir).is_err() {
            println!("cargo:warning=cannot create {}", dir.display());
            continue;
        }
        let status = Command::new("msgfmt")
            .arg("--check")
            .arg("-o")
            .arg(dir.join("gearshift.mo"))
            .arg(&src)
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => println!("cargo:warning=msgfmt {}: {s}", src.display()),
            Err(e) => println!("cargo:warning=msgfmt (gettext) not found, no translations: {e}"),
        }
    }
}
