//! The writer of a session's event log (`<sessionDir>/events.jsonl`, format in
//! [`tether_core::session_log`]): every line tetherd sends to the agent and forwards from it, the
//! agent's stderr, the host's audit records and the agent's exit, in the order they happen.
//!
//! Several tasks write to one log (the connection that sends to the agent, the stdout and stderr
//! forwarders, the supervisor that reports the exit), so the file sits behind a mutex that also
//! hands out the `seq` numbers: a line's number and its place in the file are decided together.
//! Each line goes to the file in one write (the lines of the agent's stdout that one read of its
//! pipe brought in together go in one write too), without a userspace buffer, so a line is in
//! the kernel before the host can see what it records, and a `kill -9` of tetherd loses nothing
//! written. Surviving a machine crash needs `fdatasync`, which is slow, so it happens only where
//! losing the tail would hurt: when a turn ends, before the person is asked something (a
//! permission, a file write to review) and when the agent exits. The sync runs on a blocking
//! thread, so that the runtime never waits for the disk.
//!
//! A session must not go on unrecorded: after the first write or sync error the log stops (a line
//! the failed write left half written is cut off), says so once in tetherd's own log, and
//! [`EventLog::failure`] tells the agent's supervisor, which stops the agent and tells the hosts
//! (`agent/logFailed`). Nothing that could not be logged is forwarded or sent.
//!
//! A session that is continued (a new agent for a session folder of an earlier one) appends to
//! the folder's log: [`EventLog::open_existing`] cuts off a line a crash left half written and
//! numbers on from the last `seq`. Finding that `seq` reads the file from its end, one line at a
//! time, so that a log of hundreds of megabytes costs one line to reopen.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use anyhow::Context as _;
use tether_core::jsonrpc::{Message, RequestId, parse_message};
use tether_core::session_log::{EVENTS_FILE, LogEvent, encode_line, read_log};
use tether_core::sidecar::preview_of;
use tokio::sync::watch;

use crate::session::{explain_link, private_file_options};
use crate::utc::UtcTime;

/// The agent's requests that make the person decide something; the log is synced before they
/// are forwarded, so that a session reopened after a crash shows the question that was pending.
const METHODS_THAT_ASK_THE_PERSON: &[&str] = &["session/request_permission", "fs/write_text_file"];

/// The method of the host's request that starts a turn; its response ends the turn.
const PROMPT_METHOD: &str = "session/prompt";

/// How much of a log is read at once when reading it from its end.
const TAIL_CHUNK_BYTES: u64 = 64 * 1024;

/// One session's event log. Clones write to the same file.
#[derive(Debug, Clone)]
pub struct EventLog {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    writer: Mutex<Writer>,
    /// Why the log stopped, once it has.
    failure: watch::Sender<Option<String>>,
}

#[derive(Debug)]
struct Writer {
    /// `None` once writing or syncing has failed: the log stops there.
    file: Option<Arc<File>>,
    /// The file's length after the last whole line: a failed write is cut back to it.
    len: u64,
    /// The `seq` of the next line.
    next_seq: u64,
    sync_points: SyncPoints,
}

