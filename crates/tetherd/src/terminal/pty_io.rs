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
//!
//!   portable-pty makes every pseudoconsole with `PSEUDOCONSOLE_INHERIT_CURSOR`, which makes
//!   ConPTY ask the terminal where its cursor is (`ESC[6n`) as it starts, and hold the command
//!   until the answer comes (microsoft/terminal#1810; others driving ConPTY without a terminal
//!   hang there). A terminal's output often reaches no terminal emulator at all (an agent reads
//!   it through `terminal/output`), so tetherd answers that first question itself, at the top
//!   left, and takes it out of the output ([`StartupCursorQuery`]), so that a VS Code terminal
//!   opened later does not answer it a second time.

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
    use std::sync::{Arc, Mutex};

    use portable_pty::MasterPty;
    use tether_core::sidecar::{TerminalExitStatus, TerminalId};
    use tokio::sync::mpsc;

    use super::{CURSOR_AT_TOP_LEFT, StartupCursorQuery};

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

    /// ConPTY's input, shared by the input task and the reader thread (which answers ConPTY's
    /// startup question, see the module's documentation).
    type SharedWriter = Arc<Mutex<Box<dyn io::Write + Send>>>;

    /// Writes `data` to ConPTY's input, blocking while it is full.
    fn write_blocking(writer: &SharedWriter, data: &[u8]) -> io::Result<()> {
        // A panic while writing leaves nothing half-updated in the writer we could trip on.
        let mut writer = writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        writer.write_all(data).and_then(|()| writer.flush())
    }

    /// The command's input; each write runs on tokio's blocking pool.
    pub struct PtyWriter(SharedWriter);

    impl PtyWriter {
        /// Writes all of `data`, waiting while the PTY is full (the command does not read).
        pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
            let (writer, data) = (self.0.clone(), data.to_vec());
            tokio::task::spawn_blocking(move || write_blocking(&writer, &data)).await.map_err(io::Error::other)?
        }
    }

    /// The reader and writer of ConPTY `master`; starts the reader's thread.
    pub fn open(master: &dyn MasterPty, terminal_id: TerminalId) -> io::Result<(PtyReader, PtyWriter)> {
        let mut reader = master.try_clone_reader().map_err(io::Error::other)?;
        let writer: SharedWriter = Arc::new(Mutex::new(master.take_writer().map_err(io::Error::other)?));
        let answerer = writer.clone();
        let (sender, chunks) = mpsc::channel(CHUNKS_AHEAD);
        std::thread::Builder::new().name(format!("terminal-{terminal_id}-read")).spawn(move || {
            let mut buffer = vec![0; READ_CHUNK_BYTES];
            let mut pump_listens = true;
            let mut startup_query = StartupCursorQuery::default();
            loop {
                let read = reader.read(&mut buffer);
                let last = !matches!(read, Ok(read) if read > 0);
                let chunk = read.map(|read| {
                    if read == 0 {
                        // The end: what was held back as a possible question is output after all.
                        return startup_query.finish();
                    }
                    let (passed_on, asked) = startup_query.filter(&buffer[..read]);
                    if asked && let Err(error) = write_blocking(&answerer, CURSOR_AT_TOP_LEFT) {
                        tracing::warn!(terminal_id, %error, "could not answer ConPTY's cursor question");
                    }
                    passed_on
                });
                // Once the pump is gone the pipe is still drained to its end: ConPTY's close
                // waits for its output to be read on older Windows.
                if pump_listens {
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
        Ok((reader, PtyWriter(writer)))
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

/// ConPTY's question, "where is the cursor?" (a Device Status Report).
const CURSOR_QUESTION: &[u8] = b"\x1b[6n";

/// The answer tetherd gives it: row 1, column 1 (a terminal's output starts on a fresh screen).
#[cfg_attr(not(windows), allow(dead_code, reason = "Windows only; tested everywhere"))]
const CURSOR_AT_TOP_LEFT: &[u8] = b"\x1b[1;1R";

/// How far into a terminal's output ConPTY's startup question is looked for. It comes first;
/// this only bounds the look when it never comes (a ConPTY that does not ask).
const STARTUP_QUERY_WINDOW: usize = 4096;

/// Finds ConPTY's startup question in the first output of a terminal and takes it out (see the
/// module's documentation). The question may be split between two reads: the part of it at the
/// end of one read is held back until the next.
#[derive(Debug, Default)]
#[cfg_attr(not(windows), allow(dead_code, reason = "Windows only; tested everywhere"))]
pub struct StartupCursorQuery {
    /// The end of the last read, held back because it may begin the question.
    held: Vec<u8>,
    /// How many bytes have been passed on while looking.
    passed: usize,
    /// The question was answered, or the window is over: everything passes as it comes.
    done: bool,
}

#[cfg_attr(not(windows), allow(dead_code, reason = "Windows only; tested everywhere"))]
impl StartupCursorQuery {
    /// What of `read` to pass on now, and whether the question was just asked (to be answered).
    pub fn filter(&mut self, read: &[u8]) -> (Vec<u8>, bool) {
        if self.done {
            return (read.to_vec(), false);
        }
        let mut data = std::mem::take(&mut self.held);
        data.extend_from_slice(read);
        if let Some(at) = data.windows(CURSOR_QUESTION.len()).position(|window| window == CURSOR_QUESTION) {
            self.done = true;
            data.drain(at..at + CURSOR_QUESTION.len());
            return (data, true);
        }
        if self.passed + data.len() >= STARTUP_QUERY_WINDOW {
            self.done = true;
            return (data, false);
        }
        // The longest end of `data` that begins the question waits for the next read.
        let held = (1..CURSOR_QUESTION.len())
            .rev()
            .find(|&len| data.len() >= len && data[data.len() - len..] == CURSOR_QUESTION[..len])
            .unwrap_or(0);
        self.held = data.split_off(data.len() - held);
        self.passed += data.len();
        (data, false)
    }

    /// What is still held back, at the end of the output.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `reads` through a fresh filter: what is passed on, and after which reads it answered.
    fn filtered(reads: &[&[u8]]) -> (String, Vec<usize>) {
        let mut query = StartupCursorQuery::default();
        let mut passed = Vec::new();
        let mut answered = Vec::new();
        for (index, read) in reads.iter().enumerate() {
            let (out, asked) = query.filter(read);
            passed.extend(out);
            if asked {
                answered.push(index);
            }
        }
        (String::from_utf8_lossy(&passed).into_owned(), answered)
    }

    #[test]
    fn conpty_startup_question_is_answered_once_and_taken_out_even_split_between_reads() {
        assert_eq!(filtered(&[b"\x1b[6n\x1b[?25lhello"]), ("\x1b[?25lhello".to_owned(), vec![0]));
        assert_eq!(filtered(&[b"\x1b[", b"6", b"nhi"]), ("hi".to_owned(), vec![2]));
        // Only the first question is ConPTY's: a program's own goes to the terminal.
        assert_eq!(filtered(&[b"\x1b[6n", b"a\x1b[6n"]), ("a\x1b[6n".to_owned(), vec![0]));
        // Something that only begins like it is passed on once it is clearly not it.
        assert_eq!(filtered(&[b"x\x1b[", b"1mred"]), ("x\x1b[1mred".to_owned(), vec![]));

        // Output that ends on what might have begun the question still ends whole.
        let mut query = StartupCursorQuery::default();
        assert_eq!(query.filter(b"bye\x1b["), (b"bye".to_vec(), false));
        assert_eq!(query.finish(), b"\x1b[".to_vec());
    }

    #[test]
    fn output_without_the_question_passes_whole_and_the_look_ends_after_the_window() {
        let long = vec![b'.'; STARTUP_QUERY_WINDOW];
        let (passed, answered) = filtered(&[&long, b"\x1b[6n"]);
        assert_eq!(answered, Vec::<usize>::new());
        assert_eq!(passed.len(), STARTUP_QUERY_WINDOW + CURSOR_QUESTION.len());
    }
}
