//! The session history through the real tetherd: `session/list`, `session/read`,
//! `session/rename` and `session/delete` on session folders that agents spawned with a
//! `tetherDir` really made, and `agent/spawn` with a `sessionDir` that continues one of them
//! (its event log goes on where it stopped, and the list shows one session). The agent echoes
//! every line, so the host plays both sides of the conversation: it sends a request, then the
//! answer the agent echoes back.

#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use expect_test::expect;
use serde_json::{Value, json};
use support::{Client, Tetherd};
use tether_core::session_log::{EVENTS_FILE, LogEvent, read_log};
use tether_core::sidecar::{SESSION_READ_CHUNK_BYTES, SessionSummary};

const ECHO_AGENT: &str = r#"while IFS= read -r line; do printf '%s\n' "$line"; done"#;

/// Echoes one line and exits with code 0, as an agent that dies after a turn.
const ONE_LINE_AGENT: &str = r#"IFS= read -r line; printf '%s\n' "$line""#;

/// The error code of a failed `agent/spawn`.
const SPAWN_FAILED: i64 = -32010;

/// The error code of a history request on a folder it may not touch.
const SESSION_FAILED: i64 = -32050;

/// A workspace with its `.tether` folder's path (not created yet).
struct Workspace {
    root: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        Self { root: tempfile::tempdir().expect("a temporary directory") }
    }

    fn tether_dir(&self) -> String {
        self.root.path().join(".tether").to_str().expect("a UTF-8 temporary path").to_owned()
    }

    fn sessions(&self) -> PathBuf {
        self.root.path().join(".tether").join("sessions")
    }
}

/// `agent/spawn` params for `sh -c <script>` with a session folder in `workspace`: a new one, or
/// `continued` when given.
fn session_params(workspace: &Workspace, script: &str, continued: Option<&Path>) -> Value {
    let mut params = support::sh(script);
    params["tetherDir"] = json!(workspace.tether_dir());
    if let Some(continued) = continued {
        params["sessionDir"] = json!(continued);
    }
    params
}

/// Spawns `sh -c <script>` with a session folder in `workspace` (a new one, or `continued`);
/// returns the agent's id and its session folder.
fn spawn_agent(host: &mut Client, workspace: &Workspace, script: &str, continued: Option<&Path>) -> (u64, PathBuf) {
    let (agent_id, _pid, session_dir) = host.spawn_with_session(session_params(workspace, script, continued));
    (agent_id, session_dir.expect("a session folder"))
}

/// Spawns the echo agent with a new session folder in `workspace`.
fn spawn_session(host: &mut Client, workspace: &Workspace) -> (u64, PathBuf) {
    spawn_agent(host, workspace, ECHO_AGENT, None)
}

/// Sends `lines` to the agent and waits until it has echoed the last one, so that both
/// directions of all of them are in the log.
fn converse(host: &mut Client, agent_id: u64, lines: &[String]) {
    for line in lines {
        host.send_to_agent(agent_id, line);
    }
    let last = lines.last().expect("at least one line").clone();
    host.wait_for("the echo of the last line", |line| {
        line.method() == Some("agent/message")
            && line.params()["agentId"] == json!(agent_id)
            && line.raw_agent_message() == last
    });
}

