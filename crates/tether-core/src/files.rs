//! Reading files for the agent and for review, in pieces: the engine asks the host for a file a
//! chunk at a time (from the open editor when the file is open there, unsaved edits included,
//! else from disk) and assembles what it needs.
//!
//! An agent's `fs/read_text_file` keeps only the lines it asked for (`line` is 1-based, `limit`
//! counts lines) and at most [`MAX_READ_RESPONSE_BYTES`] of them, so a file of any size is served
//! without holding it whole: past the cap the answer stops at a line boundary and says, in
//! `_meta.tether`, which line to ask for next. A file wanted whole (the original of a write, to
//! review it) is capped at [`MAX_REVIEW_BYTES`].

use std::collections::BTreeMap;

/// How much the host reads per request.
pub const READ_CHUNK_BYTES: u64 = 1 << 20;

/// The most text one `fs/read_text_file` answer carries; the agent asks again for the rest.
pub const MAX_READ_RESPONSE_BYTES: usize = 4 << 20;

/// The largest file Tether reviews line by line.
pub const MAX_REVIEW_BYTES: u64 = 16 << 20;

/// Identifies one read in progress; unique within an engine.
pub type ReadId = u64;

/// What a read keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Lines for the agent, from the 0-based line `start`, at most `limit` of them.
    Lines { start: u64, limit: Option<u64> },
    /// The whole file, for review and conflict checks.
    Whole,
}

/// A finished read, with the tag it was started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadDone<T> {
    /// The text read: the lines asked for, or the whole file. `next_line` (1-based) is set when a
    /// line read stopped at the size cap; `from_editor` when the text came from an open document.
    Text { tag: T, text: String, next_line: Option<u64>, from_editor: bool },
    /// The file does not exist.
    NotFound { tag: T },
    /// Anything else: not UTF-8, too large, a directory, unreadable.
    Failed { tag: T, message: String },
}

/// What the engine should do after a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadProgress<T> {
    /// Ask the host for the next chunk.
    More {
        path: String,
        offset: u64,
        max_bytes: u64,
    },
    Done(ReadDone<T>),
}

#[derive(Debug)]
struct Read<T> {
    path: String,
    mode: ReadMode,
    tag: T,
    /// The byte offset of the next chunk.
    offset: u64,
    /// For whole reads, the file so far; for line reads, the lines kept so far.
    kept: Vec<u8>,
    /// A line read reads on: the 0-based number of the line being read, its bytes so far (kept
    /// only when the line is wanted), and how many lines were kept.
    line: u64,
    partial: Vec<u8>,
    taken: u64,
    /// The line read stopped at the cap: the 0-based line to go on from.
    cut_at: Option<u64>,
}

/// The reads in progress.
#[derive(Debug)]
pub struct FileReads<T> {
    next_id: ReadId,
    reads: BTreeMap<ReadId, Read<T>>,
}

impl<T> FileReads<T> {
    pub fn new(first_id: ReadId) -> Self {
        FileReads { next_id: first_id, reads: BTreeMap::new() }
    }

    /// Starts a read; returns its id and the host request for its first chunk.
    pub fn start(&mut self, path: String, mode: ReadMode, tag: T) -> (ReadId, ReadProgress<T>) {
        let id = self.next_id;
        self.next_id += 1;
        let request = ReadProgress::More { path: path.clone(), offset: 0, max_bytes: READ_CHUNK_BYTES };
        let read =
            Read { path, mode, tag, offset: 0, kept: Vec::new(), line: 0, partial: Vec::new(), taken: 0, cut_at: None };
        self.reads.insert(id, read);
        (id, request)
    }

    /// The host read `data` at the current offset; `eof` when the file ends there.
    /// `None` when the read is unknown (already finished or dropped).
    pub fn handle_data(&mut self, id: ReadId, data: &[u8], eof: bool, from_editor: bool) -> Option<ReadProgress<T>> {
        let mut read = self.reads.remove(&id)?;
        read.offset += data.len() as u64;
        let done = match read.mode {
            ReadMode::Whole => {
                if read.offset > MAX_REVIEW_BYTES {
                    let message = format!("it is larger than {} MiB", MAX_REVIEW_BYTES >> 20);
                    return Some(ReadProgress::Done(ReadDone::Failed { tag: read.tag, message }));
                }
                read.kept.extend_from_slice(data);
                false
            }
            ReadMode::Lines { start, limit } => take_lines(&mut read, data, eof, start, limit),
        };
        // A chunk that brings nothing without saying the file ended would make the read ask
        // forever: it is taken as the end.
        if !done && !eof && !data.is_empty() {
            let request =
                ReadProgress::More { path: read.path.clone(), offset: read.offset, max_bytes: READ_CHUNK_BYTES };
            self.reads.insert(id, read);
            return Some(request);
        }
        Some(ReadProgress::Done(finish(read, from_editor)))
    }

    /// The host could not read the file.
    pub fn handle_error(&mut self, id: ReadId, not_found: bool, message: String) -> Option<ReadDone<T>> {
        let read = self.reads.remove(&id)?;
        Some(if not_found { ReadDone::NotFound { tag: read.tag } } else { ReadDone::Failed { tag: read.tag, message } })
    }
}