impl EventLog {
    /// Creates `<session_dir>/events.jsonl`, readable by its owner only. The file must not exist
    /// yet: a log is never shared with an earlier session.
    pub fn create(session_dir: &Path) -> anyhow::Result<Self> {
        let path = session_dir.join(EVENTS_FILE);
        let file = private_file_options()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|error| explain_link(&path, error))
            .with_context(|| format!("cannot create {}", path.display()))?;
        claim(&file, &path)?;
        Ok(Self::writing_to(path, file, 0, 1))
    }

    /// Opens `<session_dir>/events.jsonl` to continue it (creating it, owner-only, if it is
    /// missing): a last line that a crash cut short is cut off (and named in tetherd's log), and
    /// the next line is numbered on from the last event's `seq`.
    ///
    /// Only one writer may have the file open: the caller makes sure no other [`EventLog`] of
    /// this tetherd writes to it (the agent registry hands one writer to every agent of a folder).
    pub fn open_existing(session_dir: &Path) -> anyhow::Result<Self> {
        let path = session_dir.join(EVENTS_FILE);
        let file = private_file_options()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|error| explain_link(&path, error))
            .with_context(|| format!("cannot open {}", path.display()))?;
        claim(&file, &path)?;
        let last_seq = cut_partial_line_and_find_last_seq(&file, &path)
            .with_context(|| format!("cannot continue {}", path.display()))?;
        let len = file.metadata().with_context(|| format!("cannot continue {}", path.display()))?.len();
        Ok(Self::writing_to(path, file, len, last_seq + 1))
    }

    fn writing_to(path: PathBuf, file: File, len: u64, next_seq: u64) -> Self {
        let writer = Writer { file: Some(Arc::new(file)), len, next_seq, sync_points: SyncPoints::default() };
        let (failure, _) = watch::channel(None);
        Self { shared: Arc::new(Shared { path, writer: Mutex::new(writer), failure }) }
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Waits until the log stops after an I/O error, and says why (the system's error).
    pub async fn failure(&self) -> String {
        let mut failure = self.shared.failure.subscribe();
        let stopped = failure.wait_for(Option::is_some).await;
        // The sender lives as long as `self`, so waiting ends only with a failure.
        stopped.ok().and_then(|failure| failure.clone()).unwrap_or_default()
    }

    /// Whether the log has stopped after an I/O error: nothing more is written to it.
    pub fn is_stopped(&self) -> bool {
        self.lock().file.is_none()
    }

    fn lock(&self) -> MutexGuard<'_, Writer> {
        // Every critical section leaves the writer consistent (a line is counted only once it is
        // written), so a poisoned lock still holds usable state.
        self.shared.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a line about to be written to the agent's stdin (JSON text, as sent); returns
    /// whether it is in the log (a line that is not must not be sent).
    pub fn sent(&self, message: &str) -> bool {
        let mut writer = self.lock();
        writer.sync_points.sent(message);
        self.append(&mut writer, &LogEvent::ToAgent(message.to_owned())).is_some()
    }

    /// Records the lines of the agent's stdout that one read brought in (JSON text, as received)
    /// before they are forwarded, in a single write: a burst of thousands of lines costs a write
    /// per read of the pipe rather than one per line. They share one time, the time they were
    /// read. Returns once they are on disk if one of them ends a turn or asks the person
    /// something.
    ///
    /// Returns the first line's `seq` (the others follow it in order), or `None` when none of
    /// them was written (the log has stopped). These and the `seq` of [`Self::stderr`] and
    /// [`Self::exited`] go to the hosts with the event, so that a host that has read the log
    /// skips what it already has.
    pub async fn received_all(&self, messages: &[&str]) -> Option<u64> {
        let (seq, must_sync) = {
            let mut writer = self.lock();
            let events: Vec<LogEvent> =
                messages.iter().map(|message| LogEvent::FromAgent((*message).to_owned())).collect();
            let seq = self.append_all(&mut writer, &events);
            let mut must_sync = false;
            for message in messages {
                // Every line is looked at, not only up to the first sync point: a prompt's
                // answer also ends its turn in the bookkeeping.
                must_sync |= writer.sync_points.received(message);
            }
            (seq, must_sync)
        };
        if must_sync {
            self.sync().await;
        }
        seq
    }

    /// Records a line of the agent's stderr; returns its `seq` (see [`Self::received_all`]).
    pub fn stderr(&self, line: &str) -> Option<u64> {
        let mut writer = self.lock();
        self.append(&mut writer, &LogEvent::Stderr(line.to_owned()))
    }

    /// Records one of the host's audit records (a JSON object, as the host sent it).
    pub fn host_record(&self, record: &str) {
        let mut writer = self.lock();
        self.append(&mut writer, &LogEvent::Host(record.to_owned()));
    }

    /// Records the agent's exit, its last event (a continued session's next agent appends after
    /// it); returns once the log is on disk, with the line's `seq` (see [`Self::received_all`]).
    pub async fn exited(&self, code: Option<i32>, signal: Option<i32>, killed: bool) -> Option<u64> {
        let seq = {
            let mut writer = self.lock();
            self.append(&mut writer, &LogEvent::Exited { code, signal, killed })
        };
        self.sync().await;
        seq
    }

    /// Appends one line for `event`, numbered and timed under the lock so that numbers, times
    /// and places in the file agree; returns its `seq`, or `None` when it was not written.
    ///
    /// Every text in an event is one line already (stdout, stdin and host lines are framed at
    /// newlines, and stderr lines are escaped), so the encoded line has no newline of its own.
    fn append(&self, writer: &mut Writer, event: &LogEvent) -> Option<u64> {
        self.append_all(writer, std::slice::from_ref(event))
    }

    /// Appends one line for each of `events`, numbered in order from the next `seq` and timed
    /// alike, in one write; returns the first one's `seq`, or `None` when they were not written.
    fn append_all(&self, writer: &mut Writer, events: &[LogEvent]) -> Option<u64> {
        let file = writer.file.as_ref()?;
        let first_seq = writer.next_seq;
        let time = UtcTime::from_system_time(SystemTime::now()).rfc3339_millis();
        let mut lines = String::new();
        for (seq, event) in (first_seq..).zip(events) {
            lines.push_str(&encode_line(seq, &time, event));
            lines.push('\n');
        }
        // One write on a file opened for appending: the lines land whole, after the one before.
        match (&**file).write_all(lines.as_bytes()) {
            Ok(()) => {
                writer.next_seq += events.len() as u64;
                writer.len += lines.len() as u64;
                Some(first_seq)
            }
            Err(error) => {
                // A full disk or a file size limit lets part of the lines through: it is cut off,
                // so that the log ends with the last whole line before them. Shrinking a file
                // needs no room.
                if let Err(cut_error) = file.set_len(writer.len) {
                    tracing::warn!(path = %self.shared.path.display(), error = %cut_error,
                        "cannot cut off the event log's unfinished last line");
                }
                self.stop(writer, "cannot append to", &error);
                None
            }
        }
    }

    /// Waits until everything appended so far is on disk (`fdatasync`, on a blocking thread).
    async fn sync(&self) {
        let Some(file) = self.lock().file.clone() else { return };
        let synced = tokio::task::spawn_blocking(move || file.sync_data()).await;
        let error = match synced {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            // The closure cannot panic; a join error means the runtime is going away.
            Err(join_error) => std::io::Error::other(join_error),
        };
        let mut writer = self.lock();
        // Another failure may have stopped the log meanwhile; it has been reported then.
        if writer.file.is_some() {
            self.stop(&mut writer, "cannot sync", &error);
        }
    }

    /// Stops the log after an I/O error, saying so once. Nothing is written after it: what
    /// reached the disk is unknown, and a log that went on past a hole would claim to be
    /// complete.
    fn stop(&self, writer: &mut Writer, what: &str, error: &std::io::Error) {
        writer.file = None;
        tracing::error!(path = %self.shared.path.display(), %error,
            "{what} the session's event log; it stops here, and so does the agent");
        self.shared.failure.send_replace(Some(format!("{what} it: {error}")));
    }
}

/// Cuts off the bytes after the log's last newline (a line a crash cut short, which no host has
/// seen: lines are forwarded only once written whole) and returns the `seq` of the last event
/// before them, 0 when there is none.
///
/// The lines are read from the end; a line that is not an event (the writer never writes one,
/// but a person may have edited the file) is passed over, with a word in tetherd's log.
fn cut_partial_line_and_find_last_seq(file: &File, path: &Path) -> std::io::Result<u64> {
    let len = file.metadata()?.len();
    let (mut end, partial) = line_ending_at(file, len)?;
    if !partial.is_empty() {
        file.set_len(end)?;
        tracing::warn!(path = %path.display(), bytes = partial.len(), line = preview_of(&partial),
            "cut off the event log's last line, which a crash left unfinished");
    }
    // `end` is now the start of a line: just after a newline, or the file's start.
    while end > 0 {
        let (start, line) = line_ending_at(file, end - 1)?;
        let text = String::from_utf8_lossy(&line);
        if let Some(entry) = read_log(&format!("{text}\n")).entries.pop() {
            return Ok(entry.seq);
        }
        if !text.trim().is_empty() {
            tracing::warn!(path = %path.display(), line = preview_of(&line),
                "an event log line is not an event; numbering on from the one before it");
        }
        end = start;
    }
    Ok(0)
}

/// The line of `file` that ends at byte `end` (excluded): its start (just after the newline
/// before it, or 0) and its bytes. Reads backwards from `end`, one chunk at a time.
fn line_ending_at(file: &File, end: u64) -> std::io::Result<(u64, Vec<u8>)> {
    // The chunks read so far, last first.
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut start = end;
    while start > 0 {
        let chunk_start = start.saturating_sub(TAIL_CHUNK_BYTES);
        let mut chunk = Vec::new();
        let mut reader = file;
        reader.seek(SeekFrom::Start(chunk_start))?;
        reader.take(start - chunk_start).read_to_end(&mut chunk)?;
        if chunk.len() as u64 != start - chunk_start {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the event log shrank while read"));
        }
        if let Some(newline) = chunk.iter().rposition(|&byte| byte == b'\n') {
            chunks.push(chunk.split_off(newline + 1));
            start = chunk_start + newline as u64 + 1;
            break;
        }
        chunks.push(chunk);
        start = chunk_start;
    }
    Ok((start, chunks.into_iter().rev().flatten().collect()))
}

/// Takes the log's exclusive lock (`flock`), held as long as the file is open: two tetherds
/// (a window whose record of the running one was lost starts another) must never write one log,
/// or their `seq` numbers would interleave and a reopened session would skip the newer agent's
/// events as already read.
fn claim(file: &File, path: &Path) -> anyhow::Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(anyhow::anyhow!(
            "another tetherd is writing {} (its agent may still run for another window of this workspace)",
            path.display()
        )),
        Err(std::fs::TryLockError::Error(error)) => {
            Err(anyhow::Error::new(error).context(format!("cannot lock {}", path.display())))
        }
    }
}