fn request(id: u32, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

fn answer(id: u32, result: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string()
}

fn prompt(id: u32, text: &str) -> String {
    request(id, "session/prompt", json!({ "sessionId": "s", "prompt": [{ "type": "text", "text": text }] }))
}

fn list(host: &mut Client, tether_dir: &str) -> Vec<SessionSummary> {
    let result = host.call("session/list", json!({ "tetherDir": tether_dir })).expect("session/list succeeds");
    serde_json::from_value(result["sessions"].clone()).expect("a list of sessions")
}

/// One line per session: its agent (by the name `agents` gives its id), title, turns, agent
/// session and live agent. Folder names end with the agent's id; their time stamps vary.
fn shown(sessions: &[SessionSummary], agents: &[(u64, &str)]) -> String {
    let agent = |id: u64| agents.iter().find(|(agent_id, _)| *agent_id == id).map_or("?", |(_, name)| *name);
    sessions
        .iter()
        .map(|session| {
            let id =
                session.dir.rsplit('-').next().and_then(|id| id.parse().ok()).expect("a folder named for its agent");
            format!(
                "{}: {:?} turns={} agentSession={:?} live={:?}\n",
                agent(id),
                session.title,
                session.turns,
                session.agent_session_id,
                session.live_agent.map(agent)
            )
        })
        .collect()
}

fn error_code(error: &Value) -> i64 {
    error["code"].as_i64().expect("an error code")
}

#[test]
fn the_list_shows_titles_turns_agent_sessions_and_live_agents_newest_first() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let tether_dir = workspace.tether_dir();
    assert_eq!(list(&mut host, &tether_dir), [], "no .tether folder yet: no sessions");

    let (first, first_dir) = spawn_session(&mut host, &workspace);
    converse(
        &mut host,
        first,
        &[
            request(0, "initialize", json!({ "protocolVersion": 1 })),
            answer(0, json!({ "protocolVersion": 1 })),
            request(1, "session/new", json!({ "cwd": "/w", "mcpServers": [] })),
            answer(1, json!({ "sessionId": "agent-session-1" })),
            prompt(2, "Fix the login bug\nIt fails on Safari"),
            answer(2, json!({ "stopReason": "end_turn" })),
            prompt(3, "Thanks"),
        ],
    );
    host.call("agent/kill", json!({ "agentId": first })).expect("the first agent can be killed");

    let (second, _) = spawn_session(&mut host, &workspace);
    converse(&mut host, second, &[prompt(1, &"long ".repeat(40))]);
    let (third, third_dir) = spawn_session(&mut host, &workspace);

    // Folders that are not sessions are left out.
    std::fs::create_dir(workspace.sessions().join("notes")).expect("a folder");
    std::fs::write(workspace.sessions().join("stray.txt"), "x").expect("a file");
    let broken = workspace.sessions().join("broken");
    std::fs::create_dir(&broken).expect("a folder");
    std::fs::write(broken.join("meta.json"), "{not json").expect("a broken meta.json");

    let sessions = list(&mut host, &tether_dir);
    let text = shown(&sessions, &[(first, "first"), (second, "second"), (third, "third")]);
    expect![[r#"
        third: "New session" turns=0 agentSession=None live=Some("third")
        second: "long long long long long long long long long long long long long long long long…" turns=1 agentSession=None live=Some("second")
        first: "Fix the login bug" turns=2 agentSession=Some("agent-session-1") live=None
    "#]]
    .assert_eq(&text);

    assert_eq!(Path::new(&sessions[2].dir), first_dir, "the list names the folder spawn returned");
    assert_eq!(Path::new(&sessions[0].dir), third_dir);
    assert_eq!(sessions[0].last_activity, sessions[0].meta.created, "an empty log: the creation time");
    assert!(sessions[2].last_activity > sessions[2].meta.created);
    assert_eq!(sessions[2].meta.agent, "test agent", "meta.json names the profile, and only that");
}

#[test]
fn a_missing_tether_dir_or_sessions_folder_lists_nothing() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    assert_eq!(list(&mut host, &workspace.tether_dir()), []);
    std::fs::create_dir(workspace.root.path().join(".tether")).expect("a .tether folder");
    assert_eq!(list(&mut host, &workspace.tether_dir()), []);
}

#[test]
fn meta_json_is_written_at_spawn_for_its_owner_only() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let (_agent_id, session_dir) = spawn_session(&mut host, &workspace);
    let path = session_dir.join("meta.json");
    assert_eq!(std::fs::metadata(&path).expect("meta.json").permissions().mode() & 0o777, 0o600);
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("meta.json")).expect("JSON");
    let created = meta["created"].as_str().expect("a creation time");
    let shape: String = created.chars().map(|char| if char.is_ascii_digit() { 'd' } else { char }).collect();
    assert_eq!(shape, "dddd-dd-ddTdd:dd:dd.dddZ");
    let mut meta = meta;
    meta["created"] = json!("<created>");
    expect![[r#"{"agent":"test agent","created":"<created>","title":null}"#]].assert_eq(&meta.to_string());
}

/// Reads the whole log through `session/read`, one piece at a time; returns the pieces.
fn read_in_pieces(host: &mut Client, tether_dir: &str, dir: &Path) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut offset = 0;
    loop {
        let result = host
            .call("session/read", json!({ "tetherDir": tether_dir, "dir": dir, "offset": offset }))
            .expect("session/read succeeds");
        pieces.push(result["text"].as_str().expect("text").to_owned());
        offset = result["next"].as_u64().expect("next");
        if result["eof"] == json!(true) {
            return pieces;
        }
    }
}

