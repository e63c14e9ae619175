//! The agent's stdio: a thread that turns stdin into whole lines on a channel, and a writer
//! that puts whole, flushed lines on stdout.
//!
//! Reading happens on its own thread so the main loop can wait for "the next message or the
//! next timer, whichever comes first" with `recv_timeout`, which is what lets a
//! `session/cancel` interrupt a sleep or a slow stream promptly.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::thread;

/// The longest line accepted on stdin; longer lines are reported and skipped, not buffered.
pub const MAX_INPUT_LINE: usize = 64 * 1024 * 1024;

/// What the reader thread saw on stdin.
#[derive(Debug)]
pub enum Input {
    /// One line without its line terminator (`\n` or `\r\n`).
    Line(Vec<u8>),
    /// A line longer than [`MAX_INPUT_LINE`]; its bytes were dropped.
    TooLong { length: usize },
    /// The client closed stdin.
    Closed,
    /// Reading failed; nothing more will come.
    Failed(io::Error),
}

/// Starts the thread that reads `source` line by line; the receiver yields [`Input`]s in order
/// and ends with `Closed` or `Failed`.
pub fn spawn_reader(source: impl Read + Send + 'static) -> Receiver<Input> {
    let (sender, receiver) = mpsc::channel();
    thread::Builder::new()
        .name("stdin-reader".to_owned())
        .spawn(move || {
            let mut reader = BufReader::with_capacity(64 * 1024, source);
            loop {
                let input = match read_bounded_line(&mut reader, MAX_INPUT_LINE) {
                    Ok(Some(input)) => input,
                    Ok(None) => Input::Closed,
                    Err(error) => Input::Failed(error),
                };
                let last = matches!(input, Input::Closed | Input::Failed(_));
                if sender.send(input).is_err() || last {
                    // The main loop is gone (the process is exiting) or there is nothing left
                    // to read: either way this thread's work is done.
                    return;
                }
            }
        })
        .expect("spawning a thread at startup only fails when the system is out of resources");
    receiver
}

/// Reads one line, keeping at most `max` bytes of it; `None` at end of input.
fn read_bounded_line(reader: &mut impl BufRead, max: usize) -> io::Result<Option<Input>> {
    let mut line = Vec::new();
    let mut length = 0usize;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            // End of input: a last line without a newline still counts.
            return Ok(match length {
                0 => None,
                _ if length > max => Some(Input::TooLong { length }),
                _ => Some(Input::Line(strip_carriage_return(line))),
            });
        }
        let (taken, complete) = match available.iter().position(|&byte| byte == b'\n') {
            Some(index) => (index, true),
            None => (available.len(), false),
        };
        length += taken;
        if length <= max {
            line.extend_from_slice(&available[..taken]);
        } else {
            // Keep counting but stop storing: an oversized line must not exhaust memory.
            line = Vec::new();
        }
        reader.consume(taken + usize::from(complete));
        if complete {
            return Ok(Some(if length > max {
                Input::TooLong { length }
            } else {
                Input::Line(strip_carriage_return(line))
            }));
        }
    }
}

fn strip_carriage_return(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// Writes whole lines to stdout and flushes each, so a reader never sees half a message.
#[derive(Debug)]
pub struct Output {
    stdout: io::Stdout,
    /// `--record-stdout`: gets a copy of every byte written on stdout.
    record: Option<File>,
}

impl Output {
    pub fn new() -> Self {
        Self { stdout: io::stdout(), record: None }
    }

    /// Also appends everything written on stdout to the file at `path`.
    pub fn recording_to(path: &Path) -> io::Result<Self> {
        let record = File::options().create(true).append(true).open(path)?;
        Ok(Self { stdout: io::stdout(), record: Some(record) })
    }

    /// Writes `bytes` to stdout and to the record. The record is written first: a test that
    /// reads the record after seeing a line on the client's side finds the line there.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(record) = &mut self.record {
            record.write_all(bytes)?;
        }
        self.stdout.lock().write_all(bytes)
    }

    /// Writes one JSON message as a line.
    pub fn send(&mut self, message: &serde_json::Value) -> io::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.raw(&line)
    }

    /// Writes bytes as they are, adding a newline when they do not end with one so the next
    /// message still starts on its own line.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write(bytes)?;
        if bytes.last() != Some(&b'\n') {
            self.write(b"\n")?;
        }
        self.stdout.flush()
    }

    /// Writes a line of `length` `x` bytes in fixed-size pieces, so a 70 MB line costs 64 KiB
    /// of memory.
    pub fn long_line(&mut self, length: u64) -> io::Result<()> {
        static PIECE: [u8; 64 * 1024] = [b'x'; 64 * 1024];
        let mut remaining = length;
        while remaining > 0 {
            let size = usize::try_from(remaining).map_or(PIECE.len(), |left| left.min(PIECE.len()));
            self.write(&PIECE[..size])?;
            remaining -= size as u64;
        }
        self.write(b"\n")?;
        self.stdout.flush()
    }
}

/// The optional `--log` file: a trace of what the agent received and what it made of it, for
/// reading after a failed test.
#[derive(Debug)]
pub struct Trace {
    file: Option<File>,
}

/// Received lines longer than this are cut in the trace; the trace is for humans.
const TRACE_LINE_LIMIT: usize = 4096;

impl Trace {
    pub fn disabled() -> Self {
        Self { file: None }
    }

    pub fn append_to(path: &Path) -> io::Result<Self> {
        let file = File::options().create(true).append(true).open(path)?;
        Ok(Self { file: Some(file) })
    }

    /// Records a received line, shortened when it is long.
    pub fn received(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        if text.len() > TRACE_LINE_LIMIT {
            let mut cut = TRACE_LINE_LIMIT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.note(&format!("recv {}... ({} bytes)", &text[..cut], line.len()));
        } else {
            self.note(&format!("recv {text}"));
        }
    }

    /// Records one event.
    pub fn note(&mut self, text: &str) {
        if let Some(file) = &mut self.file {
            // The trace is a debugging aid: failing to write it must not change what the
            // agent does on the wire, so the error is dropped.
            let _ = writeln!(file, "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut seen = Vec::new();
        while let Some(input) = read_bounded_line(&mut reader, max).expect("reading a slice") {
            seen.push(match input {
                Input::Line(bytes) => format!("line {:?}", String::from_utf8_lossy(&bytes)),
                Input::TooLong { length } => format!("too long {length}"),
                other => format!("{other:?}"),
            });
        }
        seen
    }

    #[test]
    fn lines_are_split_on_newlines_with_crlf_and_a_final_partial_line() {
        assert_eq!(lines(b"one\r\ntwo\n\nthree", 100), ["line \"one\"", "line \"two\"", "line \"\"", "line \"three\""]);
    }

    #[test]
    fn an_oversized_line_is_reported_and_the_next_line_survives() {
        assert_eq!(lines(b"short\nthis line is too long\nok\n", 10), ["line \"short\"", "too long 21", "line \"ok\""]);
    }
}