/// Tells which lines of the wire make a point where the log must be on disk: the agent's answer
/// to a prompt (the turn is over) and the agent's requests that ask the person something.
///
/// Only `id` and `method` of a line are read (parameters stay raw and unparsed).
#[derive(Debug, Default)]
struct SyncPoints {
    /// The ids of the prompts sent to the agent and not yet answered.
    prompts_in_flight: HashSet<RequestId>,
}

impl SyncPoints {
    /// Notes a line sent to the agent: a prompt starts a turn.
    fn sent(&mut self, message: &str) {
        if let Ok(Message::Request { id, method, .. }) = parse_message(message)
            && method == PROMPT_METHOD
        {
            self.prompts_in_flight.insert(id);
        }
    }

    /// Whether a line from the agent ends a turn or asks the person something.
    fn received(&mut self, message: &str) -> bool {
        match parse_message(message) {
            Ok(Message::Response { id, .. }) => self.prompts_in_flight.remove(&id),
            Ok(Message::Request { method, .. }) => METHODS_THAT_ASK_THE_PERSON.contains(&&*method),
            Ok(Message::Notification { .. }) | Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use tether_core::session_log::read_log;

    use super::*;

    #[test]
    fn a_log_another_writer_has_open_cannot_be_continued_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = EventLog::create(dir.path()).unwrap();
        let refused = EventLog::open_existing(dir.path()).map(|_| ()).unwrap_err();
        assert!(format!("{refused:#}").contains("another tetherd is writing"), "{refused:#}");
        drop(first);
        EventLog::open_existing(dir.path()).expect("the lock goes with the first writer");
    }

    #[test]
    fn the_log_is_synced_at_turn_ends_and_before_questions_to_the_person() {
        // `>` is a line sent to the agent, `<` one from it; each line from the agent is shown
        // with whether the log is synced before it is forwarded.
        let wire = [
            r#"> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
            r#"< {"jsonrpc":"2.0","id":0,"result":{}}"#,
            r#"> {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#,
            r#"> {"jsonrpc":"2.0","id":"p-2","method":"session/prompt","params":{}}"#,
            r#"< {"jsonrpc":"2.0","method":"session/update","params":{}}"#,
            r#"< {"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}"#,
            r#"> {"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}"#,
            r#"< {"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{}}"#,
            r#"< {"jsonrpc":"2.0","method":"session/request_permission","params":{}}"#,
            r#"< {"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{}}"#,
            r#"< {"jsonrpc":"2.0","id":"p-2","error":{"code":-32603,"message":"failed"}}"#,
            r#"< {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
            r#"< {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
            r#"< [1, 2]"#,
        ];
        let mut points = SyncPoints::default();
        let mut shown = String::new();
        for line in wire {
            let (direction, message) = line.split_at(2);
            if direction == "> " {
                points.sent(message);
            } else {
                let synced = if points.received(message) { "sync " } else { "     " };
                shown.push_str(&format!("{synced}{message}\n"));
            }
        }
        expect![[r#"
                 {"jsonrpc":"2.0","id":0,"result":{}}
                 {"jsonrpc":"2.0","method":"session/update","params":{}}
            sync {"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}
            sync {"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{}}
                 {"jsonrpc":"2.0","method":"session/request_permission","params":{}}
                 {"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{}}
            sync {"jsonrpc":"2.0","id":"p-2","error":{"code":-32603,"message":"failed"}}
            sync {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
                 {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
                 [1, 2]
        "#]]
        .assert_eq(&shown);
    }

    #[test]
    fn a_continued_log_loses_a_cut_line_and_numbers_on_from_its_last_event() {
        let line = |seq: u64, text: &str| encode_line(seq, "T", &LogEvent::Stderr(text.to_owned())) + "\n";
        let long = "x".repeat(3 * TAIL_CHUNK_BYTES as usize);
        let cases = [
            ("missing", None),
            ("empty", Some(String::new())),
            ("whole lines", Some(line(1, "one") + &line(2, "two"))),
            ("a cut last line", Some(line(1, "one") + &line(2, "two") + r#"{"seq":3,"ti"#)),
            ("only a cut line", Some(r#"{"seq":1,"#.to_owned())),
            ("a last line that is not an event", Some(line(6, "six") + &line(7, "seven") + "not json\n\n")),
            ("last lines longer than a chunk", Some(line(1, "one") + &line(2, &long) + &line(3, &long))),
        ];
        let mut shown = String::new();
        for (name, text) in cases {
            let folder = tempfile::tempdir().expect("a temporary directory");
            let path = folder.path().join(EVENTS_FILE);
            if let Some(text) = text {
                std::fs::write(&path, text).expect("a log");
            }
            let log = EventLog::open_existing(folder.path()).expect("a log to continue");
            let seq = log.stderr("next");
            let read = read_log(&std::fs::read_to_string(&path).expect("the log"));
            let lines: Vec<String> = read
                .entries
                .iter()
                .map(|entry| match &entry.event {
                    LogEvent::Stderr(text) if text.len() > 10 => format!("{} <{} bytes>", entry.seq, text.len()),
                    LogEvent::Stderr(text) => format!("{} {text}", entry.seq),
                    other => format!("{} {other:?}", entry.seq),
                })
                .collect();
            let problems: Vec<usize> = read.problems.iter().map(|problem| problem.line).collect();
            shown.push_str(&format!(
                "{name}: wrote {seq:?}; {}; bad lines {problems:?}, cut {}\n",
                lines.join(", "),
                read.cut_tail
            ));
            #[cfg(unix)]
            if name == "missing" {
                use std::os::unix::fs::PermissionsExt as _;
                let mode = std::fs::metadata(&path).expect("the log").permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "a log created to continue is its owner's only");
            }
        }
        expect![[r#"
            missing: wrote Some(1); 1 next; bad lines [], cut false
            empty: wrote Some(1); 1 next; bad lines [], cut false
            whole lines: wrote Some(3); 1 one, 2 two, 3 next; bad lines [], cut false
            a cut last line: wrote Some(3); 1 one, 2 two, 3 next; bad lines [], cut false
            only a cut line: wrote Some(1); 1 next; bad lines [], cut false
            a last line that is not an event: wrote Some(8); 6 six, 7 seven, 8 next; bad lines [3], cut false
            last lines longer than a chunk: wrote Some(4); 1 one, 2 <196608 bytes>, 3 <196608 bytes>, 4 next; bad lines [], cut false
        "#]]
        .assert_eq(&shown);
    }

    #[tokio::test]
    async fn lines_read_together_are_numbered_in_order_after_the_lines_before() {
        let folder = tempfile::tempdir().expect("a temporary directory");
        let log = EventLog::create(folder.path()).expect("a new log");
        log.stderr("before");
        let chunk = |n: u32| format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"n":{n}}}}}"#);
        let read: Vec<String> = (1..=3).map(chunk).collect();
        let read: Vec<&str> = read.iter().map(String::as_str).collect();
        assert_eq!(log.received_all(&read).await, Some(2), "the first line's seq");
        assert_eq!(log.stderr("after"), Some(5), "numbering goes on after them");

        let text = std::fs::read_to_string(folder.path().join(EVENTS_FILE)).expect("the log");
        let entries = read_log(&text).entries;
        let shown: Vec<String> = entries
            .iter()
            .map(|entry| match &entry.event {
                LogEvent::FromAgent(message) => format!("{} {message}", entry.seq),
                other => format!("{} {other:?}", entry.seq),
            })
            .collect();
        expect![[r#"
            1 Stderr("before")
            2 {"jsonrpc":"2.0","method":"session/update","params":{"n":1}}
            3 {"jsonrpc":"2.0","method":"session/update","params":{"n":2}}
            4 {"jsonrpc":"2.0","method":"session/update","params":{"n":3}}
            5 Stderr("after")"#]]
        .assert_eq(&shown.join("\n"));
        assert!(entries[1..4].iter().all(|entry| entry.time == entries[1].time), "read together, timed together");
    }

    #[tokio::test]
    async fn a_log_that_cannot_be_written_stops_and_its_writers_go_on() {
        let folder = tempfile::tempdir().expect("a temporary directory");
        let log = EventLog::create(folder.path()).expect("a new log");
        log.stderr("before");
        // Swap the file for one where every write fails (the disk is full).
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
        log.lock().file = Some(Arc::new(full));
        log.stderr("lost");
        assert!(log.lock().file.is_none(), "the log stops at its first error");
        let asked = r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission"}"#;
        assert_eq!(log.received_all(&[asked, asked]).await, None, "nothing written, nothing numbered");
        log.exited(Some(0), None, false).await;

        let text = std::fs::read_to_string(folder.path().join(EVENTS_FILE)).expect("the log");
        let read = read_log(&text);
        assert_eq!(read.problems, []);
        assert_eq!(
            read.entries.iter().map(|entry| &entry.event).collect::<Vec<_>>(),
            [&LogEvent::Stderr("before".to_owned())]
        );
    }
}
