//! Processes as procfs and the cgroup v2 file system show them: who owns a process and which
//! cgroup it lives in. The roots are configurable so that tests can use fake trees.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A process's cgroup v2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    /// Its id as the kernel (and the scheduler) knows it: the directory's inode number.
    pub id: u64,
    /// Its last path component.
    pub name: String,
}

/// Sentences for people: SetForeground's callers see them as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessError {
    #[error("There is no process {0}.")]
    NoSuchProcess(u32),
    #[error("Process {pid} is in no cgroup v2 ({why}).")]
    NoCgroup { pid: u32, why: String },
}

#[derive(Debug, Clone)]
pub struct Processes {
    procfs: PathBuf,
    cgroupfs: PathBuf,
}

impl Processes {
    /// `procfs` is where /proc is mounted, `cgroupfs` where the cgroup v2 hierarchy is.
    pub fn new(procfs: &Path, cgroupfs: &Path) -> Self {
        Self {
            procfs: procfs.to_owned(),
            cgroupfs: cgroupfs.to_owned(),
        }
    }

    /// The real user id of process `pid` (its status file's first Uid).
    pub fn owner(&self, pid: u32) -> Result<u32, ProcessError> {
        let gone = || ProcessError::NoSuchProcess(pid);
        if pid == 0 {
            return Err(gone());
        }
        let status = std::fs::read_to_string(self.procfs.join(pid.to_string()).join("status"))
            .map_err(|_| gone())?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next())
            .and_then(|uid| uid.parse().ok())
            .ok_or_else(gone)
    }

    /// The cgroup v2 process `pid` lives in.
    pub fn cgroup(&self, pid: u32) -> Result<Cgroup, ProcessError> {
        let text = std::fs::read_to_string(self.procfs.join(pid.to_string()).join("cgroup"))
            .map_err(|_| ProcessError::NoSuchProcess(pid))?;
        let no_cgroup = |why: &str| ProcessError::NoCgroup {
            pid,
            why: why.to_owned(),
        };
        // The unified hierarchy's line is "0::<path>"; v1 controllers have their own lines.
        let path = text
            .lines()
            .find_map(|line| line.strip_prefix("0::"))
            .ok_or_else(|| no_cgroup("no unified hierarchy"))?;
        let relative = path
            .strip_prefix('/')
            .ok_or_else(|| no_cgroup("not an absolute path"))?;
        // Favouring the root cgroup would favour every task, which is favouring none.
        if relative.is_empty() {
            return Err(no_cgroup("only the root cgroup, no app's own"));
        }
        // The kernel writes canonical paths; anything else must not lead out of the tree.
        if relative.split('/').any(|part| part == ".." || part == ".") {
            return Err(no_cgroup("not a canonical path"));
        }
        let dir = self.cgroupfs.join(relative);
        let meta =
            std::fs::metadata(&dir).map_err(|e| no_cgroup(&format!("{}: {e}", dir.display())))?;
        if !meta.is_dir() {
            return Err(no_cgroup(&format!("{} is no directory", dir.display())));
        }
        Ok(Cgroup {
            id: meta.ino(),
            name: relative.rsplit('/').next().unwrap_or(relative).to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(pid: u32, status: &str, cgroup: &str) -> (tempfile::TempDir, Processes) {
        let dir = tempfile::tempdir().expect("tempdir");
        let proc_dir = dir.path().join("proc").join(pid.to_string());
        std::fs::create_dir_all(&proc_dir).expect("proc");
        std::fs::write(proc_dir.join("status"), status).expect("status");
        std::fs::write(proc_dir.join("cgroup"), cgroup).expect("cgroup");
        let cg = dir.path().join("cgroup/user.slice/app.slice/app-a-1.scope");
        std::fs::create_dir_all(cg).expect("cgroupfs");
        let p = Processes::new(&dir.path().join("proc"), &dir.path().join("cgroup"));
        (dir, p)
    }

    #[test]
    fn reads_owner_and_cgroup() {
        let (dir, p) = fake(
            42,
            "Name:\tcalc\nUid:\t1000\t1000\t1000\t1000\n",
            "1:name=systemd:/\n0::/user.slice/app.slice/app-a-1.scope\n",
        );
        assert_eq!(p.owner(42), Ok(1000));
        let cg = p.cgroup(42).expect("cgroup");
        assert_eq!(cg.name, "app-a-1.scope");
        let ino = std::fs::metadata(dir.path().join("cgroup/user.slice/app.slice/app-a-1.scope"))
            .expect("meta")
            .ino();
        assert_eq!(cg.id, ino);
    }

    #[test]
    fn refuses_what_is_not_there() {
        let (_dir, p) = fake(7, "Uid:\t0\t0\t0\t0\n", "0::/../../etc\n");
        assert_eq!(p.owner(8), Err(ProcessError::NoSuchProcess(8)));
        assert_eq!(p.owner(0), Err(ProcessError::NoSuchProcess(0)));
        assert!(matches!(p.cgroup(7), Err(ProcessError::NoCgroup { .. })));
        let (_dir, p) = fake(7, "Uid:\t0\t0\t0\t0\n", "1:cpu:/\n");
        assert!(matches!(p.cgroup(7), Err(ProcessError::NoCgroup { .. })));
        let (_dir, p) = fake(7, "Uid:\t0\t0\t0\t0\n", "0::/user.slice/gone.scope\n");
        assert!(matches!(p.cgroup(7), Err(ProcessError::NoCgroup { .. })));
        let (_dir, p) = fake(7, "Uid:\t0\t0\t0\t0\n", "0::/\n");
        assert!(matches!(p.cgroup(7), Err(ProcessError::NoCgroup { .. })));
    }
}
