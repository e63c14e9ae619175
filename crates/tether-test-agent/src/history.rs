//! Sessions kept on disk, so that a restarted agent can load one (`session/load`), as real
//! agents do from their own stores.
//!
//! With `--state-dir DIR`, every `session/update` the agent sends, and every prompt it receives
//! (as a `user_message_chunk`), is appended to `DIR/<session id>.jsonl`, one update per line.
//! Loading a session sends the same updates again, in order: what ACP's `session/load` asks of
//! an agent (replay the conversation as updates, then answer).
//!
//! A fork (`session/fork`) starts as a copy of its source's file, so loading the fork replays
//! the conversation it was forked from, followed by its own.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::SessionUpdate;

/// The folder of stored sessions.
#[derive(Debug, Clone)]
pub struct History {
    dir: PathBuf,
}

impl History {
    pub fn open(dir: &Path) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        Ok(Self { dir: dir.to_path_buf() })
    }

    /// How many sessions are stored: new ids continue after them, so a restarted agent never
    /// reuses one.
    pub fn count(&self) -> usize {
        fs::read_dir(&self.dir).map(|entries| entries.filter_map(Result::ok).count()).unwrap_or(0)
    }

    fn file(&self, session_id: &str) -> PathBuf {
        // Session ids are the agent's own (`test-session-N`), but the ones `session/load` and
        // `session/fork` name come from the client: separators are replaced so that an id never
        // reaches outside the folder.
        self.dir.join(format!("{}.jsonl", session_id.replace(['/', '\\'], "_")))
    }

    /// Starts an empty history for a new session.
    pub fn create(&self, session_id: &str) -> io::Result<()> {
        fs::write(self.file(session_id), "")
    }

    /// Whether a session with this id is stored, so that a new id never takes over its file.
    pub fn contains(&self, session_id: &str) -> bool {
        self.file(session_id).exists()
    }

    /// Starts the history of a fork: a copy of the source's when the source is stored, else an
    /// empty one (a source this folder never saw has nothing to copy). Returns whether the
    /// source was stored.
    pub fn fork(&self, source_id: &str, fork_id: &str) -> io::Result<bool> {
        match fs::copy(self.file(source_id), self.file(fork_id)) {
            Ok(_) => Ok(true),
            Err(error) if error.kind() == io::ErrorKind::NotFound => self.create(fork_id).map(|()| false),
            Err(error) => Err(error),
        }
    }

    pub fn append(&self, session_id: &str, update: &SessionUpdate) -> io::Result<()> {
        let mut line = serde_json::to_string(update).map_err(io::Error::other)?;
        line.push('\n');
        OpenOptions::new().append(true).open(self.file(session_id))?.write_all(line.as_bytes())
    }

    /// The stored updates of a session, or `None` when there is no such session.
    pub fn load(&self, session_id: &str) -> io::Result<Option<Vec<SessionUpdate>>> {
        let text = match fs::read_to_string(self.file(session_id)) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let updates = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).map_err(io::Error::other))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Some(updates))
    }
}
