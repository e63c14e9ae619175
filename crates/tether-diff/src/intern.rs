//! Interning of tokens (lines or words) as small integer ids, so the diff compares integers rather
//! than text, and byte-level helpers that find where two texts start to differ.
//!
//! Hashing and looking up every line is most of the linear work of a large diff. std's `HashMap`
//! hashes with SipHash, which resists deliberate collisions but costs several milliseconds per
//! megabyte (more in WASM), and keeps its control bytes and entries apart, so each lookup in a
//! table too large for the cache misses it twice. Here each token is hashed once with a
//! word-at-a-time multiply-and-rotate hash, into a small open-addressing table whose slots hold
//! the id and part of the hash together; the text is only read to confirm a likely match.
//!
//! The hash is fixed, so a file crafted to collide could make interning slow (quadratic in the
//! number of colliding lines); it cannot make the diff wrong, since equal hashes are always
//! confirmed by comparing the text (or, up to eight bytes, by the hash alone, which is exact
//! there). A crafted file only slows its own diff, which is shown to the same person whose agent
//! wrote it, so speed on ordinary text wins.

/// Gives each distinct token a dense id (0, 1, 2, ... in order of first appearance).
#[derive(Default)]
pub(crate) struct Interner<'a> {
    /// Linear probing, at most half full, a power of two long. A slot is 0 when empty, otherwise
    /// the id plus one in its low 32 bits and the high 32 bits of the token's hash above.
    slots: Vec<u64>,
    /// Each id's token.
    tokens: Vec<Token<'a>>,
}

impl<'a> Interner<'a> {
    /// Room for about `tokens` distinct tokens without growing.
    pub(crate) fn with_capacity(tokens: usize) -> Self {
        Self { slots: vec![0; (2 * tokens).next_power_of_two().max(16)], tokens: Vec::with_capacity(tokens) }
    }

    /// The id of `token`, new if it was not seen before.
    pub(crate) fn intern(&mut self, token: &'a str) -> u32 {
        self.intern_hashed(token, hash_bytes(token.as_bytes()))
    }

    /// The id of `token`, whose [`hash_bytes`] the caller has computed already.
    fn intern_hashed(&mut self, text: &'a str, hash: u64) -> u32 {
        if 2 * (self.tokens.len() + 1) > self.slots.len() {
            self.grow();
        }
        let token = Token { hash, text };
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                // Ids stay below 2^32: WASM memory could not hold that many tokens.
                let id = self.tokens.len() as u32;
                self.tokens.push(token);
                self.slots[at] = (hash >> 32 << 32) | (u64::from(id) + 1);
                return id;
            }
            let id = (slot as u32).wrapping_sub(1);
            if slot >> 32 == hash >> 32 && self.tokens[id as usize] == token {
                return id;
            }
            at = (at + 1) & mask;
        }
    }

    /// Doubles the slots and places every token again, by its stored hash.
    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(16);
        let mask = len - 1;
        self.slots = vec![0; len];
        for (id, token) in self.tokens.iter().enumerate() {
            let mut at = token.hash as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = (token.hash >> 32 << 32) | (id as u64 + 1);
        }
    }

    /// Splits `text` into lines as [`crate::split_lines`] does, interning each, in a single pass
    /// over the bytes that finds the line ends and hashes the lines eight bytes at a time.
    pub(crate) fn intern_lines(&mut self, text: &'a str, lines: &mut Vec<&'a str>, ids: &mut Vec<u32>) {
        let mut start = 0;
        while start < text.len() {
            let (end, hash) = hash_line(text.as_bytes(), start);
            // Both ends are just after a newline or at an end of the text: character boundaries.
            let line = &text[start..end];
            lines.push(line);
            ids.push(self.intern_hashed(line, hash));
            start = end;
        }
    }

    /// As [`Self::intern_lines`], for a text whose lines mostly follow the lines of one interned
    /// already (`old`, with its `old_ids`) in the same order, as the new version of a file follows
    /// the old one. While they do, each line is recognised by comparing it with the old line
    /// expected next, an in-order comparison that is much cheaper than hashing the line and
    /// looking it up. At a line that differs, the line is hashed and looked up, and if it occurs
    /// exactly once in `old`, the expected line becomes the one after that.
    pub(crate) fn intern_lines_like(
        &mut self,
        text: &'a str,
        old: &[&str],
        old_ids: &[u32],
        lines: &mut Vec<&'a str>,
        ids: &mut Vec<u32>,
    ) {
        // Where each line of `old` occurs there, if it occurs once.
        const NOWHERE: usize = usize::MAX;
        const SEVERAL: usize = usize::MAX - 1;
        let mut only_at = vec![NOWHERE; self.len()];
        for (at, &id) in old_ids.iter().enumerate() {
            let slot = &mut only_at[id as usize];
            *slot = if *slot == NOWHERE { at } else { SEVERAL };
        }

        let bytes = text.as_bytes();
        let (mut start, mut expected) = (0, 0);
        while start < bytes.len() {
            if let Some(line) = old.get(expected).map(|line| line.as_bytes()) {
                let end = start + line.len();
                // The old line ends with a newline, or it is the last line of both texts.
                let whole = line.last() == Some(&b'\n') || end == bytes.len();
                if whole && bytes.get(start..end).is_some_and(|here| same_bytes(here, line)) {
                    lines.push(&text[start..end]);
                    ids.push(old_ids[expected]);
                    (start, expected) = (end, expected + 1);
                    continue;
                }
            }
            let (end, hash) = hash_line(bytes, start);
            let line = &text[start..end];
            let id = self.intern_hashed(line, hash);
            lines.push(line);
            ids.push(id);
            if let Some(&at) = only_at.get(id as usize).filter(|&&at| at < SEVERAL) {
                expected = at + 1;
            }
            start = end;
        }
    }

    /// How many distinct tokens have ids: every id is below this.
    pub(crate) fn len(&self) -> usize {
        self.tokens.len()
    }
}

