//! Windows Job Objects: the processes one agent or terminal command started, ended as one.
//!
//! Windows has no process groups a kill can reach: a child outlives its parent, and `taskkill /T`
//! walks parent pids that may already be reused. A Job Object is the kernel's own answer. Every
//! process started by a process in a job is in the job too (from Windows 8 on, jobs nest, so an
//! agent that makes jobs of its own still works), [`JobObject::terminate`] ends all of them at
//! once, and the job counts the ones still running.
//!
//! Each job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when its last handle closes, its
//! processes are ended. tetherd holds the only handle, so however tetherd ends (a crash, a kill
//! from the Task Manager), the kernel ends what it started. This is why Windows needs no orphan
//! list (`orphans.rs`, Unix only).
//!
//! One gap: a process is put in its job just after it starts (Rust's `Command` cannot start a
//! process inside a job, nor suspended). Whatever it starts in the microseconds before that
//! escapes the job; agents and shells do not start anything that early.
//!
//! This is the one module of tetherd with `unsafe` code: the Win32 calls, each with the reason it
//! is sound.

#![allow(unsafe_code, reason = "the Win32 job API has no safe wrapper; each call says why it is sound")]

use std::io;
use std::os::windows::io::{AsRawHandle as _, FromRawHandle as _, OwnedHandle, RawHandle};

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};

/// A job, its processes ended when it is dropped.
#[derive(Debug)]
pub struct JobObject(OwnedHandle);

impl JobObject {
    /// A new, empty job whose processes all end when it is closed.
    pub fn new() -> io::Result<Self> {
        // SAFETY: null attributes (the default security, not inheritable) and a null name (an
        // anonymous job) are valid; the call returns a new handle or null.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a handle we own and nothing else closes.
        let job = Self(unsafe { OwnedHandle::from_raw_handle(raw) });
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the pointer and the size describe `limits`, which lives across the call and is
        // the structure this information class takes.
        let set = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts the process `process` (a handle with `PROCESS_SET_QUOTA` and `PROCESS_TERMINATE`
    /// access, as a spawned child's is) in the job, with every process it starts from now on.
    pub fn assign(&self, process: RawHandle) -> io::Result<()> {
        // SAFETY: both are live handles for the duration of the call (the caller holds the
        // process's); the call only reads them.
        if unsafe { AssignProcessToJobObject(self.raw(), process) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Ends every process of the job, with `exit_code` as their exit code.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job's handle is live while `self` is.
        if unsafe { TerminateJobObject(self.raw(), exit_code) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// How many processes of the job are still running.
    pub fn active_processes(&self) -> io::Result<u32> {
        let mut accounting = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
        // SAFETY: the pointer and the size describe `accounting`, the structure this information
        // class fills; the length it returns is not needed (null is allowed).
        let queried = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicAccountingInformation,
                (&raw mut accounting).cast(),
                size_of_u32::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>(),
                std::ptr::null_mut(),
            )
        };
        if queried == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(accounting.ActiveProcesses)
    }

    fn raw(&self) -> RawHandle {
        self.0.as_raw_handle()
    }
}

/// The size of `T` as the Win32 calls take it; their structures are a few hundred bytes.
fn size_of_u32<T>() -> u32 {
    u32::try_from(size_of::<T>()).expect("a Win32 structure is smaller than 4 GiB")
}
