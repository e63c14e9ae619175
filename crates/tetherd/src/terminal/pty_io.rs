//! A PTY's master side as the terminal's tasks use it, per platform: a reader the pump waits on
//! and then drains ([`PtyReader::readable`], [`PtyReader::try_read`]), a writer for what the
//! person types ([`PtyWriter::write_all`]), and the wait for the command's exit.
//!
//! - Unix: the PTY's descriptor, duplicated, non-blocking and registered with tokio's reactor
//!   (see `open` for why the reactor rather than a thread). The exit is read with `waitpid`, which
//!   gives the signal that ended the command.
//! - Windows (ConPTY): its pipes cannot be registered with tokio, so, as portable-pty intends,
//!   a thread blocks in each read and hands the chunks to the pump through a small channel (whose
//!   few slots keep the backpressure: a pump that waits for room in the fanout stops the reads,
//!   and the command's writes then wait). Input is written on tokio's blocking pool. The exit is
//!   portable-pty's `wait`, which gives the exit code (Windows has no signals).

use std::io;

/// What the exit thread waits on: the command's pid on Unix (to `waitpid` it), the child itself
/// on Windows.
#[cfg(unix)]
pub type Reapable = u32;
#[cfg(windows)]
pub type Reapable = Box<dyn portable_pty::Child + Send + Sync>;

/// Whether a failed read says the PTY was closed (every process holding it ended), which is how
/// a PTY's output ends, rather than a failure worth logging.
#[cfg(unix)]
pub fn is_hangup(error: &io::Error) -> bool {
    error.raw_os_error() == Some(nix::libc::EIO)
}

/// See the Unix version: ConPTY's output pipe reports its end as a broken pipe.
#[cfg(windows)]
pub fn is_hangup(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe
}

#[cfg(unix)]
pub use self::unix::{PtyReader, PtyWriter, open, wait_for_exit};
#[cfg(windows)]
pub use self::windows::{PtyReader, PtyWriter, open, wait_for_exit};

#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::fd::{AsFd as _, AsRawFd, RawFd};

    use filedescriptor::FileDescriptor;
    use portable_pty::MasterPty;
    use tether_core::sidecar::{TerminalExitStatus, TerminalId};
    use tokio::io::AsyncWriteExt as _;
    use tokio::net::unix::pipe;

    /// The command's output, read through tokio's reactor.
    pub struct PtyReader(pipe::Receiver);

    impl PtyReader {
        /// Waits until output can be read (or the PTY is closed).
        pub async fn readable(&mut self) -> io::Result<()> {
            self.0.readable().await
        }

        /// Reads what is there now; `WouldBlock` when nothing is, 0 once the PTY is closed.
        pub fn try_read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            self.0.try_read(buffer)
        }
    }

    /// The command's input, written through tokio's reactor.
    pub struct PtyWriter(pipe::Sender);

    impl PtyWriter {
        /// Writes all of `data`, waiting while the PTY is full (the command does not read).
        pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
            self.0.write_all(data).await
        }
    }

    /// The number of a PTY's descriptor, as portable-pty lends it, to duplicate it.
    struct MasterDescriptor(RawFd);

    impl AsRawFd for MasterDescriptor {
        fn as_raw_fd(&self) -> RawFd {
            self.0
        }
    }

    /// Two descriptors of the PTY of `master` (which stays open meanwhile), non-blocking and
    /// registered with tokio's reactor: one to read the command's output, one to write its input.
    ///
    /// A line of output then costs one wake-up: the runtime's worker that waits for the PTY reads
    /// it, encodes it and writes it to the host's socket in one go (a thread blocking in its read
    /// would add a wake-up of the runtime per read, which was most of a line's latency). A PTY's
    /// master side reads and writes as the two ends of a pipe do, and tokio's pipe ends take any
    /// such descriptor. Every descriptor of the PTY is non-blocking from then on (they share the
    /// flag); portable-pty only resizes through its own.
    pub fn open(master: &dyn MasterPty, _terminal_id: TerminalId) -> io::Result<(PtyReader, PtyWriter)> {
        let raw = master.as_raw_fd().ok_or_else(|| io::Error::other("the PTY has no descriptor"))?;
        let mut descriptor = FileDescriptor::dup(&MasterDescriptor(raw)).map_err(io::Error::other)?;
        descriptor.set_non_blocking(true).map_err(io::Error::other)?;
        let reader = pipe::Receiver::from_owned_fd_unchecked(descriptor.as_fd().try_clone_to_owned()?)?;
        let writer = pipe::Sender::from_owned_fd_unchecked(descriptor.as_fd().try_clone_to_owned()?)?;
        Ok((PtyReader(reader), PtyWriter(writer)))
    }

    /// Waits for the command `pid` to exit and reaps it.
    pub fn wait_for_exit(pid: u32) -> TerminalExitStatus {
        use nix::errno::Errno;
        use nix::sys::wait::{WaitStatus, waitpid};
        use nix::unistd::Pid;

        let unknown = TerminalExitStatus { exit_code: None, signal: None };
        let Ok(raw_pid) = i32::try_from(pid) else {
            tracing::error!(pid, "process id out of range; cannot wait for it");
            return unknown;
        };
        loop {
            match waitpid(Pid::from_raw(raw_pid), None) {
                Ok(WaitStatus::Exited(_, code)) => {
                    return TerminalExitStatus { exit_code: u32::try_from(code).ok(), signal: None };
                }
                Ok(WaitStatus::Signaled(_, signal, _core_dumped)) => {
                    return TerminalExitStatus { exit_code: None, signal: Some(signal.as_str().to_owned()) };
                }
                // Stops and continues are not exits; keep waiting.
                Ok(_) | Err(Errno::EINTR) => {}
                Err(error) => {
                    // Only if something else reaped it: it is gone either way.
                    tracing::error!(pid, %error, "could not read the terminal command's exit status");
                    return unknown;
                }
            }
        }
    }
}

