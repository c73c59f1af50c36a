//! Small pieces of text for people, shared by the views and the stats text.

use gearshift_i18n::gettext;

/// "on"/"off" inside a sentence, in the reader's language.
pub fn on_off(b: bool) -> String {
    if b {
        gettext("on")
    } else {
        gettext("off")
    }
}

/// Lines of "Label:  value" with the values lined up after the longest (translated) label.
pub fn aligned(rows: &[(String, String)]) -> Vec<String> {
    let width = rows
        .iter()
        .map(|(label, _)| label.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    rows.iter()
        .map(|(label, value)| format!("{label:width$}{value}"))
        .collect()
}
