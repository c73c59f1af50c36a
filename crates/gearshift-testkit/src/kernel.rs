//! Obtaining a kernel with CONFIG_SCHED_CLASS_EXT=y: Debian's current one from trixie-backports
//! (or sid), cached, or the user's own image (`GEARSHIFT_KERNEL=/path/to/bzImage`).

use std::path::{Path, PathBuf};
use std::process::Command;

use thiserror::Error;

use crate::apt::{self, AptError, PrivateApt};
use crate::cache::Cache;
use crate::download::{self, DownloadError};
use crate::kconfig::{KernelConfig, MissingOptions};

#[derive(Debug, Error)]
pub enum KernelError {
    #[error("no Debian kernel could be resolved ({0}); set GEARSHIFT_KERNEL=/path/to/bzImage to use your own")]
    NotFound(String),
    #[error("kernel {abi}: {missing}")]
    NoSchedExt {
        abi: String,
        missing: MissingOptions,
    },
    #[error("kernel image {0} does not exist")]
    MissingImage(PathBuf),
    #[error(transparent)]
    Apt(#[from] AptError),
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{0} failed")]
    Tool(String),
    #[error("installing kernel modules into /lib/modules needs root (virtme-ng looks for them there); run as root")]
    NotRoot,
}

/// Where a kernel came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Debian { suite: String },
    User,
}

/// A bootable kernel image, its release name when known, and where it came from.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub image: PathBuf,
    pub release: Option<String>,
    pub source: Source,
}

/// What the caller wants: the user's image, or Debian's (re-resolved when `refresh`).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub image: Option<PathBuf>,
    pub refresh: bool,
}

impl Request {
    /// `GEARSHIFT_KERNEL` names the user's own image.
    pub fn from_env() -> Self {
        Self {
            image: std::env::var_os("GEARSHIFT_KERNEL").map(PathBuf::from),
            refresh: false,
        }
    }
}

