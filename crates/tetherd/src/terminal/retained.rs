//! The output a terminal keeps for `terminal/output`: the newest bytes up to a limit, cut at a
//! character boundary, and whether anything had to be dropped to stay within it.
//!
//! A command may print far more than the limit (a build log, a `yes`), so appending must cost the
//! same whatever has been printed before: the text lives in a ring (`VecDeque`), new text goes in
//! at the back and the oldest falls off the front, so that each byte is copied in once and
//! dropped once. Memory stays at about the limit, never a multiple of it.

use std::collections::VecDeque;

/// The retained output of one terminal.
#[derive(Debug)]
pub struct RetainedOutput {
    /// Always whole UTF-8 characters: text only ever enters whole, and leaves at a character
    /// boundary.
    bytes: VecDeque<u8>,
    limit: usize,
    truncated: bool,
}

impl RetainedOutput {
    /// An empty buffer that keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self { bytes: VecDeque::new(), limit, truncated: false }
    }

    /// Appends `text`, dropping the oldest output as needed to stay within the limit.
    pub fn push(&mut self, text: &str) {
        let text = if text.len() > self.limit {
            // Everything retained so far would fall off, and the start of `text` too.
            self.bytes.clear();
            self.truncated = true;
            &text[ceil_char_boundary(text, text.len() - self.limit)..]
        } else {
            text
        };
        let excess = (self.bytes.len() + text.len()).saturating_sub(self.limit);
        if excess > 0 {
            // Drop at least `excess` bytes, and then the rest of a character cut in two.
            let cut = (excess..self.bytes.len())
                .find(|&index| !is_continuation(self.bytes[index]))
                .unwrap_or(self.bytes.len());
            self.bytes.drain(..cut);
            self.truncated = true;
        }
        self.bytes.extend(text.as_bytes());
    }

    /// The retained text.
    pub fn text(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        let mut bytes = Vec::with_capacity(self.bytes.len());
        bytes.extend_from_slice(front);
        bytes.extend_from_slice(back);
        // The ring only ever holds whole characters (see `bytes`), so this is valid UTF-8; were
        // it not, a host still gets readable text rather than nothing.
        String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
    }

    /// Whether output was ever dropped to stay within the limit.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

/// Whether `byte` continues a UTF-8 character rather than starting one.
fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// The first character boundary of `text` at or after `index` (`text.len()` at the latest).
fn ceil_char_boundary(text: &str, index: usize) -> usize {
    (index..text.len()).find(|&index| text.is_char_boundary(index)).unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// Pushes `pushes` into a buffer of `limit` bytes; shows the retained text and `truncated`
    /// after each push.
    fn check(limit: usize, pushes: &[&str], expected: Expect) {
        let mut output = RetainedOutput::new(limit);
        let states: Vec<String> = pushes
            .iter()
            .map(|text| {
                output.push(text);
                let retained = output.text();
                assert!(retained.len() <= limit, "{retained:?} is over the limit of {limit}");
                format!("{retained:?} truncated={}", output.truncated())
            })
            .collect();
        expected.assert_eq(&states.join("\n"));
    }

    #[test]
    fn output_within_the_limit_is_kept_whole() {
        check(
            10,
            &["abc", "défg", ""],
            expect![[r#"
            "abc" truncated=false
            "abcdéfg" truncated=false
            "abcdéfg" truncated=false"#]],
        );
    }

    #[test]
    fn the_oldest_output_is_dropped_at_a_character_boundary() {
        // "é" is 2 bytes, "€" 3 and "😀" 4: a cut inside one of them drops it whole.
        check(
            10,
            &["aé€😀", "b", "c", "€"],
            expect![[r#"
            "aé€😀" truncated=false
            "é€😀b" truncated=true
            "€😀bc" truncated=true
            "😀bc€" truncated=true"#]],
        );
    }

    #[test]
    fn a_single_push_over_the_limit_keeps_its_tail() {
        check(
            10,
            &["xx", "aé€😀…z"],
            expect![[r#"
            "xx" truncated=false
            "😀…z" truncated=true"#]],
        );
        check(3, &["😀😀"], expect![[r#""" truncated=true"#]]);
    }

    #[test]
    fn a_zero_limit_keeps_nothing_but_says_so() {
        check(
            0,
            &["", "a"],
            expect![[r#"
            "" truncated=false
            "" truncated=true"#]],
        );
    }

    #[test]
    fn a_long_stream_keeps_exactly_its_newest_bytes() {
        let mut output = RetainedOutput::new(1000);
        let mut everything = String::new();
        for n in 0..10_000 {
            let piece = format!("{n}é");
            output.push(&piece);
            everything.push_str(&piece);
        }
        let retained = output.text();
        assert!(everything.ends_with(&retained));
        assert!(retained.len() > 1000 - 4 && retained.len() <= 1000, "{} bytes", retained.len());
    }
}
