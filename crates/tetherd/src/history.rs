//! The session history: listing, reading, renaming and deleting the session folders under a
//! workspace's `<tetherDir>/sessions/` (`session/list`, `session/read`, `session/rename`,
//! `session/delete`), and writing each folder's `meta.json`.
//!
//! Everything here does file I/O and blocks; the connection runs it on a blocking thread. Every
//! folder a host names is checked to be a direct child of `<tetherDir>/sessions/` once both are
//! resolved (symbolic links and `..` included), so a host cannot use these requests to read or
//! delete anything else on disk. The `.tether` folder, its `sessions/` and the session folders
//! must be real folders, not symbolic links, and files in them are read without following a link
//! (see [`crate::session`]): a repository that commits a `.tether` folder cannot point tetherd
//! at a file elsewhere.

use std::fmt;
use std::fs::File;
use std::io::{BufRead as _, BufReader, ErrorKind, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::value::RawValue;
use tether_core::claude_cli;
use tether_core::jsonrpc::{ErrorCode, Message, RequestId, RpcError, parse_message};
use tether_core::session_log::{EVENTS_FILE, LogEvent, UNTITLED_SESSION, prompt_title, read_log};
use tether_core::sidecar::{
    AgentId, SESSION_META_FILE, SESSION_READ_CHUNK_BYTES, SessionMeta, SessionReadResult, SessionSummary, error_code,
};

use crate::session::{open_session_file, private_file_options, read_session_file};

/// The folder inside the `.tether` folder that holds one folder per session.
pub const SESSIONS_FOLDER: &str = "sessions";

/// The longest title `session/rename` accepts, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// Why a history request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryError {
    /// The parameters cannot be right whatever is on disk (an empty title).
    InvalidParams(String),
    /// The folder is not a session folder of this `.tether` folder, its agent still runs, or the
    /// disk said no; the message says which, for a person.
    Failed(String),
}

impl HistoryError {
    /// The JSON-RPC error the host gets.
    pub fn to_rpc_error(&self) -> RpcError {
        match self {
            Self::InvalidParams(message) => {
                RpcError::new(ErrorCode::InvalidParams.into(), format!("Invalid params: {message}"))
            }
            Self::Failed(message) => RpcError::new(error_code::SESSION_FAILED, message.clone()),
        }
    }
}

impl fmt::Display for HistoryError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidParams(message) | Self::Failed(message) => formatter.write_str(message),
        }
    }
}

/// Writes `meta` as the folder's `meta.json`, replacing any earlier one in one step: the file is
/// written in full under a temporary name (owner-only) and then renamed over the old one, so a
/// reader (or a crash) never sees half a file.
pub fn write_meta(session_dir: &Path, meta: &SessionMeta) -> std::io::Result<()> {
    /// Tells apart the temporary files of two writes at once in the same tetherd.
    static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(1);
    let text = serde_json::to_string_pretty(meta).map_err(std::io::Error::other)? + "\n";
    let serial = NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed);
    let temporary = session_dir.join(format!(".{SESSION_META_FILE}.{}-{serial}.tmp", std::process::id()));
    let written = private_file_options()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_data()))
        .and_then(|()| std::fs::rename(&temporary, session_dir.join(SESSION_META_FILE)));
    if written.is_err()
        && let Err(error) = std::fs::remove_file(&temporary)
        && error.kind() != ErrorKind::NotFound
    {
        tracing::warn!(path = %temporary.display(), %error, "cannot remove a temporary meta.json");
    }
    written
}

/// Reads a session folder's `meta.json`.
fn read_meta(session_dir: &Path) -> Result<SessionMeta, String> {
    let path = session_dir.join(SESSION_META_FILE);
    let bytes = read_session_file(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|error| format!("{} is not a session's meta.json: {error}", path.display()))
}

