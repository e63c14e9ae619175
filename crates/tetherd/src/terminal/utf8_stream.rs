//! Decoding a terminal's output bytes as UTF-8, one read at a time.
//!
//! A PTY read ends wherever the kernel's buffer did, often in the middle of a multi-byte
//! character; decoding each read on its own would turn both halves into U+FFFD. The decoder keeps
//! an incomplete trailing sequence until the next read completes it (or shows it was never going
//! to be valid), and turns bytes that are not UTF-8 into U+FFFD, as many as
//! [`String::from_utf8_lossy`] would. No input makes it panic.

use std::borrow::Cow;

/// The longest UTF-8 sequence; an incomplete one is always shorter.
const MAX_SEQUENCE_BYTES: usize = 4;

/// Decodes a stream of bytes to text, read by read.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    /// The start of a character whose remaining bytes have not been read yet (at most 3 bytes).
    incomplete: Vec<u8>,
}

impl Utf8Stream {
    /// Decodes the next bytes of the stream; an incomplete character at their end is held back
    /// for the next call. Bytes that are all UTF-8 (the usual case) are borrowed, not copied.
    pub fn decode<'a>(&mut self, bytes: &'a [u8]) -> Cow<'a, str> {
        if self.incomplete.is_empty() {
            return self.decode_joined(bytes);
        }
        // Only the few bytes that can complete the held-back character are joined to it, so that
        // a long read is not copied just because the previous one ended mid-character.
        let joined_len = bytes.len().min(MAX_SEQUENCE_BYTES);
        let mut joined = std::mem::take(&mut self.incomplete);
        let held_back = joined.len();
        joined.extend_from_slice(&bytes[..joined_len]);
        let (consumed, mut text) = decode_prefix(&joined);
        if consumed < held_back {
            // Even with the new bytes there is not a whole character yet (the read was tiny).
            self.incomplete = joined[consumed..].to_vec();
            return Cow::Owned(text);
        }
        let rest = &bytes[consumed - held_back..];
        text.push_str(&self.decode_joined(rest));
        Cow::Owned(text)
    }

    /// Ends the stream: a character that was never completed becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        let incomplete = std::mem::take(&mut self.incomplete);
        String::from_utf8_lossy(&incomplete).into_owned()
    }

    /// Decodes `bytes`, with nothing held back before them, keeping an incomplete end.
    fn decode_joined<'a>(&mut self, bytes: &'a [u8]) -> Cow<'a, str> {
        let (valid, incomplete) = match std::str::from_utf8(bytes) {
            Ok(text) => (text, &[][..]),
            // Valid but for a character that has not been read to its end.
            Err(error) if error.error_len().is_none() => {
                let (valid, incomplete) = bytes.split_at(error.valid_up_to());
                // `valid_up_to` marks the end of a valid prefix, so this cannot fail; the empty
                // fallback only keeps a broken promise from becoming a panic.
                (std::str::from_utf8(valid).unwrap_or_default(), incomplete)
            }
            Err(_) => {
                let (consumed, text) = decode_prefix(bytes);
                self.incomplete = bytes[consumed..].to_vec();
                return Cow::Owned(text);
            }
        };
        self.incomplete = incomplete.to_vec();
        Cow::Borrowed(valid)
    }
}

/// Decodes as much of `bytes` as can be decoded now: everything but an incomplete character at
/// the very end. Returns how many bytes that took, and the text.
fn decode_prefix(bytes: &[u8]) -> (usize, String) {
    let mut text = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                return (bytes.len(), text);
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                // `valid_up_to` marks the end of a valid prefix, so this cannot fail; the empty
                // fallback only keeps a broken promise from becoming a panic.
                text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match error.error_len() {
                    // The bytes at the end could still become a character.
                    None => return (bytes.len() - after.len(), text),
                    Some(invalid) => {
                        text.push(char::REPLACEMENT_CHARACTER);
                        rest = &after[invalid..];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// Decodes `reads` one after the other, then finishes; shows what each call returned.
    fn check(reads: &[&[u8]], expected: Expect) {
        let mut stream = Utf8Stream::default();
        let mut outputs: Vec<String> = reads.iter().map(|read| stream.decode(read).into_owned()).collect();
        outputs.push(stream.finish());
        expected.assert_eq(&format!("{outputs:?}"));
    }

    #[test]
    fn whole_text_passes_through() {
        check(
            &[b"plain \x1b[31mred\x1b[0m", "é€😀".as_bytes()],
            expect![[r#"["plain \u{1b}[31mred\u{1b}[0m", "é€😀", ""]"#]],
        );
    }

    #[test]
    fn a_character_split_between_reads_arrives_whole() {
        // "€" is E2 82 AC and "😀" is F0 9F 98 80.
        check(&[b"a\xe2", b"\x82\xacb"], expect![[r#"["a", "€b", ""]"#]]);
        check(&[b"\xf0", b"\x9f", b"\x98", b"\x80!"], expect![[r#"["", "", "", "😀!", ""]"#]]);
        check(&[b"\xf0\x9f\x98", b"\x80"], expect![[r#"["", "😀", ""]"#]]);
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        check(&[b"\xff\xfeok"], expect![[r#"["��ok", ""]"#]]);
        // A character cut short by a byte that cannot continue it.
        check(&[b"\xe2\x82", b"x"], expect![[r#"["", "�x", ""]"#]]);
        check(&[b"\xe2", b"\xff\x82"], expect![[r#"["", "���", ""]"#]]);
        // Surrogates and over-long encodings are not UTF-8 either.
        check(&[b"\xed\xa0\x80|\xc0\xaf"], expect![[r#"["���|��", ""]"#]]);
    }

    #[test]
    fn a_character_never_completed_becomes_one_replacement_character_at_the_end() {
        check(&[b"ok\xf0\x9f"], expect![[r#"["ok", "�"]"#]]);
    }

    #[test]
    fn any_split_of_any_bytes_decodes_like_the_whole() {
        let samples: [&[u8]; 4] =
            [b"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", b"\xff\xfe\xe2\x82\xf0\x9f", b"\xed\xa0\x80\xc0\xaf\x80", b""];
        for sample in samples {
            let whole = String::from_utf8_lossy(sample);
            for first in 0..=sample.len() {
                for second in first..=sample.len() {
                    let mut stream = Utf8Stream::default();
                    let mut text = stream.decode(&sample[..first]).into_owned();
                    text.push_str(&stream.decode(&sample[first..second]));
                    text.push_str(&stream.decode(&sample[second..]));
                    text.push_str(&stream.finish());
                    assert_eq!(text, whole, "{sample:?} split at {first} and {second}");
                }
            }
        }
    }
}
