//! A terminal's output as its pump hands it to the hosts: decoded as UTF-8, kept for
//! `terminal/output`, gathered and encoded as `terminal/data` lines.
//!
//! Each read is decoded and encoded into the line being gathered as it comes, so that the line is
//! written straight as JSON text, in one buffer sized for it: the text is copied once on its way
//! (escaped), where a `String` of the whole output serialized by serde costs a copy per step and
//! a buffer that grows by doubling.

use std::sync::Arc;

#[cfg(doc)]
use tether_core::sidecar::TerminalData;
use tether_core::sidecar::{TerminalId, method};
use tokio::time::Instant;

use super::utf8_stream::Utf8Stream;
use super::{COALESCE_MAX_BYTES, FLOOD_READ_BYTES, FLOOD_WAIT, READ_CHUNK_BYTES, Terminal};

/// A terminal's output on its way to the hosts.
pub struct OutputLines {
    /// Where the output is retained for `terminal/output`.
    terminal: Arc<Terminal>,
    decoder: Utf8Stream,
    /// The line being gathered, and how many bytes read from the PTY are in it (or held back in
    /// the decoder as the start of a character).
    line: DataLine,
    gathered: usize,
    /// When the last line was taken.
    last_line: Option<Instant>,
}

impl OutputLines {
    pub fn new(terminal: Arc<Terminal>) -> Self {
        let line = DataLine::new(terminal.id);
        Self { terminal, decoder: Utf8Stream::default(), line, gathered: 0, last_line: None }
    }

    /// Adds what one read of the PTY gave.
    pub fn add(&mut self, bytes: &[u8]) {
        self.gathered += bytes.len();
        // A line that starts a flood gets room for as much as one line carries, and the read
        // that crosses the mark; anything else, for itself.
        let expected = if self.is_flood() { COALESCE_MAX_BYTES + READ_CHUNK_BYTES } else { bytes.len() };
        let text = self.decoder.decode(bytes);
        add_text(&mut self.line, &self.terminal, &text, expected);
    }

    /// Whether the command is printing faster than it is read, so that more is worth waiting
    /// for (see [`FLOOD_READ_BYTES`]).
    pub fn is_flood(&self) -> bool {
        self.gathered >= FLOOD_READ_BYTES || self.last_line.is_some_and(|taken| taken.elapsed() < FLOOD_WAIT)
    }

    /// Whether the line being gathered is as long as a line gets ([`COALESCE_MAX_BYTES`]).
    pub fn is_full(&self) -> bool {
        self.gathered >= COALESCE_MAX_BYTES
    }

    /// The line gathered so far (without its newline); `None` when it has no text yet (nothing
    /// was read, or only the start of a character).
    pub fn take_line(&mut self) -> Option<String> {
        self.gathered = 0;
        let line = self.line.take()?;
        self.last_line = Some(Instant::now());
        Some(line)
    }

    /// The end of the output: the line with what is left, a character it left unfinished as
    /// U+FFFD.
    pub fn finish(&mut self) -> Option<String> {
        let rest = self.decoder.finish();
        add_text(&mut self.line, &self.terminal, &rest, rest.len());
        self.take_line()
    }
}

/// Retains `text` and adds it to `line` (see [`DataLine::push`] for `expected`).
fn add_text(line: &mut DataLine, terminal: &Terminal, text: &str, expected: usize) {
    if text.is_empty() {
        return;
    }
    terminal.lock_output().retained.push(text);
    line.push(text, expected);
}

/// A `terminal/data` notification being written: the JSON-RPC envelope of
/// `tether_core::jsonrpc::encode_notification` with [`TerminalData`] as its params, written by
/// hand so that the text can go in piece by piece.
struct DataLine {
    terminal_id: TerminalId,
    /// Empty, or the line up to and including what has been added to its `data` string.
    json: String,
}

impl DataLine {
    fn new(terminal_id: TerminalId) -> Self {
        Self { terminal_id, json: String::new() }
    }