/// `session/list`: every session folder of `tether_dir` with a readable `meta.json`, newest
/// first. `live` holds the session folders of the running agents. A `.tether` folder (or its
/// `sessions/`) that does not exist yet has no sessions.
pub fn list(tether_dir: &Path, live: &[(AgentId, PathBuf)]) -> Result<Vec<SessionSummary>, HistoryError> {
    let sessions = real_tether_dir(tether_dir)?.join(SESSIONS_FOLDER);
    refuse_link(&sessions)?;
    let entries = match std::fs::read_dir(&sessions) {
        Ok(entries) => entries,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(HistoryError::Failed(format!("cannot list {}: {error}", sessions.display()))),
    };
    // Compared resolved, since the host may name the `.tether` folder by another path than the
    // one the agent was spawned with.
    let live: Vec<(AgentId, PathBuf)> =
        live.iter().filter_map(|(agent_id, dir)| Some((*agent_id, std::fs::canonicalize(dir).ok()?))).collect();
    let mut summaries = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|error| HistoryError::Failed(format!("cannot list {}: {error}", sessions.display())))?;
        let dir = sessions.join(entry.file_name());
        // Only real folders: a symbolic link may lead out of `sessions/` (or to a session
        // already listed under its own name).
        if !entry.file_type().is_ok_and(|file_type| file_type.is_dir()) {
            tracing::debug!(path = %dir.display(), "skipping an entry that is not a folder");
            continue;
        }
        let Some(dir_text) = dir.to_str().map(str::to_owned) else {
            tracing::debug!(path = %dir.display(), "skipping a session folder whose path is not UTF-8");
            continue;
        };
        let meta = match read_meta(&dir) {
            Ok(meta) => meta,
            Err(message) => {
                tracing::debug!(path = %dir.display(), message, "skipping a folder that is not a session");
                continue;
            }
        };
        let canonical = std::fs::canonicalize(&dir).ok();
        let live_agent =
            live.iter().find(|(_, live_dir)| Some(live_dir) == canonical.as_ref()).map(|(agent_id, _)| *agent_id);
        let log = match read_session_file(&dir.join(EVENTS_FILE)) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(error) => {
                // A folder whose log went missing still shows, as a session that said nothing.
                tracing::debug!(path = %dir.display(), %error, "cannot read a session's event log");
                String::new()
            }
        };
        summaries.push(summarise(dir_text, meta, &log, live_agent));
    }
    // RFC 3339 times in UTC with the same precision sort as text; the folder names (which
    // start with the creation time) break ties.
    summaries.sort_by(|a, b| b.last_activity.cmp(&a.last_activity).then_with(|| b.dir.cmp(&a.dir)));
    Ok(summaries)
}

