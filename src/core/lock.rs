//! One writer per run directory: an advisory lock (`flock`) on a file in the directory, which
//! holds the locking process's id for the message a second process shows.
//!
//! The kernel drops a `flock` when its process ends, however it ends: a lock left by a crash
//! (`kill -9`, power loss) is stale by construction, and the next process takes it over
//! (saying so) instead of asking the user to delete a file.
//!
//! A program that drives `zero` step by step (the cluster driver, `scripts/zero-ray`) holds the
//! run's locks itself for the whole run and hands them to each `zero` it starts: the open lock
//! files' descriptors, inherited, named in [`HELD_LOCKS_ENV`]. A `flock` belongs to the open
//! file, so the child holds the same lock, and no other process gets in between the steps.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The name of the lock file inside a locked directory.
pub const LOCK_FILE: &str = "run.lock";

/// Descriptors (comma-separated) of lock files that this process inherited, already locked,
/// from the program that started it.
pub const HELD_LOCKS_ENV: &str = "ZERO_HELD_LOCKS";

/// Held while alive; dropping it (or the process ending) releases the directory.
#[derive(Debug)]
pub struct DirLock {
    // Kept open: closing the file would release the lock.
    file: File,
    path: PathBuf,
    /// The process that held the lock before and died without releasing it, if any.
    pub stale_holder: Option<u32>,
    /// Held by the parent process, which clears it when it is done.
    inherited: bool,
}

impl DirLock {
    /// Locks `dir` (created if needed) for this process. `what` names the directory's
    /// contents in the error when another live process holds it.
    pub fn acquire(dir: &Path, what: &str) -> Result<DirLock> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(LOCK_FILE);
        if let Some(file) = inherited_lock(&path) {
            return Ok(DirLock {
                file,
                path,
                stale_holder: None,
                inherited: true,
            });
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        let previous = read_pid(&mut file);
        // SAFETY: flock on a descriptor this function owns; it touches no memory.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !locked {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err).with_context(|| format!("cannot lock {}", path.display()));
            }
            let holder = previous.map_or("another process".to_string(), |p| format!("process {p}"));
            bail!(
                "{what} in {} is in use by {holder} (a run in progress); wait for it to end, \
                 stop it, or use another directory",
                dir.display()
            );
        }
        let me = std::process::id();
        file.set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(format!("{me}\n").as_bytes()))
            .and_then(|_| file.sync_data())
            .with_context(|| format!("cannot write the lock file {}", path.display()))?;
        Ok(DirLock {
            file,
            path,
            stale_holder: previous.filter(|&p| p != me),
            inherited: false,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DirLock {
    /// An empty lock file says the last holder finished cleanly: only a process that died
    /// leaves its pid behind.
    fn drop(&mut self) {
        if !self.inherited {
            let _ = self.file.set_len(0);
        }
    }
}

/// The lock file `path` as an inherited descriptor of [`HELD_LOCKS_ENV`] opens it, if one
/// does and its lock is this process's to take (the parent's lock is held on that very open
/// file, so taking it again succeeds; on any other file it would fail).
fn inherited_lock(path: &Path) -> Option<File> {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::MetadataExt;
    let wanted = std::fs::metadata(path).ok()?;
    let fds = std::env::var(HELD_LOCKS_ENV).ok()?;
    fds.split(',')
        .filter_map(|f| f.trim().parse::<i32>().ok())
        .find_map(|fd| {
            // SAFETY: dup of a descriptor number; an invalid one fails with -1. The copy is this
            // function's own to close, whatever else uses the original.
            let copy = unsafe { libc::dup(fd) };
            if copy < 0 {
                return None;
            }
            // SAFETY: `copy` is a fresh descriptor owned by nobody else.
            let file = unsafe { File::from_raw_fd(copy) };
            let meta = file.metadata().ok()?;
            let same = meta.dev() == wanted.dev() && meta.ino() == wanted.ino();
            // SAFETY: flock on a descriptor this function owns; it touches no memory.
            let ours = same && unsafe { libc::flock(copy, libc::LOCK_EX | libc::LOCK_NB) } == 0;
            ours.then_some(file)
        })
}

/// The process id a lock file holds, if it holds one.
fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_and_a_released_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path(), "the run").unwrap();
        assert_eq!(first.stale_holder, None);
        let held = std::fs::read_to_string(first.path()).unwrap();
        assert_eq!(held.trim(), std::process::id().to_string());
        // flock locks belong to the open file: a second open in this process conflicts too.
        let e = DirLock::acquire(dir.path(), "the run")
            .unwrap_err()
            .to_string();
        assert!(e.contains("in use by process"), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        drop(first);
        // A clean release leaves no pid behind.
        let next = DirLock::acquire(dir.path(), "the run").unwrap();
        assert_eq!(next.stale_holder, None);
        drop(next);
        // A file left by a process that ended: its pid is reported and the lock taken.
        std::fs::write(dir.path().join(LOCK_FILE), "4000000\n").unwrap();
        let again = DirLock::acquire(dir.path(), "the run").unwrap();
        assert_eq!(again.stale_holder, Some(4_000_000));
    }
}
