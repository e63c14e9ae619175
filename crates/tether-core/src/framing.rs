//! NDJSON framing: bytes arriving in any chunking become whole lines, with bounded memory.
//!
//! Agents print one JSON message per line on stdout, and pipes deliver those bytes in whatever
//! pieces the operating system likes: half a line, three lines and a bit, one byte at a time.
//! [`LineFramer`] turns that stream back into lines. It never does IO; the caller pushes bytes in
//! with [`LineFramer::push`] and pulls lines out with [`LineFramer::next_line`], then calls
//! [`LineFramer::finish`] at the end of the stream for a last line that had no newline.
//!
//! The rules, chosen so that one bad line never costs the session:
//! - A line ends at `\n`; a `\r` right before it is part of the terminator, so CRLF works.
//! - Blank and whitespace-only lines are skipped (JSON-RPC has no use for them).
//! - A line longer than the maximum is reported once as [`FrameError::TooLong`] with its true
//!   length. Its bytes are counted and dropped as they stream in, so memory stays bounded by the
//!   maximum however long the line turns out to be, and framing goes on with the next line.
//! - A line that is not UTF-8 is reported as [`FrameError::InvalidUtf8`]; only that line is lost.
//!
//! Every byte is scanned once, and the buffer is compacted only when the lines in it have all
//! been taken, so the work is linear in the input whatever the chunking.

use std::collections::VecDeque;

use crate::sidecar::preview_of;

/// The longest line accepted by default: generous, because agents embed whole files in one
/// message, yet small enough that a runaway agent cannot exhaust memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Once a huge line has been taken, the buffer gives its capacity back down to this much, so one
/// large message does not pin tens of megabytes for the rest of the session.
const RETAINED_CAPACITY: usize = 64 * 1024;

/// Why a line could not be returned as text. Framing continues after either error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Longer than the maximum: its bytes were dropped (memory stays bounded while it streams in),
    /// and framing continues with the next line.
    #[error("a line of {len} bytes is longer than the maximum of {max} bytes and was dropped")]
    TooLong {
        /// The line's length in bytes, without its line terminator.
        len: u64,
        /// The maximum in force when the line arrived.
        max: usize,
    },
    /// Not UTF-8. `preview` = tether_core::sidecar::preview_of(bytes) (lossy start of the line).
    #[error("a line of {len} bytes is not valid UTF-8 (the first {valid_up_to} bytes are): {preview:?}")]
    InvalidUtf8 {
        /// The line's length in bytes, without its line terminator.
        len: u64,
        /// The start of the line, lossily decoded, so a person can see what was printed.
        preview: String,
        /// How many bytes at the start of the line are valid UTF-8.
        valid_up_to: usize,
    },
}

/// Something the framer has found in the stream and not yet handed out, in stream order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// A complete line whose bytes end (exclusive, terminator not stored) at this buffer offset;
    /// it starts where the previous line in the buffer ended.
    Line { end: usize },
    /// A complete line that was over the maximum; its bytes were never stored.
    TooLong { len: u64 },
}

/// What the framer is doing with the line that has started but not yet ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Partial {
    /// Its bytes are in the buffer from `partial_start` on.
    Buffering,
    /// It is already over the maximum: its bytes are counted, not stored.
    Discarding {
        /// Bytes seen so far, including a trailing `\r` that may turn out to be a terminator.
        len: u64,
        /// Whether the last byte seen was `\r`.
        ends_with_cr: bool,
    },
}

/// Splits a byte stream into lines. See the [module documentation](self) for the rules.
#[derive(Debug, Clone)]
pub struct LineFramer {
    max_line_bytes: usize,
    /// Complete lines not yet taken, back to back without terminators, then the partial line.
    buffer: Vec<u8>,
    /// Where the first line not yet taken starts in `buffer`.
    consumed: usize,
    /// Where the partial line starts in `buffer`.
    partial_start: usize,
    partial: Partial,
    found: VecDeque<Found>,
}

impl Default for LineFramer {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl LineFramer {
    /// A framer that rejects lines longer than `max_line_bytes` (terminator not counted).
    pub fn new(max_line_bytes: usize) -> Self {
        Self {
            max_line_bytes,
            buffer: Vec::new(),
            consumed: 0,
            partial_start: 0,
            partial: Partial::Buffering,
            found: VecDeque::new(),
        }
    }

    /// The longest line this framer returns, in bytes, without its terminator.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Feeds the next bytes of the stream. Lines they complete become available from
    /// [`next_line`](Self::next_line); call it until it returns `None` after each push so that
    /// complete lines do not pile up in the buffer.
    pub fn push(&mut self, bytes: &[u8]) {
        self.compact_if_idle();
        let mut rest = bytes;
        while !rest.is_empty() {
            // memchr reads a word at a time (SIMD where there is some): a streaming reply's
            // lines are short, and this scan sees every byte tetherd sends.
            match memchr::memchr(b'\n', rest) {
                Some(newline) => {
                    self.take_segment(&rest[..newline], true);
                    rest = &rest[newline + 1..];
                }
                None => {
                    self.take_segment(rest, false);
                    rest = &[];
                }
            }
        }
    }

