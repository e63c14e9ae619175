//! Unix process groups: signalling a whole group, and telling whether any of it is still alive.
//! [`crate::process_tree`] builds the kill on them (SIGTERM, a grace period, then SIGKILL for
//! whatever is left); [`crate::orphans`] kills the groups a dead tetherd left behind.
//!
//! Agents and terminal commands each run in a process group of their own (an agent because it is
//! spawned with `process_group(0)`, a terminal command because it leads a new session on its
//! PTY), so that a kill reaches the helpers and background jobs they started, not only the
//! process tetherd spawned. Both are killed the same way, by the functions here.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSignal {
    /// SIGTERM: asks the processes to end, and gives them the chance to clean up.
    Terminate,
    /// SIGKILL: ends them, whether they like it or not.
    Kill,
}

/// Sends a signal to the process group `pgid`. A group that is already empty is not an error:
/// the kill has nothing left to do.
pub fn signal(pgid: u32, signal: GroupSignal) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    let signal = match signal {
        GroupSignal::Terminate => Signal::SIGTERM,
        GroupSignal::Kill => Signal::SIGKILL,
    };
    let Ok(raw_pgid) = i32::try_from(pgid) else {
        tracing::error!(pgid, "process group id out of range; cannot signal it");
        return;
    };
    match killpg(Pid::from_raw(raw_pgid), signal) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(error) => tracing::warn!(pgid, %signal, %error, "could not signal a process group"),
    }
}

/// Whether any process of the group `pgid` is still running. Zombies do not count: they are
/// dead, and the ones whose parent is not tetherd are someone else's to reap.
#[cfg(target_os = "linux")]
pub fn has_live_members(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let is_process = entry.file_name().to_str().is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()));
        is_process
            && std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| parse_proc_stat(&stat))
                .is_some_and(|(state, pgrp)| pgrp == pgid && state != 'Z' && state != 'X')
    })
}

/// The state and process group of a `/proc/<pid>/stat` line. The command name in parentheses may
/// itself contain spaces and parentheses, so the fields are counted from the last `)`.
#[cfg(target_os = "linux")]
fn parse_proc_stat(stat: &str) -> Option<(char, u32)> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether any process of the group `pgid` still exists (zombies included, since portable Unix
/// cannot tell them apart).
#[cfg(not(target_os = "linux"))]
pub fn has_live_members(pgid: u32) -> bool {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    i32::try_from(pgid).is_ok_and(|pgid| killpg(Pid::from_raw(pgid), None).is_ok())
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn proc_stat_is_read_past_a_command_name_with_parentheses() {
        use super::parse_proc_stat;
        assert_eq!(parse_proc_stat("42 (we (ird) name) S 1 4242 4242 0 -1"), Some(('S', 4242)));
        assert_eq!(parse_proc_stat("garbage"), None);
    }
}