/// A token with its hash computed once.
#[derive(Clone, Copy)]
struct Token<'a> {
    hash: u64,
    text: &'a str,
}

impl PartialEq for Token<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.text.as_bytes(), other.text.as_bytes());
        // Up to eight bytes, the hash is a bijection of the bytes for each length (one multiply
        // by an odd constant, then invertible steps), so equal hashes mean equal tokens. This
        // spares reading the other token's text, which sits wherever it first occurred and is
        // rarely in the cache: most words are that short.
        self.hash == other.hash && a.len() == b.len() && (a.len() <= 8 || same_bytes(a, b))
    }
}

/// Where the line starting at `start` ends (just after its newline, or at the end of the text),
/// and its [`hash_bytes`], found in one pass over its bytes, eight at a time.
fn hash_line(bytes: &[u8], start: usize) -> (usize, u64) {
    let mut hash = 0;
    let mut at = start;
    let end = loop {
        let Some(chunk) = bytes.get(at..at + 8) else {
            // Fewer than eight bytes are left: the line ends at a newline among them or at the end
            // of the text.
            let rest = &bytes[at..];
            let len = rest.iter().position(|&byte| byte == b'\n').map_or(rest.len(), |newline| newline + 1);
            if len > 0 {
                hash = mix(hash, word_of(&rest[..len]));
            }
            break at + len;
        };
        let word = word_of(chunk);
        let newlines = zero_bytes(word ^ NEWLINES);
        if newlines == 0 {
            hash = mix(hash, word);
            at += 8;
            continue;
        }
        // The lowest marked byte is the first newline (little-endian: memory order).
        let len = newlines.trailing_zeros() as usize / 8 + 1;
        hash = mix(hash, if len == 8 { word } else { word & ((1 << (8 * len)) - 1) });
        break at + len;
    };
    (end, finish(hash, end - start))
}

/// Whether two byte strings are equal, compared eight bytes at a time (WASM has no vectorised
/// `memcmp`).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && common_prefix_len(a, b) == a.len()
}

const MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;
const LOW_SEVEN_BITS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;

/// A fast 64-bit hash of some bytes: eight bytes at a time (the last ones padded with zeros)
/// through a rotation and a multiply (as rustc's FxHash), then the length and a final avalanche
/// (MurmurHash3's), so that both the low bits, which pick the bucket, and the high bits, which the
/// table keeps as a tag, depend on every input byte.
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut hash = 0;
    for chunk in &mut chunks {
        hash = mix(hash, word_of(chunk));
    }
    if !chunks.remainder().is_empty() {
        hash = mix(hash, word_of(chunks.remainder()));
    }
    finish(hash, bytes.len())
}

fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(23) ^ word).wrapping_mul(MULTIPLIER)
}

fn finish(hash: u64, len: usize) -> u64 {
    let mut hash = mix(hash, len as u64);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

/// Up to eight bytes as a little-endian word, missing bytes zero. Byte by byte, since copying a
/// slice of unknown length would call `memcpy`, which costs more than the loop for so few bytes.
fn word_of(bytes: &[u8]) -> u64 {
    if let Ok(word) = <[u8; 8]>::try_from(bytes) {
        return u64::from_le_bytes(word);
    }
    bytes.iter().rev().fold(0, |word, &byte| (word << 8) | u64::from(byte))
}

/// The top bit of each byte of `word` that is zero, and no other bit. (The shorter
/// `(x - 0x01..) & !x & 0x80..` also marks some bytes after a zero one.)
fn zero_bytes(word: u64) -> u64 {
    !(((word & LOW_SEVEN_BITS) + LOW_SEVEN_BITS) | word | LOW_SEVEN_BITS)
}

/// How many `\n` bytes there are in `bytes`, counted eight at a time.
pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(8);
    let mut count = 0;
    for chunk in &mut chunks {
        count += zero_bytes(word_of(chunk) ^ NEWLINES).count_ones() as usize;
    }
    count + chunks.remainder().iter().filter(|&&byte| byte == b'\n').count()
}