/// The list entry of one session, from its `meta.json` and the text of its event log.
fn summarise(dir: String, meta: SessionMeta, log: &str, live_agent: Option<AgentId>) -> SessionSummary {
    let read = read_log(log);
    let mut turns: u32 = 0;
    let mut first_prompt: Option<String> = None;
    // The requests whose answer names the agent's session, with the session id the request
    // itself named (`session/load` and `session/resume` do, and their answer may not).
    let mut session_requests: Vec<(RequestId, Option<String>)> = Vec::new();
    let mut agent_session_id = None;
    let mut restores: u32 = 0;
    let mut from_checkpoint = false;
    for entry in &read.entries {
        match &entry.event {
            // A Claude CLI session's log holds the CLI's own wire: its user messages are the
            // prompts, its `system/init` names its session.
            LogEvent::ToAgent(text) if let Some(prompt) = claude_cli::prompt_text_of_sent(text) => {
                turns = turns.saturating_add(1);
                first_prompt.get_or_insert(prompt);
            }
            LogEvent::FromAgent(text) if let Some(session_id) = claude_cli::session_of_received(text) => {
                agent_session_id = Some(session_id);
            }
            LogEvent::ToAgent(text) => {
                let Ok(Message::Request { id, method, params }) = parse_message(text) else { continue };
                match &*method {
                    "session/prompt" => {
                        turns = turns.saturating_add(1);
                        if first_prompt.is_none() {
                            first_prompt = params.and_then(prompt_text);
                        }
                    }
                    "session/new" | "session/load" | "session/resume" | "session/fork" => {
                        let named = params.and_then(|params| serde_json::from_str::<SessionIdField>(params.get()).ok());
                        session_requests.push((id, named.and_then(|named| named.session_id)));
                    }
                    _ => {}
                }
            }
            LogEvent::FromAgent(text) => {
                let Ok(Message::Response { id, result: Ok(result) }) = parse_message(text) else { continue };
                // The latest request with this id: a reattached host may count ids again from the start.
                let Some((_, named)) = session_requests.iter().rev().find(|(request, _)| *request == id) else {
                    continue;
                };
                let answered =
                    serde_json::from_str::<SessionIdField>(result.get()).ok().and_then(|answer| answer.session_id);
                if let Some(session_id) = answered.or_else(|| named.clone()) {
                    agent_session_id = Some(session_id);
                }
            }
            // The person's restores and a conversation restored from a checkpoint are the
            // engine's records (see tether_core::permissions::AuditEvent).
            LogEvent::Host(record) => match serde_json::from_str::<RecordKind>(record).map(|kind| kind.event) {
                Ok(event) if event == "restoreProposed" => restores = restores.saturating_add(1),
                Ok(event) if event == "conversationRestored" => from_checkpoint = true,
                _ => {}
            },
            LogEvent::Stderr(_) | LogEvent::Exited { .. } => {}
        }
    }
    let title = meta
        .title
        .clone()
        .or_else(|| first_prompt.as_deref().map(prompt_title))
        .filter(|title| !title.is_empty())
        .unwrap_or_else(|| UNTITLED_SESSION.to_owned());
    // The conversation's last move: the agent's process ending (or what it printed on stderr
    // as it was stopped) is not one. tetherd stops every agent when it ends, one after another:
    // counted, the order it happened to stop them in would decide which session is the
    // workspace's last one, the one a restart of VS Code reopens.
    let last_activity = read
        .entries
        .iter()
        .rev()
        .find(|entry| matches!(entry.event, LogEvent::ToAgent(_) | LogEvent::FromAgent(_) | LogEvent::Host(_)))
        .map_or_else(|| meta.created.clone(), |entry| entry.time.clone());
    SessionSummary { dir, meta, title, last_activity, turns, agent_session_id, live_agent, restores, from_checkpoint }
}

/// The kind of an engine's record in the log.
#[derive(serde::Deserialize)]
struct RecordKind {
    event: String,
}

/// The agent's session id in a `session/new` answer, or in a `session/load` or `session/resume`
/// request (whose answers need not repeat it).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionIdField {
    session_id: Option<String>,
}