#[cfg(windows)]
mod windows {
    use std::io::{self, Read as _, Write as _};

    use portable_pty::MasterPty;
    use tether_core::sidecar::{TerminalExitStatus, TerminalId};
    use tokio::sync::mpsc;

    /// How much one blocking read takes from ConPTY's output pipe at most.
    const READ_CHUNK_BYTES: usize = 16 * 1024;

    /// How many chunks the reader thread may be ahead of the pump.
    const CHUNKS_AHEAD: usize = 4;

    /// The command's output, read by a thread of its own.
    pub struct PtyReader {
        chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
        /// The chunk being handed out, and how much of it has been.
        pending: Vec<u8>,
        taken: usize,
        /// A read failure the thread reported, for the next `try_read`.
        failed: Option<io::Error>,
        /// The thread is done: the pipe was closed.
        ended: bool,
    }

    impl PtyReader {
        /// Waits until output can be read (or the PTY is closed).
        pub async fn readable(&mut self) -> io::Result<()> {
            if self.taken < self.pending.len() || self.failed.is_some() || self.ended {
                return Ok(());
            }
            match self.chunks.recv().await {
                Some(Ok(chunk)) => (self.pending, self.taken) = (chunk, 0),
                Some(Err(error)) => self.failed = Some(error),
                None => self.ended = true,
            }
            Ok(())
        }

        /// Reads what is there now; `WouldBlock` when nothing is, 0 once the PTY is closed.
        pub fn try_read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            if self.taken == self.pending.len() {
                if let Some(error) = self.failed.take() {
                    return Err(error);
                }
                if self.ended {
                    return Ok(0);
                }
                match self.chunks.try_recv() {
                    Ok(Ok(chunk)) => (self.pending, self.taken) = (chunk, 0),
                    Ok(Err(error)) => return Err(error),
                    Err(mpsc::error::TryRecvError::Empty) => return Err(io::ErrorKind::WouldBlock.into()),
                    Err(mpsc::error::TryRecvError::Disconnected) => {
                        self.ended = true;
                        return Ok(0);
                    }
                }
            }
            let available = &self.pending[self.taken..];
            let read = available.len().min(buffer.len());
            buffer[..read].copy_from_slice(&available[..read]);
            self.taken += read;
            Ok(read)
        }
    }

    /// The command's input; each write runs on tokio's blocking pool.
    pub struct PtyWriter(Option<Box<dyn io::Write + Send>>);

    impl PtyWriter {
        /// Writes all of `data`, waiting while the PTY is full (the command does not read).
        pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
            let mut writer =
                self.0.take().ok_or_else(|| io::Error::other("an earlier write to the terminal failed"))?;
            let data = data.to_vec();
            let (writer, written) = tokio::task::spawn_blocking(move || {
                let written = writer.write_all(&data).and_then(|()| writer.flush());
                (writer, written)
            })
            .await
            .map_err(io::Error::other)?;
            self.0 = Some(writer);
            written
        }
    }

    /// The reader and writer of ConPTY `master`; starts the reader's thread.
    pub fn open(master: &dyn MasterPty, terminal_id: TerminalId) -> io::Result<(PtyReader, PtyWriter)> {
        let mut reader = master.try_clone_reader().map_err(io::Error::other)?;
        let writer = master.take_writer().map_err(io::Error::other)?;
        let (sender, chunks) = mpsc::channel(CHUNKS_AHEAD);
        std::thread::Builder::new().name(format!("terminal-{terminal_id}-read")).spawn(move || {
            let mut buffer = vec![0; READ_CHUNK_BYTES];
            let mut pump_listens = true;
            loop {
                let read = reader.read(&mut buffer);
                let last = !matches!(read, Ok(read) if read > 0);
                // Once the pump is gone the pipe is still drained to its end: ConPTY's close
                // waits for its output to be read on older Windows.
                if pump_listens {
                    let chunk = read.map(|read| buffer[..read].to_vec());
                    let sent = match chunk {
                        Ok(chunk) if chunk.is_empty() => Ok(()),
                        chunk => sender.blocking_send(chunk),
                    };
                    pump_listens = sent.is_ok();
                }
                if last {
                    return;
                }
            }
        })?;
        let reader = PtyReader { chunks, pending: Vec::new(), taken: 0, failed: None, ended: false };
        Ok((reader, PtyWriter(Some(writer))))
    }

    /// Waits for the command to exit.
    pub fn wait_for_exit(mut child: Box<dyn portable_pty::Child + Send + Sync>) -> TerminalExitStatus {
        match child.wait() {
            Ok(status) => TerminalExitStatus { exit_code: Some(status.exit_code()), signal: None },
            Err(error) => {
                tracing::error!(%error, "could not read the terminal command's exit status");
                TerminalExitStatus { exit_code: None, signal: None }
            }
        }
    }
}
