//! gettext set-up shared by the app and gearshiftctl (one domain, one catalog per language):
//! `gearshift.mo` under a locale directory chosen as GEARSHIFT_LOCALEDIR (tests, relocated
//! installs), else the catalogs build.rs compiled when the program runs from its build tree,
//! else the one the build was configured with (GEARSHIFT_LOCALEDIR at build time;
//! /usr/share/locale by default).
//!
//! gearshift-types stays free of gettext and gearshift-dbus is also the daemon's, which speaks
//! English to the journal; so this is a crate of its own, used only by the programs for people
//! (and by gearshift-dbus's `text` feature, which only they turn on).

use std::path::{Path, PathBuf};

use gettextrs::LocaleCategory;

pub use gettextrs::{gettext, ngettext};

/// The gettext domain of the app, gearshiftctl and the desktop data merged from po/.
pub const DOMAIN: &str = "gearshift";

/// Where build.rs compiled po/*.po (OUT_DIR/locale).
pub const BUILD_LOCALEDIR: &str = concat!(env!("OUT_DIR"), "/locale");

/// Where an installed build finds its catalogs.
pub const INSTALLED_LOCALEDIR: &str = match option_env!("GEARSHIFT_LOCALEDIR") {
    Some(dir) => dir,
    None => "/usr/share/locale",
};

/// The locale directory to use (see the crate's documentation).
pub fn locale_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("GEARSHIFT_LOCALEDIR") {
        return PathBuf::from(dir);
    }
    if in_build_tree() && Path::new(BUILD_LOCALEDIR).is_dir() {
        PathBuf::from(BUILD_LOCALEDIR)
    } else {
        PathBuf::from(INSTALLED_LOCALEDIR)
    }
}

/// True when the program runs from the cargo target directory it was built in.
pub fn in_build_tree() -> bool {
    let target_dir = Path::new(env!("OUT_DIR"))
        .ancestors()
        .nth(4) // OUT_DIR = <target>/<profile>/build/<pkg>/out
        .map(Path::to_path_buf);
    std::env::current_exe()
        .ok()
        .zip(target_dir)
        .is_some_and(|(exe, target)| exe.starts_with(target))
}

/// Sets the locale from the environment and binds the catalog. Failures leave the English
/// strings, which is all that can be done about them.
pub fn init() {
    gettextrs::setlocale(LocaleCategory::LcAll, "");
    let _ = gettextrs::bindtextdomain(DOMAIN, locale_dir());
    let _ = gettextrs::bind_textdomain_codeset(DOMAIN, "UTF-8");
    let _ = gettextrs::textdomain(DOMAIN);
}

/// Puts `arg` in place of the first `{}` of a translated template.
pub fn fill(template: &str, arg: &str) -> String {
    template.replacen("{}", arg, 1)
}

/// Puts each value in place of its `{name}` in a translated template, so translators can
/// reorder them. Values are inserted as they are (a `{` in one is not read as a placeholder).
pub fn fill_named(template: &str, args: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            args.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v, close))
        });
        match value {
            Some((value, close)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_one_placeholder_at_a_time() {
        assert_eq!(fill("{} and {}", "a"), "a and {}");
        assert_eq!(fill("none", "a"), "none");
    }

    #[test]
    fn fill_named_replaces_by_name_in_any_order() {
        let args = [("a", "1"), ("b", "{a}")];
        assert_eq!(fill_named("{b} then {a}", &args), "{a} then 1");
        assert_eq!(fill_named("{unknown} {a}", &args), "{unknown} 1");
        assert_eq!(fill_named("open { only", &args), "open { only");
        assert_eq!(fill_named("", &args), "");
    }
}