pub fn obtain(cache: &Cache, request: &Request) -> Result<Kernel, KernelError> {
    match &request.image {
        Some(image) => user_kernel(image),
        None => debian_kernel(cache, request.refresh),
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> KernelError {
    let what = what.into();
    move |source| KernelError::Io { what, source }
}

fn user_kernel(image: &Path) -> Result<Kernel, KernelError> {
    if !image.is_file() {
        return Err(KernelError::MissingImage(image.to_owned()));
    }
    let header = std::fs::read(image).map_err(io(format!("reading {}", image.display())))?;
    let release = bzimage_release(&header);
    // Check the config when we can find it; otherwise the VM's own check reports a missing
    // /sys/kernel/sched_ext clearly.
    let config = std::env::var_os("GEARSHIFT_KERNEL_CONFIG")
        .map(PathBuf::from)
        .or_else(|| {
            let mut candidates = vec![
                image.with_file_name("config"),
                image.with_file_name(".config"),
            ];
            if let Some(r) = &release {
                candidates.push(PathBuf::from(format!("/boot/config-{r}")));
                candidates.push(PathBuf::from(format!("/lib/modules/{r}/config")));
            }
            candidates.into_iter().find(|p| p.is_file())
        });
    if let Some(config) = config {
        let text = std::fs::read_to_string(&config)
            .map_err(io(format!("reading {}", config.display())))?;
        KernelConfig::parse(&text)
            .check_sched_ext()
            .map_err(|missing| KernelError::NoSchedExt {
                abi: release
                    .clone()
                    .unwrap_or_else(|| image.display().to_string()),
                missing,
            })?;
    }
    Ok(Kernel {
        image: image.to_owned(),
        release,
        source: Source::User,
    })
}

/// The release string of an x86 bzImage (its setup header's `kernel_version` field).
pub fn bzimage_release(image: &[u8]) -> Option<String> {
    if image.get(0x202..0x206)? != b"HdrS" {
        return None;
    }
    let field = u16::from_le_bytes([*image.get(0x20e)?, *image.get(0x20f)?]) as usize;
    let text = image.get(field + 0x200..)?;
    let end = text.iter().position(|&b| b == 0 || b == b' ')?;
    let release = std::str::from_utf8(&text[..end]).ok()?;
    (!release.is_empty()).then(|| release.to_owned())
}

fn suites() -> Vec<String> {
    match std::env::var("GEARSHIFT_KERNEL_SUITE") {
        Ok(s) if !s.is_empty() => s.split(',').map(str::to_owned).collect(),
        _ => apt::KERNEL_SUITES.iter().map(|s| (*s).to_owned()).collect(),
    }
}

fn debian_kernel(cache: &Cache, refresh: bool) -> Result<Kernel, KernelError> {
    let current = cache.kernels_dir().join("current");
    if !refresh {
        if let Ok(text) = std::fs::read_to_string(&current) {
            if let Some((suite, abi)) = text.trim().split_once(' ') {
                let tree = cache.kernels_dir().join(abi);
                if tree
                    .join(format!("usr/lib/modules/{abi}/vmlinuz"))
                    .is_file()
                {
                    return install(&tree, abi, suite);
                }
            }
        }
    }
    let mut failures = Vec::new();
    for suite in suites() {
        match resolve(cache, &suite) {
            Ok((apt, abi)) => {
                let tree = fetch_and_extract(cache, &apt, &abi)?;
                let kernel = install(&tree, &abi, &suite)?;
                std::fs::write(&current, format!("{suite} {abi}\n"))
                    .map_err(io(format!("writing {}", current.display())))?;
                return Ok(kernel);
            }
            Err(e) => failures.push(format!("{suite}: {e}")),
        }
    }
    Err(KernelError::NotFound(failures.join("; ")))
}

fn resolve(cache: &Cache, suite: &str) -> Result<(PrivateApt, String), KernelError> {
    eprintln!("kernel: resolving linux-image-amd64 in {suite}");
    let apt = PrivateApt::new(cache.apt_dir(suite), suite);
    apt.update()?;
    let abi = apt::kernel_abi_from_meta(&apt.show("linux-image-amd64")?)?;
    Ok((apt, abi))
}

fn fetch_and_extract(cache: &Cache, apt: &PrivateApt, abi: &str) -> Result<PathBuf, KernelError> {
    let debs = apt.print_uris(&apt::kernel_packages(abi))?;
    if debs.len() != 3 {
        return Err(KernelError::NotFound(format!(
            "{}: expected linux-base/-binary/-modules for {abi}, apt offers {} files",
            apt.suite(),
            debs.len()
        )));
    }
    let total: u64 = debs.iter().map(|d| d.size).sum();
    eprintln!(
        "kernel: downloading {abi} from {} ({} MiB)",
        apt.suite(),
        total >> 20
    );
    let tree = cache.kernels_dir().join(abi);
    let staging = cache.kernels_dir().join(format!("{abi}.partial"));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(io("creating the kernel staging dir"))?;
    for deb in &debs {
        let file = download::fetch_verified(deb, &cache.debs_dir())?;
        run(Command::new("dpkg-deb").arg("-x").arg(&file).arg(&staging))?;
    }
    let config_path = staging.join(format!("usr/lib/modules/{abi}/config"));
    let config = std::fs::read_to_string(&config_path).map_err(io(format!(
        "reading {} (linux-base-{abi} should ship it)",
        config_path.display()
    )))?;
    KernelConfig::parse(&config)
        .check_sched_ext()
        .map_err(|missing| KernelError::NoSchedExt {
            abi: abi.to_owned(),
            missing,
        })?;
    let _ = std::fs::remove_dir_all(&tree);
    std::fs::rename(&staging, &tree).map_err(io("moving the extracted kernel into place"))?;
    Ok(tree)
}

/// Makes the extracted kernel visible where virtme-ng (modules) and libbpf (Kconfig externs)
/// look on the shared root: /lib/modules/<abi> and /boot/config-<abi>.
fn install(tree: &Path, abi: &str, suite: &str) -> Result<Kernel, KernelError> {
    let modules = PathBuf::from(format!("/lib/modules/{abi}"));
    let boot_config = PathBuf::from(format!("/boot/config-{abi}"));
    let image = modules.join("vmlinuz");
    let installed =
        modules.join("modules.dep").is_file() && image.is_file() && boot_config.is_file();
    if !installed {
        if !nix::unistd::geteuid().is_root() {
            return Err(KernelError::NotRoot);
        }
        eprintln!(
            "kernel: installing {abi} modules into {}",
            modules.display()
        );
        let source = tree.join(format!("usr/lib/modules/{abi}"));
        std::fs::create_dir_all("/lib/modules").map_err(io("creating /lib/modules"))?;
        run(Command::new("cp")
            .arg("-a")
            .arg(&source)
            .arg("/lib/modules/"))?;
        std::fs::create_dir_all("/boot").map_err(io("creating /boot"))?;
        std::fs::copy(source.join("config"), &boot_config)
            .map_err(io(format!("writing {}", boot_config.display())))?;
        run(Command::new("depmod").arg(abi))?;
    }
    Ok(Kernel {
        image,
        release: Some(abi.to_owned()),
        source: Source::Debian {
            suite: suite.to_owned(),
        },
    })
}

fn run(cmd: &mut Command) -> Result<(), KernelError> {
    let shown = format!("{cmd:?}");
    let status = cmd.status().map_err(io(format!("running {shown}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(KernelError::Tool(shown))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_bzimage(release: &str) -> Vec<u8> {
        let mut img = vec![0u8; 0x1000];
        img[0x202..0x206].copy_from_slice(b"HdrS");
        let at = 0x400usize;
        img[0x20e..0x210].copy_from_slice(&((at - 0x200) as u16).to_le_bytes());
        let text = format!("{release} (builder@host) #1 SMP PREEMPT_DYNAMIC\0");
        img[at..at + text.len()].copy_from_slice(text.as_bytes());
        img
    }

    #[test]
    fn reads_release_from_bzimage_header() {
        assert_eq!(
            bzimage_release(&fake_bzimage("7.3.4+deb13-amd64")).as_deref(),
            Some("7.3.4+deb13-amd64")
        );
        assert_eq!(bzimage_release(&[0u8; 0x300]), None);
        assert_eq!(bzimage_release(b"short"), None);
    }

    #[test]
    fn user_kernel_must_exist() {
        let err = obtain(
            &Cache::at("/nonexistent"),
            &Request {
                image: Some("/nonexistent/bzImage".into()),
                refresh: false,
            },
        )
        .unwrap_err();
        assert!(matches!(err, KernelError::MissingImage(_)), "{err}");
    }

    #[test]
    fn user_kernel_with_config_lacking_sched_ext_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("bzImage");
        std::fs::write(&image, fake_bzimage("6.12.9-custom")).unwrap();
        std::fs::write(
            dir.path().join("config"),
            "# CONFIG_SCHED_CLASS_EXT is not set\nCONFIG_BPF_SYSCALL=y\n",
        )
        .unwrap();
        let err = user_kernel(&image).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("6.12.9-custom") && text.contains("CONFIG_SCHED_CLASS_EXT"),
            "{text}"
        );
    }
}