#[test]
fn a_log_larger_than_one_piece_reads_back_exactly_in_whole_lines() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let (agent_id, session_dir) = spawn_session(&mut host, &workspace);
    let chunk = usize::try_from(SESSION_READ_CHUNK_BYTES).expect("a chunk fits in memory");
    // Ten lines of a tenth of a piece each way, then one line longer than a whole piece.
    let mut lines: Vec<String> = (0..10)
        .map(|index| {
            json!({ "jsonrpc": "2.0", "method": "note", "params": { "n": index, "text": "é".repeat(chunk / 20) } })
                .to_string()
        })
        .collect();
    lines.push(json!({ "jsonrpc": "2.0", "method": "big", "params": { "text": "b".repeat(chunk + 10) } }).to_string());
    converse(&mut host, agent_id, &lines);
    host.call("agent/kill", json!({ "agentId": agent_id })).expect("the agent can be killed");

    let pieces = read_in_pieces(&mut host, &workspace.tether_dir(), &session_dir);
    let on_disk = std::fs::read_to_string(session_dir.join(EVENTS_FILE)).expect("the log");
    assert_eq!(pieces.concat(), on_disk, "the pieces reassemble the file");
    assert!(pieces.len() >= 3, "{} pieces", pieces.len());
    for piece in &pieces {
        assert!(piece.ends_with('\n'), "every piece ends at a line end");
        let longest_line = piece.lines().map(str::len).max().unwrap_or_default();
        assert!(piece.len() <= chunk || piece.lines().count() == 1, "a piece beyond the limit is one line");
        assert!(longest_line < chunk || piece.len() == longest_line + 1);
    }
    assert!(pieces.iter().any(|piece| piece.len() > chunk), "the long line came whole");

    let end = on_disk.len();
    let result = host
        .call("session/read", json!({ "tetherDir": workspace.tether_dir(), "dir": session_dir, "offset": end }))
        .expect("a read at the end");
    assert_eq!(result, json!({ "text": "", "next": end, "eof": true }));
}

#[test]
fn a_cut_last_line_comes_with_the_final_piece() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let (agent_id, session_dir) = spawn_session(&mut host, &workspace);
    host.call("agent/kill", json!({ "agentId": agent_id })).expect("the agent can be killed");
    let log = session_dir.join(EVENTS_FILE);
    let mut text = std::fs::read_to_string(&log).expect("the log");
    text.push_str(r#"{"seq":2,"time":"2026-"#);
    std::fs::write(&log, &text).expect("a cut line appended");
    let pieces = read_in_pieces(&mut host, &workspace.tether_dir(), &session_dir);
    assert_eq!(pieces, [text]);
}

#[test]
fn a_rename_shows_in_the_list_and_keeps_meta_json_private() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let tether_dir = workspace.tether_dir();
    let (agent_id, session_dir) = spawn_session(&mut host, &workspace);
    converse(&mut host, agent_id, &[prompt(1, "The first prompt")]);
    assert_eq!(list(&mut host, &tether_dir)[0].title, "The first prompt");

    let rename = |host: &mut Client, title: &str| {
        host.call("session/rename", json!({ "tetherDir": tether_dir, "dir": session_dir, "title": title }))
    };
    assert_eq!(rename(&mut host, "  Login bug on Safari \n"), Ok(json!({})));
    let sessions = list(&mut host, &tether_dir);
    assert_eq!(sessions[0].title, "Login bug on Safari");
    assert_eq!(sessions[0].meta.title.as_deref(), Some("Login bug on Safari"));
    let meta = session_dir.join("meta.json");
    assert_eq!(std::fs::metadata(&meta).expect("meta.json").permissions().mode() & 0o777, 0o600);

    for refused in ["", "   \n", &"x".repeat(201)] {
        let error = rename(&mut host, refused).expect_err("an invalid title");
        assert_eq!(error_code(&error), -32602, "{refused:?}: {error}");
    }
    assert_eq!(rename(&mut host, &"é".repeat(200)), Ok(json!({})), "200 characters are allowed");
    assert_eq!(list(&mut host, &tether_dir)[0].title, "é".repeat(200));
    let names: Vec<String> = std::fs::read_dir(&session_dir)
        .expect("the folder")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("meta"))
        .collect();
    assert_eq!(names, ["meta.json"], "no temporary file is left behind");
}

