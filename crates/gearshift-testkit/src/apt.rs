//! A private apt setup: its own sources list, lists and cache directories under Gearshift's
//! cache, so resolving a kernel from trixie-backports or sid never touches the system's apt
//! configuration. Also the parsers for what apt prints.

use std::path::PathBuf;
use std::process::Command;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum AptError {
    #[error("could not run {tool}: {source}")]
    Spawn {
        tool: &'static str,
        source: std::io::Error,
    },
    #[error("{what} failed ({status}): {stderr}")]
    Failed {
        what: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    #[error("could not write the private apt setup in {dir}: {source}")]
    Setup {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("unexpected apt output: {0}")]
    Parse(String),
}

/// The Debian archive suites carrying kernels with CONFIG_SCHED_CLASS_EXT=y, tried in order.
pub const KERNEL_SUITES: &[&str] = &["trixie-backports", "sid"];

const MIRROR: &str = "http://deb.debian.org/debian";

/// apt-get/apt-cache bound to a private state directory holding one suite.
#[derive(Debug, Clone)]
pub struct PrivateApt {
    dir: PathBuf,
    suite: String,
}

impl PrivateApt {
    pub fn new(dir: impl Into<PathBuf>, suite: &str) -> Self {
        Self {
            dir: dir.into(),
            suite: suite.to_owned(),
        }
    }

    pub fn suite(&self) -> &str {
        &self.suite
    }

    fn options(&self) -> Vec<String> {
        let d = self.dir.display();
        vec![
            format!("-oDir::Etc::SourceList={d}/sources.list"),
            "-oDir::Etc::SourceParts=/dev/null".into(),
            format!("-oDir::State::Lists={d}/lists"),
            format!("-oDir::Cache={d}"),
            "-oDir::State::Status=/dev/null".into(),
            // The state dir belongs to the caller; apt's _apt sandbox user could not write it.
            "-oAPT::Sandbox::User=root".into(),
        ]
    }

    /// Writes the sources list and refreshes the package lists.
    pub fn update(&self) -> Result<(), AptError> {
        let setup = |r: std::io::Result<()>| {
            r.map_err(|source| AptError::Setup {
                dir: self.dir.clone(),
                source,
            })
        };
        setup(std::fs::create_dir_all(self.dir.join("lists/partial")))?;
        setup(std::fs::create_dir_all(self.dir.join("archives/partial")))?;
        setup(std::fs::write(
            self.dir.join("sources.list"),
            format!("deb {MIRROR} {} main\n", self.suite),
        ))?;
        self.run("apt-get", &["-qq", "update"]).map(drop)
    }

    /// `apt-cache show --no-all-versions PKG`: the candidate's control stanza.
    pub fn show(&self, package: &str) -> Result<String, AptError> {
        self.run("apt-cache", &["show", "--no-all-versions", package])
    }

    /// Download locations, sizes and hashes of `packages`, without downloading.
    pub fn print_uris(&self, packages: &[String]) -> Result<Vec<DebUri>, AptError> {
        let mut args = vec!["--print-uris", "download"];
        args.extend(packages.iter().map(String::as_str));
        parse_print_uris(&self.run("apt-get", &args)?)
    }

    /// Download locations of `packages` and every package they depend on, as if installing
    /// them onto an empty system (the private state has no dpkg status).
    pub fn print_install_uris(&self, packages: &[String]) -> Result<Vec<DebUri>, AptError> {
        let mut args = vec![
            "-oAPT::Install-Recommends=false",
            "-oDebug::NoLocking=1",
            "-qq",
            "--print-uris",
            "install",
        ];
        args.extend(packages.iter().map(String::as_str));
        // Install simulation prints MD5 sums; `download` prints SHA-256 for the same files.
        let names = package_names_in_uris(&self.run("apt-get", &args)?);
        self.print_uris(&names)
    }

    fn run(&self, tool: &'static str, args: &[&str]) -> Result<String, AptError> {
        let out = Command::new(tool)
            .args(self.options())
            .args(args)
            // --print-uris download resolves file names relative to the cwd; keep it harmless.
            .current_dir(&self.dir)
            .output()
            .map_err(|source| AptError::Spawn { tool, source })?;
        if !out.status.success() {
            return Err(AptError::Failed {
                what: format!("{tool} {} (suite {})", args.join(" "), self.suite),
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// One field of a control stanza (`Field: value`, continuation lines folded in).
pub fn stanza_field(stanza: &str, field: &str) -> Option<String> {
    let mut value: Option<String> = None;
    for line in stanza.lines() {
        if let Some(v) = value.as_mut() {
            if line.starts_with(' ') || line.starts_with('\t') {
                v.push(' ');
                v.push_str(line.trim());
                continue;
            }
            break;
        }
        if let Some((name, rest)) = line.split_once(':') {
            if name.eq_ignore_ascii_case(field) {
                value = Some(rest.trim().to_owned());
            }
        }
    }
    value
}

/// Package names in a `Depends:` value, alternatives included, version constraints dropped.
pub fn depends_names(depends: &str) -> Vec<&str> {
    depends
        .split([',', '|'])
        .filter_map(|dep| dep.split_whitespace().next())
        .map(|name| name.split(':').next().unwrap_or(name))
        .collect()
}

/// The kernel ABI name (e.g. `7.3.4+deb13-amd64`) a `linux-image-amd64` stanza depends on.
pub fn kernel_abi_from_meta(stanza: &str) -> Result<String, AptError> {
    let depends = stanza_field(stanza, "Depends")
        .ok_or_else(|| AptError::Parse("linux-image-amd64 has no Depends field".into()))?;
    depends_names(&depends)
        .into_iter()
        .filter_map(|name| name.strip_prefix("linux-image-"))
        .find(|abi| abi.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
        .ok_or_else(|| {
            AptError::Parse(format!(
                "linux-image-amd64 depends on no versioned linux-image package: {depends}"
            ))
        })
}

/// The three packages making up kernel `abi` in Debian's 7.x packaging.
pub fn kernel_packages(abi: &str) -> Vec<String> {
    ["linux-base", "linux-binary", "linux-modules"]
        .iter()
        .map(|p| format!("{p}-{abi}"))
        .collect()
}

/// One line of `apt-get --print-uris download`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebUri {
    pub url: String,
    pub file_name: String,
    pub size: u64,
    pub sha256: String,
}

/// Parses `'URL' FILE SIZE SHA256:HEX` lines.
pub fn parse_print_uris(text: &str) -> Result<Vec<DebUri>, AptError> {
    text.lines()
        .filter(|l| l.starts_with('\''))
        .map(|line| {
            let bad = || AptError::Parse(format!("bad --print-uris line: {line}"));
            let rest = &line[1..];
            let (url, rest) = rest.split_once('\'').ok_or_else(bad)?;
            let mut fields = rest.split_whitespace();
            let file_name = fields.next().ok_or_else(bad)?.to_owned();
            let size = fields.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
            let sha256 = fields
                .next()
                .and_then(|h| h.strip_prefix("SHA256:"))
                .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
                .ok_or_else(bad)?
                .to_ascii_lowercase();
            Ok(DebUri {
                url: url.to_owned(),
                file_name,
                size,
                sha256,
            })
        })
        .collect()
}

/// Package names of the `.deb` files in `--print-uris` output (`name_version_arch.deb`).
pub fn package_names_in_uris(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with('\''))
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|file| file.split('_').next())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "Package: linux-image-amd64\n\
Source: linux-signed-amd64 (7.3.4+1~bpo13+1)\n\
Version: 7.3.4-1~bpo13+1\n\
Depends: linux-base-amd64 (= 7.3.4-1~bpo13+1),\n linux-image-7.3.4+deb13-amd64 (= 7.3.4-1~bpo13+1), linux-modules-amd64 (= 7.3.4-1~bpo13+1)\n\
Description: Linux for 64-bit PCs (meta-package)\n";

    #[test]
    fn finds_abi_in_folded_depends() {
        assert_eq!(kernel_abi_from_meta(META).unwrap(), "7.3.4+deb13-amd64");
    }

    #[test]
    fn ignores_unversioned_image_packages() {
        let stanza = "Package: x\nDepends: linux-image-amd64-signed-template | linux-image-6.12.9+deb13-amd64\n";
        assert_eq!(kernel_abi_from_meta(stanza).unwrap(), "6.12.9+deb13-amd64");
        let none = "Package: x\nDepends: linux-base-amd64\n";
        assert!(kernel_abi_from_meta(none).is_err());
        assert!(kernel_abi_from_meta("Package: x\n").is_err());
    }

    #[test]
    fn depends_names_drop_versions_and_arch() {
        assert_eq!(
            depends_names("a (>= 1), b:any | c, d"),
            vec!["a", "b", "c", "d"]
        );
    }

    #[test]
    fn kernel_is_three_packages() {
        assert_eq!(
            kernel_packages("7.2.13+deb14-amd64"),
            vec![
                "linux-base-7.2.13+deb14-amd64",
                "linux-binary-7.2.13+deb14-amd64",
                "linux-modules-7.2.13+deb14-amd64"
            ]
        );
    }

    #[test]
    fn parses_print_uris() {
        let out = "'http://deb.debian.org/debian/pool/main/l/linux/linux-base-7.3.4%2bdeb13-amd64_7.3.4-1%7ebpo13%2b1_amd64.deb' linux-base-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb 1077476 SHA256:5663505495B5c90be94af42105c7b28629802516779102dac48d5a00cc00fccf\n";
        let uris = parse_print_uris(out).unwrap();
        assert_eq!(uris.len(), 1);
        assert_eq!(uris[0].size, 1_077_476);
        assert_eq!(
            uris[0].file_name,
            "linux-base-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb"
        );
        assert!(uris[0].url.ends_with("%2b1_amd64.deb"));
        assert!(uris[0].sha256.starts_with("5663505495b5"));
    }

    #[test]
    fn names_come_from_deb_file_names() {
        let out = "Need to get 5 kB\n'http://x/gcc-14-base_14.2.0-19_amd64.deb' gcc-14-base_14.2.0-19_amd64.deb 49432 MD5Sum:8c82\n'http://x/libsensors-config_1%3a3.6.2-2_all.deb' libsensors-config_1%3a3.6.2-2_all.deb 16236 MD5Sum:00\n";
        assert_eq!(
            package_names_in_uris(out),
            vec!["gcc-14-base", "libsensors-config"]
        );
    }

    #[test]
    fn rejects_print_uris_without_hash() {
        assert!(parse_print_uris("'http://x/a.deb' a.deb 10 MD5Sum:abc\n").is_err());
        assert!(parse_print_uris("'http://x/a.deb' a.deb ten SHA256:00\n").is_err());
    }
}