/// Feeds a chunk to a line read; returns whether the read has all it wants.
fn take_lines<T>(read: &mut Read<T>, data: &[u8], eof: bool, start: u64, limit: Option<u64>) -> bool {
    let wanted = |read: &Read<T>| read.line >= start && limit.is_none_or(|limit| read.taken < limit);
    let mut rest = data;
    loop {
        if limit.is_some_and(|limit| read.taken >= limit) || read.cut_at.is_some() {
            return true;
        }
        let (piece, complete) = match rest.iter().position(|&byte| byte == b'\n') {
            Some(end) => (&rest[..=end], true),
            None => (rest, false),
        };
        if wanted(read) {
            read.partial.extend_from_slice(piece);
        }
        rest = &rest[piece.len()..];
        let line_ends = complete || (eof && rest.is_empty() && !read.partial.is_empty());
        if wanted(read) && read.kept.len() + read.partial.len() > MAX_READ_RESPONSE_BYTES {
            // The first line alone is over the cap: it is cut (at a character boundary when the
            // text is UTF-8) rather than sent without any content.
            if read.kept.is_empty() {
                let mut cut = MAX_READ_RESPONSE_BYTES;
                while cut > 0 && (read.partial[cut] & 0xC0) == 0x80 {
                    cut -= 1;
                }
                read.kept.extend_from_slice(&read.partial[..cut]);
                read.cut_at = Some(read.line + 1);
            } else {
                read.cut_at = Some(read.line);
            }
            return true;
        }
        if line_ends {
            if wanted(read) {
                read.kept.append(&mut read.partial);
                read.taken += 1;
            }
            read.line += 1;
        }
        if rest.is_empty() {
            return eof;
        }
    }
}

fn finish<T>(read: Read<T>, from_editor: bool) -> ReadDone<T> {
    let next_line = read.cut_at.map(|line| line + 1);
    match String::from_utf8(read.kept) {
        Ok(text) => ReadDone::Text { tag: read.tag, text, next_line, from_editor },
        Err(_) => ReadDone::Failed { tag: read.tag, message: "it is not UTF-8 text".to_owned() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `file` to a read the way the host does, a chunk at a time.
    fn read(file: &[u8], mode: ReadMode) -> ReadDone<()> {
        let mut reads = FileReads::new(1);
        let (id, mut progress) = reads.start("/w/f".to_owned(), mode, ());
        loop {
            match progress {
                ReadProgress::More { offset, max_bytes, .. } => {
                    let start = (offset as usize).min(file.len());
                    let end = (start + max_bytes as usize).min(file.len());
                    progress = reads.handle_data(id, &file[start..end], end == file.len(), false).unwrap();
                }
                ReadProgress::Done(done) => return done,
            }
        }
    }

    fn text(done: ReadDone<()>) -> (String, Option<u64>) {
        match done {
            ReadDone::Text { text, next_line, .. } => (text, next_line),
            other => panic!("expected text, got {other:?}"),
        }
    }

    #[test]
    fn a_file_over_the_answer_cap_is_read_in_pieces_that_join_up_exactly() {
        let file: String = (0..600_000).map(|n| format!("line {n:06} é\n")).collect();
        assert!(file.len() > 2 * MAX_READ_RESPONSE_BYTES);
        let mut joined = String::new();
        let mut start = 0;
        let mut pieces = 0;
        loop {
            let (piece, next_line) = text(read(file.as_bytes(), ReadMode::Lines { start, limit: None }));
            assert!(piece.len() <= MAX_READ_RESPONSE_BYTES, "a piece of {} bytes", piece.len());
            assert!(piece.ends_with('\n'), "pieces end at line boundaries");
            joined.push_str(&piece);
            pieces += 1;
            match next_line {
                Some(line) => start = line - 1,
                None => break,
            }
        }
        assert_eq!(pieces, 3);
        assert_eq!(joined, file);
    }

    #[test]
    fn one_line_over_the_cap_is_cut_at_a_character_boundary() {
        let file = "é".repeat(MAX_READ_RESPONSE_BYTES) + "\nnext\n";
        let (piece, next_line) = text(read(file.as_bytes(), ReadMode::Lines { start: 0, limit: None }));
        assert!(piece.len() <= MAX_READ_RESPONSE_BYTES);
        assert!(piece.chars().all(|c| c == 'é'));
        assert_eq!(next_line, Some(2));
    }

    #[test]
    fn lines_and_limits_across_chunks_and_a_last_line_without_newline() {
        let file = "a\r\nb\nc";
        assert_eq!(text(read(file.as_bytes(), ReadMode::Lines { start: 1, limit: Some(5) })).0, "b\nc");
        assert_eq!(text(read(file.as_bytes(), ReadMode::Lines { start: 0, limit: Some(1) })).0, "a\r\n");
        assert_eq!(text(read(file.as_bytes(), ReadMode::Lines { start: 9, limit: None })).0, "");
    }

    #[test]
    fn a_whole_read_refuses_text_that_is_not_utf8_and_files_too_large_to_review() {
        assert!(matches!(read(&[0x66, 0xff, 0x0a], ReadMode::Whole), ReadDone::Failed { .. }));
        let huge = vec![b'x'; MAX_REVIEW_BYTES as usize + 1];
        match read(&huge, ReadMode::Whole) {
            ReadDone::Failed { message, .. } => assert_eq!(message, "it is larger than 16 MiB"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
