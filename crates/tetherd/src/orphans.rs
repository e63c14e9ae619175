//! The processes a tetherd that died without shutting down left behind, and cleaning them up.
//!
//! A tetherd killed with SIGKILL cannot kill its agents and terminal commands, which then run on
//! with nobody to stop them. So tetherd keeps a state file beside its socket (`<socket>.children`)
//! that names tetherd itself and, for every process group it started, the leader's pid and its
//! start time (field 22 of `/proc/<pid>/stat`, in clock ticks since boot, on Linux; the BSD
//! process info's start, in microseconds, on macOS). Every tetherd reads the
//! state files in its socket directory at start (the host picks a new socket name each time, in
//! one private directory per user): a file whose tetherd is no longer running lists orphans, and
//! the groups whose leader still has that pid *and* that start time are killed. A pid reused by an
//! unrelated process has a different start time and is left alone, and so are the children of a
//! tetherd that is still running.
//!
//! The file is rewritten whole on every change (it holds a few lines), and entries whose process
//! is gone are dropped as it is rewritten, so it never grows with the processes that ended.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::process_group::{self, GroupSignal};

/// The state file of the running tetherd, set once at start.
static TRACKER: OnceLock<OrphanTracker> = OnceLock::new();

/// One process group tetherd started: its leader's pid (the group's id) and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TrackedGroup {
    pid: u32,
    start_time: u64,
}

struct OrphanTracker {
    path: PathBuf,
    groups: Mutex<Vec<TrackedGroup>>,
}

/// The state file that belongs to the socket `socket`.
pub fn state_file(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".children");
    PathBuf::from(name)
}

/// Kills what the previous tetherd on this socket left running, then starts tracking this
/// tetherd's own process groups in the same file. Must be called once the socket is known to be
/// free (no other tetherd is listening there), so that the groups are really orphans.
pub fn reclaim_and_track(socket: &Path) {
    let path = state_file(socket);
    if let Some(dir) = socket.parent() {
        reclaim_in(dir);
    }
    let tracker = OrphanTracker { path, groups: Mutex::new(Vec::new()) };
    tracker.write(&[]);
    if TRACKER.set(tracker).is_err() {
        tracing::error!("process tracking was started twice; the second state file is ignored");
    }
}

/// Kills the orphans listed by the state files in `dir` whose tetherd is gone, and removes those
/// files.
fn reclaim_in(dir: &Path) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            tracing::warn!(dir = %dir.display(), %error, "cannot look for processes a dead tetherd left running");
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|extension| extension != "children") {
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read a dead tetherd's process list");
                continue;
            }
        };
        let mut lines = text.lines().map(parse_line);
        // The first line names the tetherd that wrote the file; while it runs, its children are
        // its own business. A file without one cannot be trusted to list orphans.
        let Some(Some(owner)) = lines.next() else { continue };
        if start_time_matches(owner) {
            continue;
        }
        for group in lines.flatten() {
            if start_time_matches(group) {
                tracing::warn!(pid = group.pid, "killing a process group left running by a tetherd that died");
                process_group::signal(group.pid, GroupSignal::Kill);
            }
        }
        if let Err(error) = std::fs::remove_file(&path) {
            tracing::warn!(path = %path.display(), %error, "cannot remove a dead tetherd's process list");
        }
    }
}

/// Records that tetherd started the process group led by `pid`.
pub fn track(pid: u32) {
    let Some(tracker) = TRACKER.get() else {
        return;
    };
    let Some(start_time) = start_time(pid) else {
        // The leader is already gone: there is nothing a later tetherd could have to kill.
        return;
    };
    let mut groups = tracker.groups.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Groups whose leader ended are dropped here, so that the file only lists what may still run.
    groups.retain(|group| start_time_matches(*group));
    groups.push(TrackedGroup { pid, start_time });
    tracker.write(&groups);
}

/// Removes the state file at a clean shutdown, when every tracked group has been killed.
pub fn forget_all() {
    if let Some(tracker) = TRACKER.get()
        && let Err(error) = std::fs::remove_file(&tracker.path)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %tracker.path.display(), %error, "cannot remove the process list");
    }
}

impl OrphanTracker {
    fn write(&self, groups: &[TrackedGroup]) {
        let me = std::process::id();
        let Some(my_start_time) = start_time(me) else {
            tracing::warn!("cannot read tetherd's own start time; its children are not recorded");
            return;
        };
        let text: String = std::iter::once(TrackedGroup { pid: me, start_time: my_start_time })
            .chain(groups.iter().copied())
            .map(|group| format!("{} {}\n", group.pid, group.start_time))
            .collect();
        // Written beside and renamed over, so a tetherd killed mid-write leaves a whole file.
        let temporary = self.path.with_extension("children-new");
        let written = std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, &self.path));
        if let Err(error) = written {
            tracing::warn!(path = %self.path.display(), %error,
                "cannot record the processes tetherd started; they would outlive a crash of tetherd");
        }
    }
}

fn start_time_matches(group: TrackedGroup) -> bool {
    start_time(group.pid) == Some(group.start_time)
}

fn parse_line(line: &str) -> Option<TrackedGroup> {
    let (pid, start_time) = line.split_once(' ')?;
    Some(TrackedGroup { pid: pid.parse().ok()?, start_time: start_time.parse().ok()? })
}

/// The start time of process `pid` (clock ticks after boot), or `None` if there is no such
/// process.
#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

/// The start time of process `pid` (microseconds since the epoch, from the kernel's BSD process
/// info, since macOS has no `/proc`), or `None` if there is no such process.
#[cfg(target_os = "macos")]
#[allow(unsafe_code, reason = "libproc has no safe wrapper; the call only fills the struct it is given")]
fn start_time(pid: u32) -> Option<u64> {
    use nix::libc;

    let pid = libc::c_int::try_from(pid).ok()?;
    let size = libc::c_int::try_from(size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: `proc_bsdinfo` is plain integers and byte arrays, for which all zeroes is a value.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    // SAFETY: the buffer is `info`, and `size` is its size, as PROC_PIDTBSDINFO requires; the call
    // writes at most that much and returns how much it wrote (0 when there is no such process).
    let written = unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size) };
    (written == size).then(|| info.pbi_start_tvsec.saturating_mul(1_000_000).saturating_add(info.pbi_start_tvusec))
}

/// Other Unixes: no start time, so nothing is tracked (a pid alone could name a stranger).
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn start_time(_pid: u32) -> Option<u64> {
    None
}

/// Field 22 of a `/proc/<pid>/stat` line. The command name in parentheses may contain spaces and
/// parentheses, so fields are counted from the last `)`; the state is field 3.
#[cfg(target_os = "linux")]
fn parse_start_time(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn start_time_is_field_22_past_a_name_with_parentheses() {
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_start_time(stat), Some(987654));
        assert_eq!(parse_start_time("42 (short) S 1"), None);
    }

    #[test]
    fn state_lines_round_trip_and_garbage_is_skipped() {
        assert_eq!(parse_line("12 345"), Some(TrackedGroup { pid: 12, start_time: 345 }));
        assert_eq!(parse_line("12"), None);
        assert_eq!(parse_line("x 1"), None);
    }
}
