//! `cargo xtask man DIR`: the manual pages gearshiftd(8), gearshiftctl(1) (and a page per
//! subcommand) and scx_gearshift(8), written from the programs' own clap definitions, so that
//! options and their help never drift from the binaries. Each program's crate exports its
//! command line as `cli::Cli` (`src/cli.rs`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_mangen::roff::{bold, italic, roman, Roff};

/// One manual page: clap's sections plus FILES and SEE ALSO.
struct Page {
    command: clap::Command,
    section: &'static str,
    /// (path, what it is)
    files: &'static [(&'static str, &'static str)],
    see_also: Vec<String>,
}

fn strings(refs: &[&str]) -> Vec<String> {
    refs.iter().map(|s| (*s).to_owned()).collect()
}

fn pages() -> Vec<Page> {
    vec![
        Page {
            command: gearshiftd::cli::Cli::command(),
            section: "8",
            files: &[
                (
                    "/etc/gearshift/config.toml",
                    "Configuration: profiles, autostart, automatic rules, scx_loader \
                     compatibility ([compat]). Not installed: without it the built-in defaults \
                     apply. A documented example is /usr/share/doc/gearshift/examples/config.toml.",
                ),
                (
                    "/var/lib/gearshift/state.json",
                    "The last choice (profile, rules), restored at start.",
                ),
                (
                    "/run/gearshift/control.sock",
                    "The control socket of the scx_gearshift process the daemon supervises.",
                ),
                (
                    "/usr/lib/systemd/system/gearshiftd.service",
                    "The systemd unit; the daemon is also started on demand by D-Bus.",
                ),
            ],
            see_also: strings(&["gearshiftctl(1)", "systemctl(1)", "polkit(8)"]),
        },
        Page {
            command: gearshiftctl::cli::Cli::command(),
            section: "1",
            files: &[],
            see_also: strings(&["gearshiftd(8)", "busctl(1)"]),
        },
        Page {
            command: scx_gearshift::cli::Cli::command(),
            section: "8",
            files: &[],
            see_also: strings(&["gearshiftd(8)", "gearshiftctl(1)"]),
        },
    ]
}

/// Renders one page.
fn render(page: &Page) -> Result<Vec<u8>> {
    let man = clap_mangen::Man::new(page.command.clone())
        .section(page.section)
        .manual("Gearshift")
        .source(format!("Gearshift {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render(&mut out)?;
    let mut extra = Roff::new();
    if !page.files.is_empty() {
        extra.control("SH", ["FILES"]);
        for (path, what) in page.files {
            extra.control("TP", []);
            extra.text([bold(*path)]);
            extra.text([roman(*what)]);
        }
    }
    extra.control("SH", ["SEE ALSO"]);
    let refs: Vec<_> = page
        .see_also
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            let sep = if i + 1 < page.see_also.len() {
                ", "
            } else {
                ""
            };
            [italic(r.as_str()), roman(sep)]
        })
        .collect();
    extra.text(refs);
    extra.to_writer(&mut out)?;
    Ok(out)
}

/// The page of each subcommand (`gearshiftctl-status.1`, …), which the main page refers to.
fn subcommand_pages(page: &Page) -> Vec<Page> {
    let mut parent = page.command.clone();
    parent.build();
    let parent_name = parent.get_name().to_owned();
    let mut see_also = vec![format!("{parent_name}({})", page.section)];
    see_also.extend(page.see_also.iter().cloned());
    parent
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| Page {
            command: sub
                .clone()
                // clap wants a 'static name; this process writes the pages and exits.
                .name(&*String::leak(format!("{parent_name}-{}", sub.get_name())))
                .version(env!("CARGO_PKG_VERSION")),
            section: page.section,
            files: &[],
            see_also: see_also.clone(),
        })
        .collect()
}

/// Writes `<name>.<section>` for every page (and subcommand page) into `dir`; returns the
/// paths written.
pub fn write_all(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for page in pages() {
        let subpages = subcommand_pages(&page);
        for page in std::iter::once(page).chain(subpages) {
            let path = dir.join(format!("{}.{}", page.command.get_name(), page.section));
            std::fs::write(&path, render(&page)?)
                .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_path_is_the_daemons() {
        let daemon = &pages()[0];
        assert_eq!(daemon.command.get_name(), "gearshiftd");
        assert_eq!(
            daemon.files[0].0,
            gearshiftd::config::DEFAULT_PATH,
            "FILES names the daemon's default configuration file"
        );
    }

    #[test]
    fn pages_name_their_programs_and_options() {
        let dir = tempfile::tempdir().expect("tempdir");
        let written = write_all(dir.path()).expect("written");
        let names: Vec<_> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names[..3],
            ["gearshiftd.8", "gearshiftctl.1", "gearshiftctl-status.1"]
        );
        assert!(
            names.contains(&"gearshiftctl-hold.1".to_owned()),
            "{names:?}"
        );
        let daemon = std::fs::read_to_string(&written[0]).unwrap();
        assert!(daemon.contains(".TH gearshiftd 8"), "{daemon}");
        assert!(
            daemon.contains("state\\-dir") && daemon.contains("FILES"),
            "{daemon}"
        );
        assert!(
            !daemon.contains("sysfs"),
            "hidden options stay hidden: {daemon}"
        );
        let ctl = std::fs::read_to_string(&written[1]).unwrap();
        assert!(
            ctl.contains("list\\-profiles") && ctl.contains("Exit codes"),
            "{ctl}"
        );
    }
}
