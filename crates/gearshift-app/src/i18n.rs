//! gettext set-up: shared with gearshiftctl in the gearshift-i18n crate (the locale directory,
//! binding the catalog, placeholders); re-exported here for the app and its tests.

pub use gearshift_i18n::{
    fill, in_build_tree, init, locale_dir, BUILD_LOCALEDIR, DOMAIN, INSTALLED_LOCALEDIR,
};
