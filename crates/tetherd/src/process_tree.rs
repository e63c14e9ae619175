//! The processes one agent or terminal command started, killed as one: the process it was
//! spawned as and every helper and background job it started.
//!
//! - Unix: a process group ([`crate::process_group`]). An agent is spawned with
//!   `process_group(0)`, a terminal command leads a new session on its PTY (portable-pty calls
//!   `setsid`), so the pid tetherd spawned is the group's id. A kill is SIGTERM, a grace period,
//!   then SIGKILL for whatever is left. A process that leaves the group on purpose (`setsid`)
//!   escapes the kill.
//! - Windows: a Job Object (`job_object.rs`, built on Windows only) the process is put in as it
//!   starts. Windows has no polite request that reaches a process tree without a console window
//!   of its own (no SIGTERM; `CTRL_BREAK` needs a console shared with tetherd), so
//!   [`ProcessTree::terminate`] ends the job at once: a kill has no grace period there. The job
//!   also ends the tree if tetherd itself dies.
//!
//! [`ProcessTree::finish_kill`] is the same on both: it waits until no process of the tree runs.

use std::time::Duration;

use tokio::time::Instant;

/// How often to look whether a killed tree is gone. There is no event for the death of processes
/// that are not our children, so this is polled, only while a kill is running.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Once a tree has been killed outright, how long to wait for it to disappear before reporting the
/// kill as done anyway (SIGKILL cannot be ignored; this only covers a process stuck in the kernel).
const KILL_SETTLE: Duration = Duration::from_secs(2);

/// Some processes of a tree were still alive [`KILL_SETTLE`] after they were killed outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurvivedKill;

/// The processes one spawned command started. Cheap to clone: the clones share the tree.
#[derive(Debug, Clone)]
pub struct ProcessTree {
    /// The pid of the process tetherd spawned; on Unix, the process group's id too.
    pid: u32,
    /// The job every process of the tree is in. Shared by the clones; the last one dropped ends
    /// whatever still runs in it.
    #[cfg(windows)]
    job: std::sync::Arc<crate::job_object::JobObject>,
}

impl ProcessTree {
    /// The tree of the process group `pid` leads (the process must have been spawned as its
    /// group's leader).
    #[cfg(unix)]
    pub fn led_by(pid: u32) -> Self {
        Self { pid }
    }

    /// Puts the process `pid`, whose handle is `process`, in a new job: it and whatever it
    /// starts from now on are this tree.
    #[cfg(windows)]
    pub fn adopt(pid: u32, process: std::os::windows::io::RawHandle) -> std::io::Result<Self> {
        let job = crate::job_object::JobObject::new()?;
        job.assign(process)?;
        Ok(Self { pid, job: std::sync::Arc::new(job) })
    }

    /// Makes `command` start a tree of its own: on Unix as the leader of a new process group; on
    /// Windows without a console window (tetherd has none to share, so each console program an
    /// agent started would open one on the person's screen).
    pub fn prepare(command: &mut tokio::process::Command) {
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(windows)]
        {
            /// `CREATE_NO_WINDOW`, from the Win32 process creation flags.
            const CREATE_NO_WINDOW: u32 = 0x0800_0000;
            command.creation_flags(CREATE_NO_WINDOW);
        }
    }

    /// The tree of `child`, which was spawned from a command [`ProcessTree::prepare`] prepared and
    /// has not been waited for. A child that cannot be made a tree is killed: nothing could end
    /// what it starts.
    pub fn of_child(child: &mut tokio::process::Child) -> std::io::Result<Self> {
        let pid = child.id().ok_or_else(|| std::io::Error::other("the process was reaped before it was watched"))?;
        #[cfg(unix)]
        return Ok(Self::led_by(pid));
        #[cfg(windows)]
        {
            let adopted = child
                .raw_handle()
                .ok_or_else(|| std::io::Error::other("the process has no handle"))
                .and_then(|handle| Self::adopt(pid, handle));
            if adopted.is_err()
                && let Err(error) = child.start_kill()
            {
                tracing::error!(pid, %error, "could not end a process that has no job");
            }
            adopted
        }
    }

    /// The pid of the process tetherd spawned.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Asks every process of the tree to end: SIGTERM on Unix. On Windows, where there is no such
    /// request, this ends them (see the module's documentation).
    pub fn terminate(&self) {
        #[cfg(unix)]
        crate::process_group::signal(self.pid, crate::process_group::GroupSignal::Terminate);
        #[cfg(windows)]
        self.end_job();
    }

    /// Ends every process of the tree, whether it likes it or not.
    pub fn kill(&self) {
        #[cfg(unix)]
        crate::process_group::signal(self.pid, crate::process_group::GroupSignal::Kill);
        #[cfg(windows)]
        self.end_job();
    }

    #[cfg(windows)]
    fn end_job(&self) {
        /// The exit code of a killed process on Windows, as `TerminateProcess` callers use: 1.
        const KILLED_EXIT_CODE: u32 = 1;
        if let Err(error) = self.job.terminate(KILLED_EXIT_CODE) {
            tracing::warn!(pid = self.pid, %error, "could not end a process tree's job");
        }
    }

    /// Whether any process of the tree is still running. The group's leader does not count once
    /// it has exited, even before it is reaped: whoever spawned it reaps it on their own schedule.
    #[cfg(unix)]
    pub fn has_live_members(&self) -> bool {
        crate::process_group::has_live_members(self.pid)
    }

    /// Whether any process of the tree is still running.
    #[cfg(windows)]
    pub fn has_live_members(&self) -> bool {
        match self.job.active_processes() {
            Ok(active) => active > 0,
            Err(error) => {
                // A job that cannot be asked is treated as gone: waiting on it would wait forever.
                tracing::warn!(pid = self.pid, %error, "could not count a process tree's processes");
                false
            }
        }
    }

    /// Waits until no process of the tree is alive, killing it outright at `kill_at` if any is
    /// still there then. `None` means it has already been killed outright.
    pub async fn finish_kill(&self, kill_at: Option<Instant>) -> Result<(), SurvivedKill> {
        let mut kill_at = kill_at;
        let mut give_up_at: Option<Instant> = None;
        while self.has_live_members() {
            let now = Instant::now();
            if let Some(deadline) = kill_at
                && now >= deadline
            {
                self.kill();
                kill_at = None;
            }
            if kill_at.is_none() {
                let give_up = *give_up_at.get_or_insert(now + KILL_SETTLE);
                if now >= give_up {
                    return Err(SurvivedKill);
                }
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Ok(())
    }
}