    /// Adds `text` to the line; a line that starts with it gets room for `expected` bytes of
    /// text, and the escapes of a CR LF every 8 characters or more.
    fn push(&mut self, text: &str, expected: usize) {
        if self.json.is_empty() {
            self.json.reserve(expected + expected / 4 + 96);
            self.json.push_str(r#"{"jsonrpc":"2.0","method":""#);
            self.json.push_str(method::TERMINAL_DATA);
            self.json.push_str(r#"","params":{"terminalId":"#);
            self.json.push_str(&self.terminal_id.to_string());
            self.json.push_str(r#","data":""#);
        }
        push_json_string_contents(&mut self.json, text);
    }

    /// The finished line (without its newline), if anything was added since the last one.
    fn take(&mut self) -> Option<String> {
        if self.json.is_empty() {
            return None;
        }
        self.json.push_str(r#""}}"#);
        Some(std::mem::take(&mut self.json))
    }
}

/// For each byte, what follows the backslash of its escape in a JSON string (`u` for the
/// `\u00XX` form), or 0 when it goes in as it is.
const JSON_ESCAPES: [u8; 256] = {
    let mut escapes = [0; 256];
    let mut byte = 0;
    while byte < 0x20 {
        escapes[byte] = b'u';
        byte += 1;
    }
    escapes[0x08] = b'b';
    escapes[0x09] = b't';
    escapes[0x0a] = b'n';
    escapes[0x0c] = b'f';
    escapes[0x0d] = b'r';
    escapes[b'"' as usize] = b'"';
    escapes[b'\\' as usize] = b'\\';
    escapes
};

/// Appends `text` as the inside of a JSON string, escaped as serde_json escapes it: `"`, `\` and
/// the control characters, with the short escapes where JSON has them.
///
/// This is the one pass over every byte of a command's output, so it is written for speed: a
/// table lookup per byte, and a terminal's line ending (CR LF) escaped in one go. On `seq`'s
/// output (a CR LF every few characters) it takes about half the time serde_json does.
fn push_json_string_contents(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + bytes.len() / 4);
    let mut start = 0;
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let escape = JSON_ESCAPES[usize::from(byte)];
        if escape == 0 {
            index += 1;
            continue;
        }
        // `index` is at an ASCII byte, so both slices end on character boundaries.
        out.push_str(&text[start..index]);
        if escape == b'r' && bytes.get(index + 1) == Some(&b'\n') {
            out.push_str("\\r\\n");
            index += 1;
        } else if escape == b'u' {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        } else {
            out.push('\\');
            out.push(char::from(escape));
        }
        index += 1;
        start = index;
    }
    out.push_str(&text[start..]);
}

#[cfg(test)]
mod tests {
    use tether_core::jsonrpc::{Message, parse_message, parse_params};
    use tether_core::sidecar::TerminalData;

    use super::*;

    /// Text with every kind of character JSON treats differently, and some that UTF-8 does.
    const AWKWARD: &str =
        "plain \"quoted\" back\\slash\r\n\t\u{8}\u{c}\u{0}\u{1f}\u{1b}[31mred\u{7f} é€😀 \u{2028} \r\r\n\n\r";

    #[test]
    fn escaping_is_serde_jsons() {
        let every_ascii_character: String = (0..=0x7f_u8).map(char::from).collect();
        for text in [AWKWARD, &every_ascii_character, "", "no escapes at all", "\r\n", "\r"] {
            let mut escaped = String::from("\"");
            push_json_string_contents(&mut escaped, text);
            escaped.push('"');
            assert_eq!(escaped, serde_json::to_string(text).expect("a string encodes"), "{text:?}");
        }
    }

    #[test]
    fn a_line_gathered_piece_by_piece_is_the_notification_of_the_whole_text() {
        let pieces = ["first piece\r\n", AWKWARD, "", "a", "b", "last"];
        let mut line = DataLine::new(42);
        assert_eq!(line.take(), None, "nothing added, no line");
        for piece in pieces {
            line.push(piece, piece.len());
        }
        let json = line.take().expect("a line");
        assert_eq!(line.take(), None, "taken");

        let Ok(Message::Notification { method, params }) = parse_message(&json) else {
            panic!("not a notification: {json}");
        };
        assert_eq!(method, method::TERMINAL_DATA);
        let data: TerminalData = parse_params(params).expect("terminal/data params");
        assert_eq!(data, TerminalData { terminal_id: 42, data: pieces.concat() });
    }
}
