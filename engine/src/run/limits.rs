//! The process's open-files limit: raised at the start of a run, checked against what the run
//! needs, and how running out of it shows (EMFILE) in an error.
//!
//! Every connection is a file descriptor, and so is each worker thread's runtime. A run that
//! needs more than the soft limit allows is refused before any load is sent, with how many it
//! needs; one that runs out anyway (descriptors held by something else) counts the connects
//! that failed as `fd_limit` and says so, never blaming the target.

use std::io;

use super::RunError;

/// File descriptors a run needs besides its connections and worker threads: standard input,
/// output and error, the signal watcher's runtime (4), a service's pipes, the result file and
/// DNS lookups.
pub const RESERVED_FDS: u64 = 16;
/// File descriptors each worker thread holds: its runtime's epoll (kqueue) instance and waker,
/// and the open model's precise timer (a timerfd on Linux).
pub const FDS_PER_WORKER: u64 = 3;

/// What a run needs of file descriptors, and the limit that fell short of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    /// Connections the run opens at its peak: connection groups × connection slots (distinct
    /// endpoints and transports); with `pacing`, one more descriptor per virtual user (its
    /// precise timer).
    pub connections: u64,
    /// Worker threads.
    pub workers: u64,
    /// The soft and hard open-files limits (`RLIMIT_NOFILE`), when the system has them.
    pub limit: Option<(u64, u64)>,
}

impl FileLimit {
    /// The budget of a run of `connections` connections on `workers` worker threads, with the
    /// process's limit as it is now.
    pub(super) fn new(connections: u64, workers: u64) -> FileLimit {
        FileLimit {
            connections,
            workers,
            limit: limits(),
        }
    }

    /// The error for a run of this budget that ran out of file descriptors, with the limit
    /// as it is now.
    pub(super) fn exhausted(self) -> RunError {
        RunError::FileLimit(FileLimit {
            limit: limits(),
            ..self
        })
    }

    /// File descriptors the run needs, about: its connections, 3 per worker thread and 16
    /// for the rest (`FDS_PER_WORKER`, `RESERVED_FDS`).
    pub fn needed(&self) -> u64 {
        self.connections + self.workers * FDS_PER_WORKER + RESERVED_FDS
    }
}

impl std::fmt::Display for FileLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let needed = self.needed();
        write!(
            f,
            "this run needs about {needed} ({} connections, {} for {} worker threads, \
             {RESERVED_FDS} for the rest)",
            self.connections,
            self.workers * FDS_PER_WORKER,
            self.workers,
        )?;
        match self.limit {
            Some((soft, hard)) if hard < needed => write!(
                f,
                ", and the open-files limit (`ulimit -n`) is {soft}, its hard limit {hard}: raise \
                 the hard limit (as root, or in /etc/security/limits.conf), then `ulimit -n {needed}`"
            ),
            Some((soft, _)) => write!(
                f,
                ", and the open-files limit (`ulimit -n`) is {soft}: raise it, e.g. `ulimit -n {needed}`"
            ),
            None => write!(
                f,
                ": close other programs' connections, or lower `connections`"
            ),
        }
    }
}

/// Raises the soft open-files limit to the hard limit (on macOS, where an unlimited hard limit
/// is refused, to 10,240, its `OPEN_MAX`), then checks that it covers `budget`. Best effort:
/// a failure to raise leaves the limit as it was. Errors: [`RunError::FileLimit`] when the
/// soft limit is below [`FileLimit::needed`]. Returns the run's budget.
#[cfg(unix)]
pub(super) fn raise_and_check(connections: u64, workers: u64) -> Result<FileLimit, RunError> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
        && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_err()
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard.min(10_240).max(soft), hard);
    }
    let budget = FileLimit::new(connections, workers);
    match budget.limit {
        Some((soft, _)) if soft < budget.needed() => Err(RunError::FileLimit(budget)),
        _ => Ok(budget),
    }
}

/// Windows has no open-files limit to raise: sockets are bounded by memory.
#[cfg(not(unix))]
pub(super) fn raise_and_check(connections: u64, workers: u64) -> Result<FileLimit, RunError> {
    Ok(FileLimit::new(connections, workers))
}

/// The soft and hard open-files limits.
#[cfg(unix)]
fn limits() -> Option<(u64, u64)> {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).ok()
}

#[cfg(not(unix))]
fn limits() -> Option<(u64, u64)> {
    None
}

/// Whether `e` says that the process (EMFILE) or the system (ENFILE) is out of file
/// descriptors; on Windows, out of sockets (WSAEMFILE).
pub(crate) fn out_of_files(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        e.raw_os_error()
            .is_some_and(|code| matches!(Errno::from_raw(code), Errno::EMFILE | Errno::ENFILE))
    }
    #[cfg(windows)]
    {
        /// `WSAEMFILE`: too many open sockets.
        const WSAEMFILE: i32 = 10024;
        e.raw_os_error() == Some(WSAEMFILE)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = e;
        false
    }
}

/// The error of a run of `budget` whose threads, runtimes or check at start could not start:
/// out of file descriptors, or another I/O error.
pub(super) fn start_error(e: io::Error, budget: FileLimit) -> RunError {
    if out_of_files(&e) {
        budget.exhausted()
    } else {
        RunError::Start(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_what_is_needed_and_how_to_get_it() {
        let budget = FileLimit {
            connections: 100,
            workers: 2,
            limit: Some((12, 12)),
        };
        assert_eq!(budget.needed(), 122);
        let text = budget.to_string();
        assert!(text.contains("needs about 122 (100 connections"), "{text}");
        assert!(text.contains("hard limit 12"), "{text}");
        let budget = FileLimit {
            limit: Some((12, 4096)),
            ..budget
        };
        assert!(budget.to_string().ends_with("e.g. `ulimit -n 122`"));
    }

    #[cfg(unix)]
    #[test]
    fn emfile_and_enfile_are_out_of_files() {
        use nix::errno::Errno;
        for errno in [Errno::EMFILE, Errno::ENFILE] {
            assert!(out_of_files(&io::Error::from_raw_os_error(errno as i32)));
        }
        assert!(!out_of_files(&io::Error::from_raw_os_error(
            Errno::ECONNREFUSED as i32
        )));
        assert!(!out_of_files(&io::Error::other("x")));
    }
}
