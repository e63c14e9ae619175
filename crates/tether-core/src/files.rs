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

/// What a read is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadPurpose<T> {
    /// Lines for the agent, from the 0-based line `start`, at most `limit` of them.
    Lines { start: u64, limit: Option<u64> },
    /// The whole file, for the engine's own use `T` (review, conflict checks).
    Whole(T),
}

/// Where the host found the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadSource {
    Editor,
    Disk,
}

/// A finished read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadDone<T> {
    /// The agent's lines. `next_line` (1-based) is set when the answer stopped at the size cap.
    Lines { content: String, next_line: Option<u64> },
    /// The whole file.
    Whole { purpose: T, text: String, source: ReadSource },
    /// The file does not exist.
    NotFound { purpose: ReadPurpose<T> },
    /// Anything else: not UTF-8, too large, a directory, unreadable.
    Failed { purpose: ReadPurpose<T>, message: String },
}

/// What the engine should do after a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadProgress<T> {
    /// Ask the host for the next chunk.
    More { path: String, offset: u64, max_bytes: u64 },
    Done(ReadDone<T>),
}

#[derive(Debug)]
struct Read<T> {
    path: String,
    purpose: ReadPurpose<T>,
    /// The byte offset of the next chunk.
    offset: u64,
    /// For whole reads, the file so far; for line reads, the lines kept so far.
    kept: Vec<u8>,
    /// A line read reads on: the 0-based number of the line being read, its bytes so far (kept
    /// only when the line is wanted), and how many lines were kept.
    line: u64,
    partial: Vec<u8>,
    taken: u64,
    /// The line read stopped at the cap: the 0-based line it stopped before.
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
    pub fn start(&mut self, path: String, purpose: ReadPurpose<T>) -> (ReadId, ReadProgress<T>) {
        let id = self.next_id;
        self.next_id += 1;
        let request = ReadProgress::More { path: path.clone(), offset: 0, max_bytes: READ_CHUNK_BYTES };
        let read = Read { path, purpose, offset: 0, kept: Vec::new(), line: 0, partial: Vec::new(), taken: 0, cut_at: None };
        self.reads.insert(id, read);
        (id, request)
    }

    /// The host read `data` at the current offset; `eof` when the file ends there.
    /// `None` when the read is unknown (already finished or dropped).
    pub fn handle_data(&mut self, id: ReadId, data: &[u8], eof: bool, source: ReadSource) -> Option<ReadProgress<T>> {
        let mut read = self.reads.remove(&id)?;
        read.offset += data.len() as u64;
        let done = match &read.purpose {
            ReadPurpose::Whole(_) => {
                if read.offset > MAX_REVIEW_BYTES {
                    let message = format!("the file is larger than {} MiB", MAX_REVIEW_BYTES >> 20);
                    return Some(ReadProgress::Done(ReadDone::Failed { purpose: read.purpose, message }));
                }
                read.kept.extend_from_slice(data);
                false
            }
            &ReadPurpose::Lines { start, limit } => take_lines(&mut read, data, eof, start, limit),
        };
        if !done && !eof {
            let request = ReadProgress::More { path: read.path.clone(), offset: read.offset, max_bytes: READ_CHUNK_BYTES };
            self.reads.insert(id, read);
            return Some(request);
        }
        Some(ReadProgress::Done(finish(read, source)))
    }

    /// The host could not read the file.
    pub fn handle_error(&mut self, id: ReadId, not_found: bool, message: String) -> Option<ReadDone<T>> {
        let read = self.reads.remove(&id)?;
        Some(if not_found {
            ReadDone::NotFound { purpose: read.purpose }
        } else {
            ReadDone::Failed { purpose: read.purpose, message }
        })
    }

    /// Drops every read whose purpose `drop` selects (its requester went away).
    pub fn forget(&mut self, drop: impl Fn(&ReadPurpose<T>) -> bool) {
        self.reads.retain(|_, read| !drop(&read.purpose));
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

fn finish<T>(read: Read<T>, source: ReadSource) -> ReadDone<T> {
    match read.purpose {
        ReadPurpose::Whole(purpose) => match String::from_utf8(read.kept) {
            Ok(text) => ReadDone::Whole { purpose, text, source },
            Err(_) => ReadDone::Failed { purpose: ReadPurpose::Whole(purpose), message: "it is not UTF-8 text".to_owned() },
        },
        ReadPurpose::Lines { .. } => match String::from_utf8(read.kept) {
            Ok(content) => ReadDone::Lines { content, next_line: read.cut_at.map(|line| line + 1) },
            Err(_) => ReadDone::Failed { purpose: read.purpose, message: "it is not UTF-8 text".to_owned() },
        },
    }
}
