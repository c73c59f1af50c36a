//! gettext set-up: the catalog is `gearshift.mo` under a locale directory chosen as
//! GEARSHIFT_LOCALEDIR (tests, relocated installs), else the build's own compiled catalogs
//! when the program runs from its build tree, else the one the build was configured with
//! (GEARSHIFT_LOCALEDIR at build time; /usr/share/locale by default).

use std::path::{Path, PathBuf};

use gettextrs::LocaleCategory;

/// The gettext domain of the app (and of the desktop data merged from po/).
pub const DOMAIN: &str = "gearshift";

/// Where build.rs compiled po/*.po (OUT_DIR/locale).
pub const BUILD_LOCALEDIR: &str = concat!(env!("OUT_DIR"), "/locale");

/// Where an installed build finds its catalogs.
pub const INSTALLED_LOCALEDIR: &str = match option_env!("GEARSHIFT_LOCALEDIR") {
    Some(dir) => dir,
    None => "/usr/share/locale",
};

/// The locale directory to use (see the module's documentation).
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

#[cfg(test)]
mod tests {
    #[test]
    fn fill_replaces_one_placeholder_at_a_time() {
        assert_eq!(super::fill("{} and {}", "a"), "a and {}");
        assert_eq!(super::fill("none", "a"), "none");
    }
}