/// How many leading bytes two byte strings share, compared eight bytes at a time.
pub(crate) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let words = a.chunks_exact(8).zip(b.chunks_exact(8)).take_while(|(x, y)| word_of(x) == word_of(y)).count();
    let at = words * 8;
    at + a[at..].iter().zip(&b[at..]).take_while(|(x, y)| x == y).count()
}

/// How many trailing bytes two byte strings share, compared eight bytes at a time.
pub(crate) fn common_suffix_len(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[a.len() - len..], &b[b.len() - len..]);
    let words = a.rchunks_exact(8).zip(b.rchunks_exact(8)).take_while(|(x, y)| word_of(x) == word_of(y)).count();
    let at = len - words * 8;
    words * 8 + a[..at].iter().rev().zip(b[..at].iter().rev()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_tokens_share_an_id_and_others_do_not() {
        let mut interner = Interner::default();
        let text = "a\nb\na\n\nb\na\r\n";
        let ids: Vec<u32> = text.split_inclusive('\n').map(|line| interner.intern(line)).collect();
        assert_eq!(ids, vec![0, 1, 0, 2, 1, 3]);
        assert_eq!(interner.len(), 4);
    }

    #[test]
    fn lines_interned_in_one_pass_match_split_lines_and_hash_bytes() {
        // Every line length around the eight-byte words, at every offset, with and without a
        // final newline, CRLF and multi-byte text.
        let mut text = String::new();
        for len in 0..20 {
            text.push_str(&"é".repeat(len % 3));
            text.push_str(&"x".repeat(len));
            text.push_str(if len % 4 == 3 { "\r\n" } else { "\n" });
        }
        for cut in 0..text.len() {
            if !text.is_char_boundary(cut) {
                continue;
            }
            let text = &text[cut..];
            for text in [text, text.trim_end_matches('\n')] {
                let mut interner = Interner::default();
                let (mut lines, mut ids) = (Vec::new(), Vec::new());
                interner.intern_lines(text, &mut lines, &mut ids);
                assert_eq!(lines, text.split_inclusive('\n').collect::<Vec<_>>());
                let mut again = Interner::default();
                let expected: Vec<u32> = lines.iter().map(|line| again.intern(line)).collect();
                assert_eq!(ids, expected, "lines interned in one pass are the lines interned one by one");
            }
        }
    }

    #[test]
    fn lines_interned_like_an_old_text_get_the_same_ids() {
        let old = "a\n}\nb\nc\n}\nd\ne\nf\n}\nlast";
        let news = [
            old,
            "a\n}\nb\nX\nc\n}\nd\ne\nf\n}\nlast",
            "a\n}\nc\n}\nd\nf\n}\nlast\n",
            "}\n}\n}\nf\ne\nd\nc\nb\na\nlas",
            "",
            "a\n}\nb\nc\n}\nd\ne\nf\n}\nla",
            "new\nlines\nonly\n",
        ];
        for new in news {
            let mut plain = Interner::default();
            let (mut old_lines, mut old_ids, mut lines, mut ids) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            plain.intern_lines(old, &mut old_lines, &mut old_ids);
            plain.intern_lines(new, &mut lines, &mut ids);

            let mut like = Interner::default();
            let (mut old_lines, mut old_ids, mut lines_like, mut ids_like) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            like.intern_lines(old, &mut old_lines, &mut old_ids);
            like.intern_lines_like(new, &old_lines, &old_ids, &mut lines_like, &mut ids_like);
            assert_eq!((lines_like, ids_like), (lines, ids), "{new:?}");
        }
    }

    #[test]
    fn newlines_are_counted_exactly() {
        // A newline followed by 0x0b is what the shorter zero-byte trick counts twice.
        for text in ["", "\n", "a\n\x0b\n\x0b\x0b\n\n\n\n\n\n\n\nz", "\n\x0b\n\x0b\n\x0b\n\x0b"] {
            assert_eq!(count_newlines(text.as_bytes()), text.matches('\n').count(), "{text:?}");
        }
    }

    #[test]
    fn common_ends_are_found_across_word_boundaries() {
        let a = b"0123456789abcdefXYZ";
        let b = b"0123456789abcdefXYz";
        assert_eq!(common_prefix_len(a, b), 18);
        assert_eq!(common_suffix_len(a, b), 0);
        assert_eq!(common_prefix_len(b"same length text", b"same length text"), 16);
        assert_eq!(common_suffix_len(b"1234567890 tail end", b"x tail end"), 9);
        assert_eq!(common_suffix_len(b"abc", b""), 0);
        assert_eq!(common_prefix_len(b"", b"abc"), 0);
        assert_eq!(common_suffix_len(b"long common ending!", b"long common ending!"), 19);
    }
}
