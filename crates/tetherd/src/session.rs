//! Session folders: what tetherd keeps on disk about each session, inside the workspace's
//! `.tether` folder (`tetherDir` in `agent/spawn`).
//!
//! ```text
//! <tetherDir>/.gitignore          `*`, so that nothing in the folder is ever committed
//! <tetherDir>/sessions/<id>/      one per session; <id> is `<UTC yyyymmdd-hhmmss>-<agentId>` of
//!                                 the agent that started it; an agent spawned to continue the
//!                                 session (`sessionDir` in `agent/spawn`) writes on in it
//!     events.jsonl                the session's event log, created with the folder: the agent's
//!                                 wire in both directions, its stderr and exit, and the host's
//!                                 audit records (see [`crate::event_log`])
//!     audit.jsonl                 the session's audit log, one JSON object per line
//!     meta.json                   which agent profile the session used, when it was created,
//!                                 and its title once renamed
//!                                 (see [`crate::history`])
//! ```
//!
//! tetherd owns these files because it outlives the window: a line it has forwarded or a record
//! it has accepted is on disk even if the host is reloaded a moment later. Everything is created
//! owner-only (folders 0700, files 0600), since transcripts and audit records can hold secrets
//! (a token on a command line, the content of a file).
//!
//! A repository can commit a `.tether` folder, so nothing in it is taken on trust: `.tether`,
//! `sessions/` and a session folder must be real folders, and the files in a session folder are
//! opened without following a symbolic link (`O_NOFOLLOW`). A link planted there (say
//! `events.jsonl -> ~/.bashrc`) makes the open fail with a clear error instead of making
//! tetherd read or append to a file outside the `.tether` folder. Windows has no `O_NOFOLLOW`:
//! there the files are opened with `FILE_FLAG_OPEN_REPARSE_POINT`, which opens a link itself
//! rather than its target, so a planted link is read as empty or written into in place, never
//! followed out of the folder. (The owner-only modes are Unix's; on Windows the files inherit
//! the access list of the user's folders.)

use std::fs::{DirBuilder, OpenOptions};
use std::io::{ErrorKind, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::value::RawValue;
use tether_core::sidecar::{AgentId, SESSION_META_FILE, SessionMeta};

use crate::event_log::EventLog;
use crate::history;
use crate::utc::UtcTime;

/// The audit log's file name inside a session folder.
pub const AUDIT_FILE: &str = "audit.jsonl";

/// The `.gitignore` tetherd puts in the `.tether` folder when there is none.
const GITIGNORE_CONTENT: &str = "*\n";

/// How many names a new session folder tries (`<id>`, `<id>-2`, ...) before giving up. Names
/// only collide when an earlier tetherd started the same agent id in the same second, so a few
/// are plenty; the bound only keeps a folder full of strange entries from looping for ever.
const MAX_NAME_ATTEMPTS: u32 = 100;

/// A session folder and the writer of its event log.
#[derive(Debug, Clone)]
pub struct SessionFolder {
    /// The folder's absolute path, which is valid UTF-8 (resolved, for a continued session).
    pub dir: PathBuf,
    pub events: EventLog,
}

/// Prepares `tether_dir` (creating it and its `.gitignore` as needed) and creates a new session
/// folder for `agent_id` in it, holding `meta` as its `meta.json` and an empty event log.
pub fn create(tether_dir: &Path, agent_id: AgentId, now: UtcTime, meta: &SessionMeta) -> anyhow::Result<SessionFolder> {
    // A relative path is taken relative to tetherd's working directory; the host sends absolute
    // ones, and the host needs an absolute one back.
    let tether_dir = history::real_tether_dir(tether_dir).map_err(|error| anyhow::anyhow!("{error}"))?;
    if tether_dir.to_str().is_none() {
        // The folder's path goes back to the host as a JSON string.
        bail!("the folder {} is not valid UTF-8", tether_dir.display());
    }
    private_dir_builder()
        .recursive(true)
        .create(&tether_dir)
        .with_context(|| format!("cannot create the folder {}", tether_dir.display()))?;
    ensure_gitignore(&tether_dir)?;
    let sessions = tether_dir.join(history::SESSIONS_FOLDER);
    history::refuse_link(&sessions).map_err(|error| anyhow::anyhow!("{error}"))?;
    private_dir_builder()
        .recursive(true)
        .create(&sessions)
        .with_context(|| format!("cannot create the folder {}", sessions.display()))?;

    let name = format!("{}-{agent_id}", now.compact());
    for attempt in 1..=MAX_NAME_ATTEMPTS {
        let dir = match attempt {
            1 => sessions.join(&name),
            _ => sessions.join(format!("{name}-{attempt}")),
        };
        // Not recursive: creating the folder is what claims the name, so an existing folder
        // (from an earlier tetherd) is never shared.
        match private_dir_builder().create(&dir) {
            Ok(()) => return fill_new_folder(dir, meta),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error).with_context(|| format!("cannot create the folder {}", dir.display())),
        }
    }
    bail!(
        "cannot find a free name for a session folder in {} (tried {MAX_NAME_ATTEMPTS} names from {name} on)",
        sessions.display()
    )
}