#[test]
fn a_session_is_deleted_only_once_its_agent_has_stopped() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let tether_dir = workspace.tether_dir();
    let (agent_id, session_dir) = spawn_session(&mut host, &workspace);
    let delete =
        |host: &mut Client| host.call("session/delete", json!({ "tetherDir": tether_dir, "dir": session_dir }));

    let error = delete(&mut host).expect_err("the agent still runs");
    assert_eq!(error_code(&error), SESSION_FAILED);
    assert!(error["message"].as_str().expect("a message").contains("running"), "{error}");
    assert!(session_dir.join(EVENTS_FILE).exists());

    host.call("agent/kill", json!({ "agentId": agent_id })).expect("the agent can be killed");
    assert_eq!(delete(&mut host), Ok(json!({})));
    assert!(!session_dir.exists());
    assert_eq!(list(&mut host, &tether_dir), []);
    let error = delete(&mut host).expect_err("already deleted");
    assert_eq!(error_code(&error), SESSION_FAILED);
}

#[test]
fn folders_outside_the_sessions_folder_are_refused() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let tether_dir = workspace.tether_dir();
    let (agent_id, session_dir) = spawn_session(&mut host, &workspace);
    host.call("agent/kill", json!({ "agentId": agent_id })).expect("the agent can be killed");

    // A folder outside that looks like a session, reached through a link inside sessions/.
    let outside = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(outside.path().join("meta.json"), std::fs::read(session_dir.join("meta.json")).expect("meta"))
        .expect("a meta.json outside");
    std::fs::write(outside.path().join(EVENTS_FILE), "secret\n").expect("a log outside");
    let link = workspace.sessions().join("link");
    std::os::unix::fs::symlink(outside.path(), &link).expect("a symbolic link");
    // A session folder of another workspace.
    let other = Workspace::new();
    let (other_agent, other_dir) = spawn_session(&mut host, &other);
    host.call("agent/kill", json!({ "agentId": other_agent })).expect("the agent can be killed");

    let refused: Vec<PathBuf> = vec![
        session_dir.join(".."),
        session_dir.join("..").join("..").join(".tether").join("sessions"),
        workspace.sessions().join("..").join(".."),
        session_dir.join(EVENTS_FILE),
        link.clone(),
        link.join("."),
        outside.path().to_owned(),
        other_dir.clone(),
        workspace.sessions().join("missing"),
    ];
    for dir in &refused {
        let target = json!({ "tetherDir": tether_dir, "dir": dir });
        let with = |extra: Value| {
            let mut params = target.clone();
            params.as_object_mut().expect("an object").extend(extra.as_object().expect("an object").clone());
            params
        };
        for (method, params) in [
            ("session/read", with(json!({ "offset": 0 }))),
            ("session/rename", with(json!({ "title": "stolen" }))),
            ("session/delete", target.clone()),
        ] {
            let error = host.call(method, params).expect_err(&format!("{method} on {}", dir.display()));
            assert_eq!(error_code(&error), SESSION_FAILED, "{method} on {}: {error}", dir.display());
        }
    }
    assert!(outside.path().join(EVENTS_FILE).exists() && other_dir.exists() && session_dir.exists());
    assert!(!std::fs::read_to_string(outside.path().join("meta.json")).expect("meta").contains("stolen"));

    // The link is not a session of the list either: it resolves outside.
    let listed: Vec<String> = list(&mut host, &tether_dir).into_iter().map(|session| session.dir).collect();
    assert_eq!(listed, [session_dir.to_str().expect("UTF-8").to_owned()]);
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).expect("the path exists")
}

/// The events of a session's log, after checking that it reads without a problem and that its
/// seqs count from 1 without a gap.
fn logged_events(session_dir: &Path) -> Vec<LogEvent> {
    let text = std::fs::read_to_string(session_dir.join(EVENTS_FILE)).expect("the event log is UTF-8");
    let read = read_log(&text);
    assert_eq!((read.problems.as_slice(), read.cut_tail), (&[][..], false), "{text}");
    let seqs: Vec<u64> = read.entries.iter().map(|entry| entry.seq).collect();
    assert_eq!(seqs, (1..=read.entries.len() as u64).collect::<Vec<_>>(), "{text}");
    read.entries.into_iter().map(|entry| entry.event).collect()
}