/// The text blocks of a `session/prompt`, joined; `None` when it has none.
fn prompt_text(params: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct PromptParams {
        prompt: Vec<serde_json::Value>,
    }
    let params: PromptParams = serde_json::from_str(params.get()).ok()?;
    let texts: Vec<&str> = params
        .prompt
        .iter()
        .filter(|block| block.get("type").and_then(serde_json::Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(serde_json::Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// `session/read`: the piece of the session's event log from `offset`.
pub fn read(tether_dir: &Path, dir: &str, offset: u64) -> Result<SessionReadResult, HistoryError> {
    let session_dir = resolve(tether_dir, dir)?;
    let path = session_dir.join(EVENTS_FILE);
    let failed = |error: std::io::Error| HistoryError::Failed(format!("cannot read {}: {error}", path.display()));
    let mut file = open_session_file(&path).map_err(failed)?;
    file.seek(SeekFrom::Start(offset)).map_err(failed)?;
    let (bytes, eof) = read_piece(file, SESSION_READ_CHUNK_BYTES).map_err(failed)?;
    let next = offset + bytes.len() as u64;
    Ok(SessionReadResult { text: String::from_utf8_lossy(&bytes).into_owned(), next, eof })
}

/// Reads whole lines from `file`'s position: at most `limit` bytes of them, or one line when it
/// alone is longer, or everything left (a cut last line included) when that fits. Returns the
/// bytes and whether they reach the end of the file.
fn read_piece(file: File, limit: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut reader = BufReader::new(file);
    let mut bytes = Vec::new();
    // One byte more than the limit tells "exactly `limit` bytes left" from "more to come".
    (&mut reader).take(limit + 1).read_to_end(&mut bytes)?;
    let Ok(limit) = usize::try_from(limit) else {
        return Ok((bytes, true));
    };
    if bytes.len() <= limit {
        return Ok((bytes, true));
    }
    if let Some(newline) = bytes[..limit].iter().rposition(|&byte| byte == b'\n') {
        bytes.truncate(newline + 1);
        return Ok((bytes, false));
    }
    // A single line longer than the limit goes whole.
    if !bytes.ends_with(b"\n") {
        reader.read_until(b'\n', &mut bytes)?;
    }
    let eof = !bytes.ends_with(b"\n") || reader.fill_buf()?.is_empty();
    Ok((bytes, eof))
}

/// `session/rename`: sets the session's title.
pub fn rename(tether_dir: &Path, dir: &str, title: &str) -> Result<(), HistoryError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(HistoryError::InvalidParams("the title is empty".to_owned()));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(HistoryError::InvalidParams(format!("the title is longer than {MAX_TITLE_CHARS} characters")));
    }
    let session_dir = resolve(tether_dir, dir)?;
    let mut meta = read_meta(&session_dir).map_err(HistoryError::Failed)?;
    meta.title = Some(title.to_owned());
    write_meta(&session_dir, &meta).map_err(|error| {
        HistoryError::Failed(format!("cannot write {}: {error}", session_dir.join(SESSION_META_FILE).display()))
    })
}

/// `session/delete`: removes the session folder, unless one of the `live` agents' session
/// folders is this one.
pub fn delete(tether_dir: &Path, dir: &str, live: &[(AgentId, PathBuf)]) -> Result<(), HistoryError> {
    let session_dir = resolve(tether_dir, dir)?;
    let running = live.iter().find(|(_, live_dir)| std::fs::canonicalize(live_dir).ok().as_ref() == Some(&session_dir));
    if let Some((agent_id, _)) = running {
        return Err(HistoryError::Failed(format!(
            "the session {dir} cannot be deleted while its agent (id {agent_id}) is running"
        )));
    }
    std::fs::remove_dir_all(&session_dir)
        .map_err(|error| HistoryError::Failed(format!("cannot delete {}: {error}", session_dir.display())))
}

/// The resolved path of `dir`, when it is a folder directly inside `<tether_dir>/sessions/`
/// (after resolving symbolic links and `..` in both).
pub fn resolve(tether_dir: &Path, dir: &str) -> Result<PathBuf, HistoryError> {
    let sessions = real_tether_dir(tether_dir)?.join(SESSIONS_FOLDER);
    refuse_link(&sessions)?;
    refuse_link(Path::new(dir))?;
    let sessions = std::fs::canonicalize(&sessions)
        .map_err(|error| HistoryError::Failed(format!("there are no sessions in {}: {error}", sessions.display())))?;
    let resolved = std::fs::canonicalize(dir)
        .map_err(|error| HistoryError::Failed(format!("there is no session folder {dir}: {error}")))?;
    if resolved.parent() != Some(sessions.as_path()) || !resolved.is_dir() {
        return Err(HistoryError::Failed(format!("{dir} is not a session folder in {}", sessions.display())));
    }
    Ok(resolved)
}

/// `tether_dir` as an absolute path, refused when it is a symbolic link (it may not exist yet).
pub fn real_tether_dir(tether_dir: &Path) -> Result<PathBuf, HistoryError> {
    let absolute = std::path::absolute(tether_dir).map_err(|error| {
        HistoryError::Failed(format!("cannot make {} an absolute path: {error}", tether_dir.display()))
    })?;
    refuse_link(&absolute)?;
    Ok(absolute)
}

/// Refuses `path` when it is a symbolic link; a path that does not exist passes.
pub fn refuse_link(path: &Path) -> Result<(), HistoryError> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => Err(HistoryError::Failed(format!(
            "{} is a symbolic link: Tether keeps sessions only in real folders, so that nothing in the workspace can point it at a file elsewhere",
            path.display()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use tether_core::session_log::encode_line;

    use super::*;

    fn meta(title: Option<&str>) -> SessionMeta {
        SessionMeta {
            agent: "Demo".to_owned(),
            created: "2026-11-23T10:00:00.000Z".to_owned(),
            title: title.map(str::to_owned),
        }
    }

    #[test]
    fn a_meta_json_of_an_earlier_version_reads_and_only_its_agent_name_counts() {
        let folder = tempfile::tempdir().expect("a temporary directory");
        let earlier = r#"{"agent":"Demo","command":"sh","args":["-c","touch pwned"],"cwd":"/elsewhere","created":"2026-11-23T10:00:00.000Z"}"#;
        std::fs::write(folder.path().join(SESSION_META_FILE), earlier).expect("a meta.json");
        assert_eq!(read_meta(folder.path()), Ok(meta(None)));
    }

    /// A log of `events`, one second apart from 10:00:01.
    fn log(events: &[(&str, &str)]) -> String {
        events
            .iter()
            .enumerate()
            .map(|(index, (direction, message))| {
                let event = match *direction {
                    "to" => LogEvent::ToAgent((*message).to_owned()),
                    "from" => LogEvent::FromAgent((*message).to_owned()),
                    "host" => LogEvent::Host((*message).to_owned()),
                    "exit" => LogEvent::Exited { code: None, signal: Some(15), killed: true },
                    _ => LogEvent::Stderr((*message).to_owned()),
                };
                encode_line(index as u64 + 1, &format!("2026-11-23T10:00:{:02}.000Z", index + 1), &event) + "\n"
            })
            .collect()
    }

    fn prompt(id: u32, text: &str) -> String {
        serde_json::json!({"jsonrpc":"2.0","id":id,"method":"session/prompt","params":{"sessionId":"s-1",
            "prompt":[{"type":"image","data":"..."},{"type":"text","text":text}]}})
        .to_string()
    }

    /// Title, turns, agent session id and last activity of each log, one line each.
    fn summaries(cases: &[(Option<&str>, String)]) -> String {
        cases
            .iter()
            .map(|(title, log)| {
                let summary = summarise("/s".to_owned(), meta(*title), log, None);
                format!(
                    "{:?} turns={} agentSession={:?} last={}\n",
                    summary.title, summary.turns, summary.agent_session_id, summary.last_activity
                )
            })
            .collect()
    }

    #[test]
    fn a_summary_counts_the_restores_and_whether_it_went_on_from_a_checkpoint() {
        let fork = r#"{"jsonrpc":"2.0","id":1,"method":"session/fork","params":{"sessionId":"s-1","cwd":"/w"}}"#;
        let forked = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-2"}}"#;
        let restored = r#"{"event":"conversationRestored","entries":[],"mode":"ask"}"#;
        let proposed = r#"{"event":"restoreProposed","restore":{},"changes":[],"mode":"ask"}"#;
        let settled = r#"{"event":"restoreSettled","restore":{},"changes":[],"mode":"ask"}"#;
        let events = [
            ("host", restored),
            ("to", fork),
            ("from", forked),
            ("host", proposed),
            ("host", settled),
            ("host", proposed),
        ];
        let summary = summarise("/s".to_owned(), meta(None), &log(&events), None);
        assert_eq!(
            (summary.restores, summary.from_checkpoint, summary.agent_session_id.as_deref()),
            (2, true, Some("s-2")),
            "two restores (a settled one is not another), from a checkpoint, and the fork's agent session"
        );
    }

    #[test]
    fn a_summary_reads_title_turns_and_agent_session_from_the_log() {
        let new_session = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#;
        let new_answer = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"agent-42"}}"#;
        let load = r#"{"jsonrpc":"2.0","id":"l","method":"session/load","params":{"sessionId":"agent-7","cwd":"/w","mcpServers":[]}}"#;
        let load_answer = r#"{"jsonrpc":"2.0","id":"l","result":{}}"#;
        let failed_new = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}}"#;
        let other_answer = r#"{"jsonrpc":"2.0","id":9,"result":{"sessionId":"not-this"}}"#;
        let long = "word ".repeat(30);
        let cases = [
            (None, String::new()),
            (Some("Renamed"), log(&[("to", &prompt(2, "fix the bug"))])),
            (
                None,
                log(&[
                    ("to", new_session),
                    ("from", new_answer),
                    ("to", &prompt(2, "\n  fix the bug\nin main.rs")),
                    ("to", &prompt(3, "second")),
                    ("from", r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#),
                    // What the agent printed and its exit as tetherd stopped it are not activity.
                    ("err", "a warning"),
                    ("exit", ""),
                ]),
            ),
            (None, log(&[("to", &prompt(2, &long))])),
            (None, log(&[("to", load), ("from", load_answer), ("from", other_answer)])),
            (None, log(&[("to", new_session), ("from", failed_new)])),
            (None, log(&[("to", &prompt(2, "cut"))]) + r#"{"seq":2,"time":"2026-11-23T11"#),
            // A Claude CLI session: the CLI's wire, its user messages and its system/init.
            (
                None,
                log(&[
                    ("to", r#"{"type":"control_request","request_id":"tether-1","request":{"subtype":"initialize"}}"#),
                    (
                        "to",
                        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"explain the build"}]},"session_id":""}"#,
                    ),
                    (
                        "from",
                        r#"{"type":"system","subtype":"init","session_id":"7634b137-abeb-48b4-bb1b-c76461665b9a"}"#,
                    ),
                    ("to", r#"{"type":"user","message":{"role":"user","content":"and the tests"},"session_id":""}"#),
                ]),
            ),
        ];
        expect![[r#"
            "New session" turns=0 agentSession=None last=2026-11-23T10:00:00.000Z
            "Renamed" turns=1 agentSession=None last=2026-11-23T10:00:01.000Z
            "fix the bug" turns=2 agentSession=Some("agent-42") last=2026-11-23T10:00:05.000Z
            "word word word word word word word word word word word word word word word word…" turns=1 agentSession=None last=2026-11-23T10:00:01.000Z
            "New session" turns=0 agentSession=Some("agent-7") last=2026-11-23T10:00:03.000Z
            "New session" turns=0 agentSession=None last=2026-11-23T10:00:02.000Z
            "cut" turns=1 agentSession=None last=2026-11-23T10:00:01.000Z
            "explain the build" turns=2 agentSession=Some("7634b137-abeb-48b4-bb1b-c76461665b9a") last=2026-11-23T10:00:04.000Z
        "#]]
        .assert_eq(&summaries(&cases));
    }

    /// Reads `text` in pieces of at most `limit` bytes and shows each piece.
    fn pieces(text: &str, limit: u64) -> Vec<(String, bool)> {
        let folder = tempfile::tempdir().expect("a temporary directory");
        let path = folder.path().join("log");
        std::fs::write(&path, text).expect("a log");
        let mut offset = 0;
        let mut pieces = Vec::new();
        loop {
            let mut file = File::open(&path).expect("the log");
            file.seek(SeekFrom::Start(offset)).expect("a seek");
            let (bytes, eof) = read_piece(file, limit).expect("a piece");
            offset += bytes.len() as u64;
            pieces.push((String::from_utf8(bytes).expect("UTF-8"), eof));
            if eof {
                return pieces;
            }
        }
    }

    #[test]
    fn pieces_end_at_line_ends_unless_a_line_is_longer_or_the_file_ends() {
        let cases = [
            ("", 4),
            ("ab\ncd\n", 6),
            ("ab\ncd\n", 5),
            ("ab\ncd\nef", 4),
            ("abcdefgh\nij\n", 4),
            ("abcd\nef", 4),
            ("abcdefgh", 4),
        ];
        let shown: String =
            cases.iter().map(|(text, limit)| format!("{text:?} by {limit}: {:?}\n", pieces(text, *limit))).collect();
        expect![[r#"
            "" by 4: [("", true)]
            "ab\ncd\n" by 6: [("ab\ncd\n", true)]
            "ab\ncd\n" by 5: [("ab\n", false), ("cd\n", true)]
            "ab\ncd\nef" by 4: [("ab\n", false), ("cd\n", false), ("ef", true)]
            "abcdefgh\nij\n" by 4: [("abcdefgh\n", false), ("ij\n", true)]
            "abcd\nef" by 4: [("abcd\n", false), ("ef", true)]
            "abcdefgh" by 4: [("abcdefgh", true)]
        "#]]
        .assert_eq(&shown);
    }
}