/// The session folder `dir` of `tether_dir`, resolved, for another agent to continue. It must
/// be a folder directly inside `<tether_dir>/sessions/`, checked as the history requests check
/// theirs, so that a host cannot make tetherd write into any other folder.
pub fn existing(tether_dir: &Path, dir: &str) -> anyhow::Result<PathBuf> {
    let resolved = history::resolve(tether_dir, dir).map_err(|error| anyhow::anyhow!("{error}"))?;
    if resolved.to_str().is_none() {
        // The folder's path goes back to the host as a JSON string.
        bail!("the folder {} is not valid UTF-8", resolved.display());
    }
    Ok(resolved)
}

/// Continues the session folder `dir` (from [`existing`]) with a new writer of its event log,
/// which appends after what is there (see [`EventLog::open_existing`]). `meta.json` stays as it
/// is: it says how the session started.
pub fn reopen(dir: PathBuf) -> anyhow::Result<SessionFolder> {
    let events = EventLog::open_existing(&dir)?;
    Ok(SessionFolder { dir, events })
}

/// Writes `meta.json` and creates the event log in a folder just claimed. A session folder
/// without them would look like a session that recorded nothing (or not be listed at all), so
/// on failure the folder goes again.
fn fill_new_folder(dir: PathBuf, meta: &SessionMeta) -> anyhow::Result<SessionFolder> {
    let filled = history::write_meta(&dir, meta)
        .with_context(|| format!("cannot write {}", dir.join(SESSION_META_FILE).display()))
        .and_then(|()| EventLog::create(&dir));
    match filled {
        Ok(events) => Ok(SessionFolder { dir, events }),
        Err(error) => {
            // Only this tetherd has written into the folder it has just created.
            if let Err(remove_error) = std::fs::remove_dir_all(&dir) {
                tracing::warn!(path = %dir.display(), error = %remove_error,
                    "cannot remove a session folder without its event log");
            }
            Err(error)
        }
    }
}

/// Creates `<tether_dir>/.gitignore` with `*` unless there is one; an existing one is the
/// person's and is left as it is.
///
/// Failing here fails the session folder: a log that git might pick up and push is worse than
/// no log.
fn ensure_gitignore(tether_dir: &Path) -> anyhow::Result<()> {
    let path = tether_dir.join(".gitignore");
    let mut file = match private_file_options().write(true).create_new(true).open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::AlreadyExists => return Ok(()),
        Err(error) => return Err(error).with_context(|| format!("cannot create {}", path.display())),
    };
    if let Err(error) = file.write_all(GITIGNORE_CONTENT.as_bytes()) {
        // An empty or partial file would be left alone by every later session, so take it away.
        if let Err(remove_error) = std::fs::remove_file(&path) {
            tracing::warn!(path = %path.display(), error = %remove_error, "cannot remove an incomplete .gitignore");
        }
        return Err(error).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

/// Appends `record` to the session's audit log as one line, with `time` as its first field.
///
/// The line goes to the file in a single write on a file opened for appending, without a
/// buffer in between: once this returns, the record survives tetherd being killed, and two
/// appends never interleave.
pub fn append_audit(session_dir: &Path, record: &RawValue, time: UtcTime) -> anyhow::Result<()> {
    let line = audit_line(record.get(), time)?;
    let path = session_dir.join(AUDIT_FILE);
    let mut file = private_file_options()
        .append(true)
        .create(true)
        .open(&path)
        .map_err(|error| explain_link(&path, error))
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.write_all(line.as_bytes()).with_context(|| format!("cannot append to {}", path.display()))
}

/// The audit log line for `record` (the text of a JSON value): `{"time":"<time>",<fields>}\n`.
///
/// The record's text is spliced in as it came, not re-serialised, so its fields keep their
/// exact spelling. The one change: line breaks become spaces. In valid JSON they can only be
/// whitespace between tokens (a string cannot hold a raw one), and left in they would split
/// the record over two lines of the log.
fn audit_line(record: &str, time: UtcTime) -> anyhow::Result<String> {
    let Some(fields) = record.trim_start().strip_prefix('{') else {
        bail!("the record is not a JSON object");
    };
    let mut line = format!(r#"{{"time":"{}""#, time.rfc3339_millis());
    if fields.trim_start().starts_with('}') {
        line.push('}');
    } else {
        line.push(',');
        line.extend(fields.trim_end().chars().map(|char| if char == '\n' || char == '\r' { ' ' } else { char }));
    }
    line.push('\n');
    Ok(line)
}

/// A builder for folders only their owner can enter.
fn private_dir_builder() -> DirBuilder {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "only Unix has modes to set"))]
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Options for files only their owner can read; the mode applies when the file is created. A
/// symbolic link in the file's place is never followed: the open fails instead (see the module's
/// doc).
pub fn private_file_options() -> OpenOptions {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "only Unix sets a mode"))]
    let mut options = no_follow_options();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Reads a file tetherd keeps in the `.tether` folder, refusing a symbolic link in its place.