#[test]
fn a_continued_session_logs_on_after_the_agent_that_died_and_lists_as_one_session() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let tether_dir = workspace.tether_dir();
    let (first, session_dir) = spawn_agent(&mut host, &workspace, ONE_LINE_AGENT, None);
    let first_prompt = prompt(1, "Fix the login bug");
    converse(&mut host, first, std::slice::from_ref(&first_prompt));
    host.agent_event("agent/exited", first);
    let meta = std::fs::read(session_dir.join("meta.json")).expect("meta.json");

    // Restarted as soon as the exit is heard of, as a host does when the person asks for it.
    let (second, continued_dir) = spawn_agent(&mut host, &workspace, ECHO_AGENT, Some(&session_dir));
    assert_eq!(continued_dir, canonical(&session_dir), "the result names the folder continued");
    // An audit record about the first agent that comes in late is numbered with the rest.
    let late_record = r#"{"kind":"cancelled","reason":"the agent died"}"#;
    host.audit(first, late_record);
    let second_prompt = prompt(1, "Go on");
    converse(&mut host, second, std::slice::from_ref(&second_prompt));

    let sessions = list(&mut host, &tether_dir);
    let text = shown(&sessions, &[(first, "first"), (second, "second")]);
    expect![[r#"
        first: "Fix the login bug" turns=2 agentSession=None live=Some("second")
    "#]]
    .assert_eq(&text);
    host.call("agent/kill", json!({ "agentId": second })).expect("the second agent can be killed");

    assert_eq!(
        logged_events(&session_dir),
        [
            LogEvent::ToAgent(first_prompt.clone()),
            LogEvent::FromAgent(first_prompt),
            LogEvent::Exited { code: Some(0), signal: None, killed: false },
            LogEvent::Host(late_record.to_owned()),
            LogEvent::ToAgent(second_prompt.clone()),
            LogEvent::FromAgent(second_prompt),
            LogEvent::Exited { code: None, signal: Some(15), killed: true },
        ]
    );
    assert_eq!(std::fs::read(session_dir.join("meta.json")).expect("meta.json"), meta, "meta.json is kept");
    let audit = std::fs::read_to_string(session_dir.join("audit.jsonl")).expect("the audit log");
    assert!(audit.contains(r#""reason":"the agent died""#), "{audit}");
}

#[test]
fn after_a_restart_a_last_line_cut_short_by_a_crash_is_cut_off_before_the_next_agent_writes() {
    let workspace = Workspace::new();
    let first_prompt = prompt(1, "One");
    let session_dir = {
        let tetherd = Tetherd::start(&[]);
        let mut host = tetherd.host();
        let (first, session_dir) = spawn_session(&mut host, &workspace);
        converse(&mut host, first, std::slice::from_ref(&first_prompt));
        host.call("agent/kill", json!({ "agentId": first })).expect("the first agent can be killed");
        session_dir
    };
    // What a crash of tetherd in the middle of a write leaves.
    let log = session_dir.join(EVENTS_FILE);
    let mut text = std::fs::read_to_string(&log).expect("the log");
    let cut_line = r#"{"seq":4,"time":"2026-11-23T10:00:0"#;
    text.push_str(cut_line);
    std::fs::write(&log, &text).expect("a cut line appended");

    // The next tetherd (after a restart of VS Code) continues the session.
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (second, _) = spawn_agent(&mut host, &workspace, ECHO_AGENT, Some(&session_dir));
    let second_prompt = prompt(1, "Two");
    converse(&mut host, second, std::slice::from_ref(&second_prompt));
    host.call("agent/kill", json!({ "agentId": second })).expect("the second agent can be killed");

    let killed = LogEvent::Exited { code: None, signal: Some(15), killed: true };
    assert_eq!(
        logged_events(&session_dir),
        [
            LogEvent::ToAgent(first_prompt.clone()),
            LogEvent::FromAgent(first_prompt),
            killed.clone(),
            LogEvent::ToAgent(second_prompt.clone()),
            LogEvent::FromAgent(second_prompt),
            killed,
        ]
    );
    let logged = tetherd.stderr();
    assert!(logged.contains("cut off the event log's last line"), "{logged}");
    assert!(logged.contains(&cut_line.replace('"', "\\\"")), "the cut line is named: {logged}");
}

#[test]
fn a_folder_outside_the_sessions_or_whose_agent_runs_is_not_continued_and_its_agent_never_starts() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let (first, session_dir) = spawn_session(&mut host, &workspace);

    // A folder outside, and a link inside sessions/ that leads to it.
    let outside = tempfile::tempdir().expect("a temporary directory");
    let link = workspace.sessions().join("link");
    std::os::unix::fs::symlink(outside.path(), &link).expect("a symbolic link");
    // A session folder of another workspace.
    let other = Workspace::new();
    let (other_agent, other_dir) = spawn_session(&mut host, &other);
    host.call("agent/kill", json!({ "agentId": other_agent })).expect("the other agent can be killed");

    // The agent would leave a file in its working directory if it ever started.
    let agent_cwd = tempfile::tempdir().expect("a temporary directory");
    let started = agent_cwd.path().join("started");
    let try_spawn = |host: &mut Client, tether_dir: Option<&str>, continued: &Path| {
        let mut params = session_params(&workspace, "touch started; exec cat", Some(continued));
        params["cwd"] = json!(agent_cwd.path());
        params["tetherDir"] = json!(tether_dir);
        host.call("agent/spawn", params)
    };
    let tether_dir = workspace.tether_dir();
    let refused: Vec<(Option<&str>, PathBuf, &str)> = vec![
        (Some(&tether_dir), session_dir.clone(), "is still running"),
        (Some(&tether_dir), outside.path().to_owned(), "is not a session folder"),
        (Some(&tether_dir), link.clone(), "is a symbolic link"),
        (Some(&tether_dir), workspace.sessions(), "is not a session folder"),
        (Some(&tether_dir), session_dir.join(".."), "is not a session folder"),
        (Some(&tether_dir), session_dir.join(EVENTS_FILE), "is not a session folder"),
        (Some(&tether_dir), other_dir.clone(), "is not a session folder"),
        (Some(&tether_dir), workspace.sessions().join("missing"), "there is no session folder"),
        (None, session_dir.clone(), "sessionDir needs tetherDir"),
    ];
    for (tether_dir, dir, why) in refused {
        let error = try_spawn(&mut host, tether_dir, &dir).expect_err(&format!("{} is refused", dir.display()));
        assert_eq!(error_code(&error), SPAWN_FAILED, "{}: {error}", dir.display());
        let message = error["message"].as_str().expect("a message");
        assert!(message.starts_with("cannot continue the session") && message.contains(why), "{message}");
    }
    assert!(!started.exists(), "no refused agent ran");
    assert!(std::fs::read_dir(outside.path()).expect("the folder").next().is_none(), "nothing written outside");
    assert_eq!(std::fs::read_dir(workspace.sessions()).expect("sessions").count(), 2, "no folder was created");

    // Once its agent has stopped, the folder can be continued, by one agent at a time.
    host.call("agent/kill", json!({ "agentId": first })).expect("the first agent can be killed");
    let second = try_spawn(&mut host, Some(&tether_dir), &session_dir).expect("the folder is free");
    support::eventually("the agent to start", || started.exists());
    let error = try_spawn(&mut host, Some(&tether_dir), &session_dir).expect_err("the second agent has it");
    assert!(error["message"].as_str().expect("a message").contains("is still running"), "{error}");
    let second = second["agentId"].as_u64().expect("agentId");
    host.call("agent/kill", json!({ "agentId": second })).expect("the second agent can be killed");
}

/// A repository can commit a `.tether` folder. Links planted in it (a session's event log, its
/// audit log, its `meta.json`, `sessions/`, `.tether` itself) never make tetherd read or write
/// the file they lead to: what it would touch is refused with an error that says why.
#[test]
fn links_planted_in_the_tether_folder_are_never_followed() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let tether_dir = workspace.tether_dir();
    // The person's own file, which a repository would like tetherd to append to or show.
    let home = tempfile::tempdir().expect("a temporary directory");
    let bashrc = home.path().join(".bashrc");
    let original = "export SECRET=hunter2\n";
    std::fs::write(&bashrc, original).expect("a file outside the workspace");

    // A crafted session whose event log is a link to it.
    let crafted = workspace.sessions().join("20261123-100000-1");
    std::fs::create_dir_all(&crafted).expect("a session folder");
    std::fs::write(crafted.join("meta.json"), r#"{"agent":"Demo","created":"2026-11-23T10:00:00.000Z"}"#)
        .expect("a meta.json");
    std::os::unix::fs::symlink(&bashrc, crafted.join(EVENTS_FILE)).expect("a symbolic link");

    // Continuing it is refused before its agent starts (the agent would leave a file).
    let agent_cwd = tempfile::tempdir().expect("a temporary directory");
    let mut params = session_params(&workspace, "touch started; exec cat", Some(&crafted));
    params["cwd"] = json!(agent_cwd.path());
    let error = host.call("agent/spawn", params).expect_err("a session whose log is a link is not continued");
    let message = error["message"].as_str().expect("a message");
    assert!(message.contains("is a symbolic link, which Tether does not follow"), "{message}");
    // Reading it is refused, and says why without quoting the file.
    let read = json!({ "tetherDir": tether_dir, "dir": crafted, "offset": 0 });
    let error = host.call("session/read", read).expect_err("a log that is a link is not read");
    let message = error["message"].as_str().expect("a message");
    assert!(message.contains("is a symbolic link") && !message.contains("hunter2"), "{message}");
    // The list shows it as a session that said nothing: its log is not read for a title.
    let listed = list(&mut host, &tether_dir);
    let summary = listed.iter().find(|summary| Path::new(&summary.dir) == crafted).expect("the crafted session");
    assert_eq!((summary.title.as_str(), summary.turns), ("New session", 0));

    // A session of the person's whose audit log has been replaced by a link: the record is
    // dropped rather than appended to the file the link leads to.
    let (agent_id, session_dir) = spawn_session(&mut host, &workspace);
    std::os::unix::fs::symlink(&bashrc, session_dir.join("audit.jsonl")).expect("a symbolic link");
    host.audit(agent_id, r#"{"kind":"note","text":"appended"}"#);
    host.handled_so_far();
    // A meta.json that is a link is not read: its folder is not a session of the list.
    let elsewhere_meta = home.path().join("meta.json");
    std::fs::write(&elsewhere_meta, r#"{"agent":"Elsewhere","created":"2026-11-23T10:00:00.000Z"}"#).expect("a file");
    std::fs::remove_file(session_dir.join("meta.json")).expect("meta.json");
    std::os::unix::fs::symlink(&elsewhere_meta, session_dir.join("meta.json")).expect("a symbolic link");
    let listed = list(&mut host, &tether_dir);
    assert!(listed.iter().all(|summary| summary.meta.agent != "Elsewhere"), "{listed:?}");
    host.call("agent/kill", json!({ "agentId": agent_id })).expect("the agent can be killed");

    // `.tether` or its `sessions/` as a link: no session folder is made through it (the agent
    // still runs, without logs, as when the workspace is read-only), and the history says why.
    for linked_part in [".tether", ".tether/sessions"] {
        let linked = Workspace::new();
        let target = tempfile::tempdir().expect("a temporary directory");
        let link = linked.root.path().join(linked_part);
        std::fs::create_dir_all(link.parent().expect("a parent")).expect("the parent folder");
        std::os::unix::fs::symlink(target.path(), &link).expect("a symbolic link");
        let (agent_id, _pid, session_dir) = host.spawn_with_session(session_params(&linked, ECHO_AGENT, None));
        assert_eq!(session_dir, None, "{linked_part} as a link");
        assert!(
            std::fs::read_dir(target.path()).expect("the target").next().is_none(),
            "nothing written through {linked_part}"
        );
        let error = host.call("session/list", json!({ "tetherDir": linked.tether_dir() })).expect_err("refused");
        assert!(error["message"].as_str().expect("a message").contains("is a symbolic link"), "{error}");
        host.call("agent/kill", json!({ "agentId": agent_id })).expect("the agent can be killed");
    }

    assert!(!agent_cwd.path().join("started").exists(), "the crafted session's agent never ran");
    assert_eq!(std::fs::read_to_string(&bashrc).expect("the file"), original, "the file outside is untouched");
}