    /// The next complete line (without its "\n" or "\r\n"); blank/whitespace-only lines are
    /// skipped.
    pub fn next_line(&mut self) -> Option<Result<String, FrameError>> {
        while let Some(found) = self.found.pop_front() {
            match found {
                Found::TooLong { len } => {
                    return Some(Err(FrameError::TooLong { len, max: self.max_line_bytes }));
                }
                Found::Line { end } => {
                    let start = std::mem::replace(&mut self.consumed, end);
                    if let Some(line) = decode_line(&self.buffer[start..end]) {
                        return Some(line);
                    }
                }
            }
        }
        self.compact_if_idle();
        None
    }

    /// At end of stream: the unterminated last line, if any (same rules).
    ///
    /// Lines still waiting to be taken come first, so calling `finish` until it returns `None`
    /// drains everything. Afterwards the framer is empty and could frame a new stream.
    pub fn finish(&mut self) -> Option<Result<String, FrameError>> {
        if let Some(line) = self.next_line() {
            return Some(line);
        }
        let partial = std::mem::replace(&mut self.partial, Partial::Buffering);
        let result = match partial {
            Partial::Discarding { len, ends_with_cr } => {
                Some(Err(FrameError::TooLong { len: len - u64::from(ends_with_cr), max: self.max_line_bytes }))
            }
            Partial::Buffering => decode_line(&self.buffer[self.partial_start..]),
        };
        self.buffer.clear();
        self.consumed = 0;
        self.partial_start = 0;
        self.shrink_after_large_line();
        result
    }

    /// Bytes held in memory: lines pushed but not yet taken, plus the partial line. Once
    /// [`next_line`](Self::next_line) has returned `None` this is just the partial line, which
    /// never exceeds the maximum (plus one byte for a `\r` that may start a CRLF).
    pub fn buffered_bytes(&self) -> usize {
        self.buffer.len() - self.consumed
    }

    /// Hands back what was pushed and not yet taken, as a stream again: each complete line with
    /// a `\n`, then the partial line. For a connection that changes what it carries after its
    /// first line (tetherd's MCP bridge), so that nothing read past that line is lost. Lines
    /// that were over the maximum were never stored and are not in it.
    pub fn into_remaining(mut self) -> Vec<u8> {
        let mut remaining = Vec::with_capacity(self.buffered_bytes() + self.found.len());
        while let Some(found) = self.found.pop_front() {
            if let Found::Line { end } = found {
                remaining.extend_from_slice(&self.buffer[self.consumed..end]);
                remaining.push(b'\n');
                self.consumed = end;
            }
        }
        if self.partial == Partial::Buffering {
            remaining.extend_from_slice(&self.buffer[self.partial_start..]);
        }
        remaining
    }

    /// Takes one piece of input that contains no newline; `terminated` says a newline followed it.
    fn take_segment(&mut self, segment: &[u8], terminated: bool) {
        match &mut self.partial {
            Partial::Discarding { len, ends_with_cr } => {
                *len += segment.len() as u64;
                if let Some(&last) = segment.last() {
                    *ends_with_cr = last == b'\r';
                }
                if terminated {
                    let len = *len - u64::from(*ends_with_cr);
                    self.found.push_back(Found::TooLong { len });
                    self.partial = Partial::Buffering;
                }
            }
            Partial::Buffering => {
                let held = &self.buffer[self.partial_start..];
                let total = held.len() + segment.len();
                let ends_with_cr = segment.last().or(held.last()) == Some(&b'\r');
                // A trailing `\r` may be the first half of a CRLF terminator, so it does not count
                // against the maximum; any other byte does. Length only grows, so a line over the
                // maximum now stays over it whatever comes next.
                let content_len = total - usize::from(ends_with_cr);
                if content_len > self.max_line_bytes {
                    self.buffer.truncate(self.partial_start);
                    if terminated {
                        self.found.push_back(Found::TooLong { len: content_len as u64 });
                    } else {
                        self.partial = Partial::Discarding { len: total as u64, ends_with_cr };
                    }
                } else {
                    self.buffer.extend_from_slice(segment);
                    if terminated {
                        self.found.push_back(Found::Line { end: self.buffer.len() });
                        self.partial_start = self.buffer.len();
                    }
                }
            }
        }
    }

    /// When every complete line has been taken, moves the partial line to the front of the
    /// buffer. Only the partial line moves, and it moves at most once per completed line before
    /// it, so the copying stays linear in the input.
    fn compact_if_idle(&mut self) {
        if self.found.is_empty() && self.consumed > 0 {
            self.buffer.drain(..self.consumed);
            self.partial_start -= self.consumed;
            self.consumed = 0;
            self.shrink_after_large_line();
        }
    }

    fn shrink_after_large_line(&mut self) {
        let wanted = self.buffer.len().max(RETAINED_CAPACITY);
        if self.buffer.capacity() > 4 * wanted {
            self.buffer.shrink_to(wanted);
        }
    }
}

/// A line's bytes (terminator not included, except possibly a `\r`) as text, or `None` for a
/// blank line.
fn decode_line(bytes: &[u8]) -> Option<Result<String, FrameError>> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(error) => Err(FrameError::InvalidUtf8 {
            len: bytes.len() as u64,
            preview: preview_of(bytes),
            valid_up_to: error.valid_up_to(),
        }),
    })
}