pub fn read_session_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_session_file(path)?, &mut bytes)?;
    Ok(bytes)
}

/// Opens a file tetherd keeps in the `.tether` folder for reading, refusing a symbolic link in
/// its place.
pub fn open_session_file(path: &Path) -> std::io::Result<std::fs::File> {
    no_follow_options().read(true).open(path).map_err(|error| explain_link(path, error))
}

/// Options that do not follow a symbolic link in the file's place.
pub fn no_follow_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::fcntl::OFlag::O_NOFOLLOW.bits());
    #[cfg(windows)]
    {
        /// Opens a symbolic link or junction itself, not what it points to (Win32's file flags).
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, FILE_FLAG_OPEN_REPARSE_POINT);
    }
    options
}

/// `ELOOP` is what `O_NOFOLLOW` says about a link, which reads as "too many levels of symbolic
/// links": say what it means here.
pub fn explain_link(
    #[cfg_attr(not(unix), expect(unused_variables, reason = "only Unix refuses links with an error"))] path: &Path,
    error: std::io::Error,
) -> std::io::Error {
    #[cfg(unix)]
    if error.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
        return std::io::Error::other(format!(
            "{} is a symbolic link, which Tether does not follow in its .tether folder (it could lead out of it)",
            path.display()
        ));
    }
    error
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn time() -> UtcTime {
        UtcTime::from_unix_millis(1_795_327_980_123)
    }

    fn meta() -> SessionMeta {
        SessionMeta { agent: "Demo".to_owned(), created: time().rfc3339_millis(), title: None }
    }

    #[test]
    fn audit_lines_put_the_time_first_and_keep_the_record_as_written() {
        let lines = [
            r#"{"kind":"permission", "decision" : "allow","title":"caf\u00e9 é \"q\"","n":1.50}"#,
            "{}",
            "{ }",
            "{\"a\":\r\n1}",
            r#"{"text":"a \\n in a string stays"}"#,
        ]
        .map(|record| audit_line(record, time()).expect("an object"))
        .concat();
        expect![[r#"
            {"time":"2026-11-22T06:13:00.123Z","kind":"permission", "decision" : "allow","title":"caf\u00e9 é \"q\"","n":1.50}
            {"time":"2026-11-22T06:13:00.123Z"}
            {"time":"2026-11-22T06:13:00.123Z"}
            {"time":"2026-11-22T06:13:00.123Z","a":  1}
            {"time":"2026-11-22T06:13:00.123Z","text":"a \\n in a string stays"}
        "#]]
        .assert_eq(&lines);
    }

    #[test]
    fn records_that_are_not_objects_have_no_audit_line() {
        for record in ["[1,2]", r#""text""#, "null", "3"] {
            let error = audit_line(record, time()).expect_err(record);
            assert_eq!(error.to_string(), "the record is not a JSON object");
        }
    }

    #[test]
    fn a_taken_session_name_gets_a_suffix() {
        let workspace = tempfile::tempdir().expect("a temporary directory");
        let tether_dir = workspace.path().join(".tether");
        let names: Vec<String> = (0..3)
            .map(|_| {
                let dir = create(&tether_dir, 7, time(), &meta()).expect("a session folder").dir;
                assert_eq!(dir.parent(), Some(tether_dir.join("sessions").as_path()));
                dir.file_name().and_then(|name| name.to_str()).expect("a UTF-8 name").to_owned()
            })
            .collect();
        assert_eq!(names, ["20261122-061300-7", "20261122-061300-7-2", "20261122-061300-7-3"]);
    }

    #[test]
    fn a_new_session_folder_holds_its_meta_owner_only() {
        let workspace = tempfile::tempdir().expect("a temporary directory");
        let dir = create(&workspace.path().join(".tether"), 3, time(), &meta()).expect("a session folder").dir;
        let path = dir.join(SESSION_META_FILE);
        let text = std::fs::read_to_string(&path).expect("meta.json");
        expect![[r#"
            {
              "agent": "Demo",
              "created": "2026-11-22T06:13:00.123Z",
              "title": null
            }
        "#]]
        .assert_eq(&text);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).expect("meta.json").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
