//! Faults survived over real processes, with nothing lost: tetherd killed with SIGKILL in the
//! middle of a turn, the agent killed while a permission card waits, and a session log that
//! cannot be written (a file size limit, as a full disk would).
//!
//! The engine is the real [`HostEngine`], driven here as the VS Code host drives it: its
//! `StartSidecar` starts a real tetherd (each on a fresh socket in one socket folder, as the
//! extension does), its writes go to that tetherd's socket and what the socket says comes back
//! in; the agent is the scripted test agent, a real process speaking ACP over real pipes. What
//! the person would see is the webview's thread, folded from the engine's posts.
//!
//! Every test checks that no event was lost: the session log's messages from the agent are the
//! agent's own record of what it wrote (`--record-stdout`), up to the fault.

#![cfg(unix)]

mod support;

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{
    TIMEOUT, Tetherd, assert_log_matches_record, eventually, fold, live_group_members, messages_from_agent,
    recorded_messages, tether_test_agent,
};
use tether_core::framing::DEFAULT_MAX_LINE_BYTES;
use tether_core::host::HostEngine;
use tether_core::host_api::{AgentProfile, EngineConfig, HostAction};
use tether_core::intent::Intent;
use tether_core::session_log::{EVENTS_FILE, LogEvent, ReadLog, read_log};
use tether_core::thread::{Entry, PermissionOutcome, Thread, ThreadPatch, TurnState};
use tether_core::webview::{HostToWebview, SessionStatus, SessionView, ViewEvent, WebviewToHost};

/// The name of the agent profile the tests' engine runs.
const PROFILE: &str = "Scripted";

/// What the host's socket reader hands the test: bytes, or the end of the connection.
enum FromSocket {
    Bytes(Vec<u8>),
    Closed(String),
}

/// The VS Code host, played natively: the engine, the tetherds it started, and the webview's view.
struct Host {
    engine: HostEngine,
    clock: Instant,
    /// The folder of every tetherd's socket (and its record of the processes it started).
    sockets: tempfile::TempDir,
    /// Shell commands each tetherd is started after (a `ulimit`), if any.
    tetherd_setup: Option<String>,
    /// Every tetherd started, oldest first.
    tetherds: Vec<Tetherd>,
    /// The connection to the newest tetherd, and its number.
    stream: Option<UnixStream>,
    connection: u64,
    from_sockets: mpsc::Receiver<(u64, FromSocket)>,
    to_test: mpsc::Sender<(u64, FromSocket)>,
    /// What the webview shows.
    thread: Thread,
    session: Option<SessionView>,
    /// The messages shown to the person (VS Code notifications), in order.
    shown: Vec<String>,
}

/// The workspace of a test (where the session's `.tether` is), and beside it the scenario and
/// the files the agent keeps about itself, which are no part of the workspace's snapshots.
struct Workspace {
    dir: tempfile::TempDir,
    agent_files: tempfile::TempDir,
}

impl Workspace {
    fn new(scenario: &str) -> Workspace {
        let dir = tempfile::tempdir().expect("a temporary workspace");
        let agent_files = tempfile::tempdir().expect("a folder for the agent's files");
        std::fs::write(agent_files.path().join("scenario.toml"), scenario).expect("the scenario is written");
        Workspace { dir, agent_files }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn scenario(&self) -> PathBuf {
        self.agent_files.path().join("scenario.toml")
    }

    /// The agent's record of every line it wrote (every agent of the session appends to it).
    fn record(&self) -> PathBuf {
        self.agent_files.path().join("record.jsonl")
    }

    /// The pid of the agent started last.
    fn agent_pid(&self) -> u32 {
        let text = std::fs::read_to_string(self.agent_files.path().join("agent.pid")).expect("the agent wrote its pid");
        text.trim().parse().expect("a pid")
    }

    /// The session's folder: the one folder under `.tether/sessions`.
    fn session_dir(&self) -> PathBuf {
        let sessions = self.path().join(".tether/sessions");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&sessions)
            .expect("the sessions folder exists")
            .map(|entry| entry.expect("a session folder").path())
            .collect();
        assert_eq!(dirs.len(), 1, "one session: {dirs:?}");
        dirs.remove(0)
    }

    fn log(&self) -> ReadLog {
        let text = std::fs::read_to_string(self.session_dir().join(EVENTS_FILE)).expect("the session log exists");
        assert!(text.is_empty() || text.ends_with('\n'), "the log ends with a whole line");
        read_log(&text)
    }

    /// The engine's configuration: the test agent on this workspace's scenario as the only agent,
    /// offering `session/load` (`--state-dir`) when `resumable`.
    fn config(&self, resumable: bool) -> EngineConfig {
        let path = |path: PathBuf| path.to_str().expect("a UTF-8 temporary path").to_owned();
        let mut args = vec![
            "--scenario".to_owned(),
            path(self.scenario()),
            "--record-stdout".to_owned(),
            path(self.record()),
            "--pid-file".to_owned(),
            path(self.agent_files.path().join("agent.pid")),
        ];
        if resumable {
            args.extend(["--state-dir".to_owned(), path(self.agent_files.path().join("state"))]);
        }
        EngineConfig {
            token: support::TOKEN.to_owned(),
            client_name: "Tether".to_owned(),
            client_version: "0.1.0".to_owned(),
            workspace_root: path(self.path().to_owned()),
            workspace_folders: Vec::new(),
            tether_dir: Some(path(self.path().join(".tether"))),
            demo_agent_command: None,
            agents: serde_json::Value::Null,
            builtin_profiles: vec![AgentProfile {
                name: PROFILE.to_owned(),
                command: path(tether_test_agent()),
                args,
                env: Default::default(),
                cwd: None,
                protocol: Default::default(),
            }],
            missing_builtins: Vec::new(),
            default_profile: Some(PROFILE.to_owned()),
            permissions: Default::default(),
            follow_agent: false,
            workspace_trusted: true,
            claude_cli: Default::default(),
            mcp_servers: serde_json::Value::Null,
        }
    }
}

impl Host {
    /// Starts the engine (which starts tetherd) and waits for its agent session to be ready.
    fn start(config: EngineConfig, tetherd_setup: Option<String>) -> Host {
        let (to_test, from_sockets) = mpsc::channel();
        let mut host = Host {
            engine: HostEngine::new(config),
            clock: Instant::now(),
            sockets: tempfile::tempdir().expect("a socket folder"),
            tetherd_setup,
            tetherds: Vec::new(),
            stream: None,
            connection: 0,
            from_sockets,
            to_test,
            thread: Thread::default(),
            session: None,
            shown: Vec::new(),
        };
        let now = host.now();
        host.engine.handle_webview(ViewEvent::Ready, now);
        host.run_until("the session is ready", Host::is_ready);
        host
    }

    fn now(&self) -> u64 {
        u64::try_from(self.clock.elapsed().as_millis()).expect("a test is shorter than that") + 1
    }

    fn is_ready(&self) -> bool {
        self.session.as_ref().is_some_and(|session| session.status == SessionStatus::Ready)
    }

    fn newest_tetherd(&self) -> &Tetherd {
        self.tetherds.last().expect("a tetherd was started")
    }

    /// Carries out what the engine asks for.
    fn pump(&mut self) {
        while let Some(action) = self.engine.poll_action() {
            match action {
                HostAction::StartSidecar => self.start_tetherd(),
                HostAction::SidecarWrite { data } => {
                    if let Some(stream) = &mut self.stream {
                        // A tetherd that is gone is reported by the reader, as the closed socket.
                        let _gone = stream.write_all(data.as_bytes());
                    }
                }
                HostAction::PostWebview { message } => match *message {
                    HostToWebview::Snapshot { snapshot } => {
                        assert_eq!(snapshot.earlier, 0, "a short thread's snapshot holds all of it");
                        self.thread = Thread::default();
                        for (index, entry) in snapshot.entries.into_iter().enumerate() {
                            let index = u32::try_from(index).expect("a short thread");
                            self.thread.apply(&ThreadPatch::Push { index, entry });
                        }
                        self.thread.apply(&ThreadPatch::Turn { state: snapshot.turn });
                        self.session = Some(snapshot.session);
                    }
                    HostToWebview::Patch { session, thread } => {
                        if session.is_some() {
                            self.session = session;
                        }
                        for patch in &thread {
                            self.thread.apply(patch);
                        }
                    }
                    HostToWebview::EarlierEntries { .. } => panic!("a short thread has no earlier entries to send"),
                    HostToWebview::Mentions { .. }
                    | HostToWebview::AddMention { .. }
                    | HostToWebview::PromptReturned { .. } => {}
                },
                HostAction::ShowMessage { text, .. } => self.shown.push(text),
                _ => {}
            }
        }
    }

    /// Starts a tetherd on a fresh socket in the socket folder, and connects the engine to it.
    fn start_tetherd(&mut self) {
        let socket = self.sockets.path().join(format!("run/tetherd-{}.sock", self.tetherds.len()));
        let dir = tempfile::tempdir().expect("a folder for tetherd");
        let tetherd = match &self.tetherd_setup {
            Some(setup) => Tetherd::start_after(dir, socket, &[], setup),
            None => {
                Tetherd::start_at(dir, socket, &[]).unwrap_or_else(|stderr| panic!("tetherd did not start:\n{stderr}"))
            }
        };
        let stream = UnixStream::connect(&tetherd.socket).expect("tetherd accepts the connection");
        self.connection += 1;
        let (connection, to_test) = (self.connection, self.to_test.clone());
        let mut reader = stream.try_clone().expect("the stream can be cloned");
        std::thread::spawn(move || {
            let mut buffer = vec![0; 64 * 1024];
            let closed = loop {
                match reader.read(&mut buffer) {
                    Ok(0) => break "the socket closed".to_owned(),
                    Ok(read) => {
                        if to_test.send((connection, FromSocket::Bytes(buffer[..read].to_vec()))).is_err() {
                            return;
                        }
                    }
                    Err(error) => break format!("reading the socket failed: {error}"),
                }
            };
            // The test may be over already.
            let _over = to_test.send((connection, FromSocket::Closed(closed)));
        });
        self.stream = Some(stream);
        self.tetherds.push(tetherd);
        let now = self.now();
        self.engine.handle_sidecar_connected(now);
    }

    /// Feeds the engine what comes from tetherd and the time, until `done` holds.
    fn run_until(&mut self, what: &str, done: impl Fn(&Host) -> bool) {
        let deadline = Instant::now() + 2 * TIMEOUT;
        loop {
            self.pump();
            if done(self) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the thread: {:#?}\nthe session: {:#?}\nshown: {:#?}",
                self.thread.entries(),
                self.session,
                self.shown
            );
            let now = self.now();
            let wait = self.engine.poll_timeout().map_or(50, |at| at.saturating_sub(now)).clamp(1, 50);
            if let Ok((connection, received)) = self.from_sockets.recv_timeout(Duration::from_millis(wait)) {
                let now = self.now();
                // What an earlier connection says comes after its close was handled: it is late.
                if connection == self.connection {
                    match received {
                        FromSocket::Bytes(bytes) => self.engine.handle_sidecar_bytes(&bytes, now),
                        FromSocket::Closed(reason) => {
                            self.stream = None;
                            self.engine.handle_sidecar_closed(&reason, now);
                        }
                    }
                }
            }
            let now = self.now();
            if self.engine.poll_timeout().is_some_and(|at| at <= now) {
                self.engine.handle_timeout(now);
            }
        }
    }

    fn send(&mut self, message: impl Into<WebviewToHost>) {
        let now = self.now();
        self.engine.handle_webview(message, now);
    }

    fn prompt(&mut self, text: &str) {
        self.send(Intent::Prompt { text: text.to_owned(), attachments: Vec::new() });
    }

    /// The text of every agent message in the thread, in order.
    fn agent_text(&self) -> String {
        agent_text(self.thread.entries())
    }

    fn turn(&self) -> &TurnState {
        self.thread.turn()
    }

    fn notices(&self) -> Vec<String> {
        self.thread
            .entries()
            .iter()
            .filter_map(|entry| match entry {
                Entry::Notice(notice) => Some(notice.text.clone()),
                _ => None,
            })
            .collect()
    }
}

/// The text of every agent message among `entries`, in order.
fn agent_text(entries: &[Entry]) -> String {
    entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Agent(message) => Some(message.chunks.iter().map(|chunk| chunk.text.as_str()).collect::<String>()),
            _ => None,
        })
        .collect()
}

/// The methods the engine sent to the agents of a session, from its log, in order.
fn methods_sent(log: &ReadLog) -> Vec<String> {
    log.entries
        .iter()
        .filter_map(|entry| match &entry.event {
            LogEvent::ToAgent(message) => serde_json::from_str::<Value>(message).ok(),
            _ => None,
        })
        .filter_map(|message| message["method"].as_str().map(str::to_owned))
        .collect()
}

/// Whether process `pid` is alive (a zombie is dead, merely not reaped yet).
fn is_alive(pid: u32) -> bool {
    support::proc_stat(pid).is_some_and(|(state, ..)| state != 'Z' && state != 'X')
}

/// The test agent's built-in scenario for faults: "count" streams, then works on for as long as
/// it is let; "edit" asks before it edits and waits; anything else is answered at once.
const FAULTS: &str = include_str!("../../tether-test-agent/scenarios/faults.toml");

#[test]
fn tetherd_killed_mid_turn_is_started_again_and_the_session_goes_on_with_nothing_lost() {
    let workspace = Workspace::new(FAULTS);
    let mut host = Host::start(workspace.config(true), None);
    host.prompt("Please count");
    host.run_until("the turn streams", |host| host.agent_text().ends_with("still counting."));
    assert_eq!(host.turn(), &TurnState::Running);
    let first_tetherd = host.newest_tetherd().pid;
    let first_agent = workspace.agent_pid();

    host.newest_tetherd().signal(nix::sys::signal::Signal::SIGKILL);
    // The webview hears of the reopened session (its turn ended) before the agent is ready.
    host.run_until("a new tetherd and a new agent, its session resumed", |host| {
        host.tetherds.len() == 2 && matches!(host.turn(), TurnState::Failed { .. }) && host.is_ready()
    });

    // The turn the dead tetherd cut off shows as interrupted, with why; what it streamed stays.
    let why = "the agent was interrupted: Tether lost the connection to tetherd (the socket closed) during the turn";
    assert_eq!(host.turn(), &TurnState::Failed { message: why.to_owned() });
    assert_eq!(host.agent_text(), "One, two, three. Four, five, six: still counting.");
    assert!(
        host.thread.entries().iter().any(|entry| matches!(entry, Entry::ToolCall(call) if call.id == "look-1")),
        "the tool call is still there"
    );
    assert_eq!(host.shown, Vec::<String>::new(), "nothing for the person to do: {:?}", host.shown);
    // tetherd runs again, a new process; the old agent is gone with the old tetherd (the new
    // tetherd killed its orphaned group at start), and a new agent runs.
    assert_ne!(host.newest_tetherd().pid, first_tetherd);
    assert!(is_alive(host.newest_tetherd().pid));
    eventually("the old agent's group is gone", || live_group_members(first_agent).is_empty());
    let second_agent = workspace.agent_pid();
    assert_ne!(second_agent, first_agent);
    assert!(is_alive(second_agent));
    // The new agent resumed the agent's session rather than starting an empty one.
    let log = workspace.log();
    assert_eq!(
        methods_sent(&log),
        ["initialize", "session/new", "session/prompt", "initialize", "session/load"],
        "the session is resumed with session/load"
    );

    // The session goes on: a new prompt is answered by the new agent.
    host.prompt("Are you there?");
    host.run_until("the new turn's end", |host| matches!(host.turn(), TurnState::Ended { .. }));
    assert_eq!(host.turn(), &TurnState::Ended { stop_reason: "end_turn".to_owned() });
    assert!(host.agent_text().ends_with("Answered by the agent started again."), "{}", host.agent_text());

    // Nothing was lost: the log has every message both agents wrote, and the thread the log
    // folds to has what the person saw before the kill.
    let log = workspace.log();
    assert_log_matches_record(&log, &recorded_messages(&workspace.record(), DEFAULT_MAX_LINE_BYTES as u64));
    assert!(fold(&log).contains("still counting."));
}

/// The permission of the tool call `id` in the thread, if it has one.
fn permission_of(thread: &Thread, id: &str) -> Option<tether_core::thread::PermissionView> {
    thread.entries().iter().find_map(|entry| match entry {
        Entry::ToolCall(call) if call.id == id => call.permission.clone(),
        _ => None,
    })
}

#[test]
fn the_agent_killed_while_a_card_waits_settles_the_card_and_a_new_prompt_starts_it_again() {
    let workspace = Workspace::new(FAULTS);
    let mut host = Host::start(workspace.config(true), None);
    host.prompt("Please edit notes.md");
    host.run_until("the card", |host| permission_of(&host.thread, "edit-1").is_some());
    let card = permission_of(&host.thread, "edit-1").expect("the card");
    assert_eq!(card.outcome, None, "the card waits for the person");
    let first_agent = workspace.agent_pid();

    nix::sys::signal::kill(nix::unistd::Pid::from_raw(first_agent as i32), nix::sys::signal::Signal::SIGKILL)
        .expect("the agent can be killed");
    host.run_until("the turn's end", |host| matches!(host.turn(), TurnState::Failed { .. } | TurnState::Ended { .. }));

    // The card is settled, not left to be clicked; the turn ends with what happened.
    assert_eq!(permission_of(&host.thread, "edit-1").expect("the card").outcome, Some(PermissionOutcome::Cancelled));
    assert_eq!(
        host.turn(),
        &TurnState::Failed { message: "the agent was ended by signal 9 during the turn".to_owned() }
    );
    assert_eq!(host.notices(), ["The agent was ended by signal 9."]);
    assert_eq!(
        host.shown,
        [format!(
            "Tether: the agent {PROFILE:?} was ended by signal 9. Restart it, or send a prompt, to go on with the session."
        )]
    );
    // Answering the card now sends the agent nothing (there is none) and changes nothing.
    host.send(Intent::AnswerPermission { key: card.key, option_id: card.options[0].id.clone() });
    host.pump();
    assert_eq!(permission_of(&host.thread, "edit-1").expect("the card").outcome, Some(PermissionOutcome::Cancelled));

    // A new prompt starts the agent again, resumes its session and is answered.
    host.prompt("Are you there?");
    host.run_until("the new turn's end", |host| matches!(host.turn(), TurnState::Ended { .. }));
    assert_eq!(host.turn(), &TurnState::Ended { stop_reason: "end_turn".to_owned() });
    assert!(host.agent_text().ends_with("Answered by the agent started again."), "{}", host.agent_text());
    assert_ne!(workspace.agent_pid(), first_agent);
    let log = workspace.log();
    assert_eq!(
        methods_sent(&log),
        ["initialize", "session/new", "session/prompt", "initialize", "session/load", "session/prompt"]
    );

    // Nothing was lost: every message the killed agent wrote (the request included) and every
    // one of the new agent's is in the log.
    assert_log_matches_record(&log, &recorded_messages(&workspace.record(), DEFAULT_MAX_LINE_BYTES as u64));
    assert!(messages_from_agent(&log).iter().any(|message| message.contains("session/request_permission")));
}

/// How big a file tetherd may write in the log tests (`ulimit -f`, in 512-byte blocks): room for
/// the start of a session and part of a turn, not for the whole turn.
const FILE_SIZE_LIMIT_BLOCKS: u64 = 256;

/// Starts tetherd so that a write past [`FILE_SIZE_LIMIT_BLOCKS`] fails with EFBIG (SIGXFSZ
/// ignored), as a write to a full disk fails with ENOSPC. Its agents inherit the limit, which is
/// no trouble: their record stays smaller than the log, which has every line and more.
fn file_size_limit() -> String {
    format!("ulimit -f {FILE_SIZE_LIMIT_BLOCKS}\ntrap '' XFSZ")
}

/// A turn far longer than the file size limit: 2,000 chunks of about 100 characters.
fn long_turn_scenario() -> String {
    let text: String = (0..2000).map(|n| format!("{n:04} {}\n", "x".repeat(94))).collect();
    format!(
        "description = \"streams more than the log may hold\"\n\n[[prompt]]\nsteps = [\n  {{ say = \"Before the fault. \" }},\n  \
         {{ say = \"\"\"{text}\"\"\", chunks = 2000, interval_ms = 2 }},\n  {{ say = \"The end.\" }},\n]\n"
    )
}

#[test]
fn a_session_log_that_cannot_be_written_stops_the_agent_and_nothing_unlogged_is_forwarded() {
    let workspace = Workspace::new(&long_turn_scenario());
    let dir = tempfile::tempdir().expect("a folder for tetherd");
    let socket = dir.path().join("run/tetherd.sock");
    let tetherd = Tetherd::start_after(dir, socket, &[], &file_size_limit());
    let mut host = tetherd.host();
    let path = |path: PathBuf| path.to_str().expect("a UTF-8 temporary path").to_owned();
    let (agent_id, _, session_dir) = host.spawn_with_session(json!({
        "name": "test agent",
        "command": tether_test_agent(),
        "args": ["--scenario", path(workspace.scenario()), "--record-stdout", path(workspace.record())],
        "cwd": workspace.path(),
        "tetherDir": workspace.path().join(".tether"),
    }));
    let session_dir = session_dir.expect("a session folder");
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    host.send_to_agent(agent_id, initialize);
    let cwd = path(workspace.path().to_owned());
    host.send_to_agent(
        agent_id,
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "session/new", "params": { "cwd": cwd, "mcpServers": [] } })
            .to_string(),
    );
    // Every agent event from here on is kept, in order, for the comparison with the log.
    let mut events = Vec::new();
    let session_id = loop {
        let line = host.wait_for("the session", |line| line.params()["agentId"] == json!(agent_id));
        let answer = line.params()["message"]["id"] == json!(1);
        let session_id = line.params()["message"]["result"]["sessionId"].clone();
        events.push(line);
        if answer {
            break session_id;
        }
    };
    host.send_to_agent(
        agent_id,
        &json!({ "jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                 "params": { "sessionId": session_id, "prompt": [{ "type": "text", "text": "go" }] } })
        .to_string(),
    );
    events.extend(host.agent_events_until_exit(agent_id));

    // The hosts are told which log failed and why, then the agent is ended (SIGTERM).
    let log_path = session_dir.join(EVENTS_FILE);
    let failures: Vec<&Value> =
        events.iter().filter(|line| line.method() == Some("agent/logFailed")).map(|line| line.params()).collect();
    assert_eq!(failures.len(), 1, "one agent/logFailed");
    assert_eq!(failures[0]["path"], json!(path(log_path.clone())));
    assert_eq!(failures[0]["error"], json!("cannot append to it: File too large (os error 27)"));
    let exited = events.last().expect("agent/exited").params();
    assert_eq!((exited["signal"].clone(), exited["killed"].clone()), (json!(15), json!(false)), "{exited}");
    assert!(!events.iter().any(|line| line.params()["message"]["id"] == json!(2)), "the turn never ended");

    // Nothing a host got is missing from the log, and the log is the start of the agent's record,
    // ending with a whole line: the line that did not fit is in the record only.
    let forwarded: Vec<String> = events
        .iter()
        .filter(|line| line.method() == Some("agent/message"))
        .map(support::Line::raw_agent_message)
        .collect();
    let log = read_log(&std::fs::read_to_string(&log_path).expect("the log exists"));
    let logged = messages_from_agent(&log);
    assert!(
        forwarded == logged,
        "every message forwarded is in the log, and nothing else: {} forwarded, {} logged; the first that differs: {:?}",
        forwarded.len(),
        logged.len(),
        forwarded.iter().zip(&logged).position(|(forwarded, logged)| forwarded != logged)
    );
    let record = recorded_messages(&workspace.record(), DEFAULT_MAX_LINE_BYTES as u64);
    assert!(
        logged.len() > 10 && logged.len() < record.len(),
        "the log stopped mid-turn ({} of {})",
        logged.len(),
        record.len()
    );
    assert_log_matches_record(&log, &record[..logged.len()]);
    assert!(std::fs::read(&log_path).expect("the log").ends_with(b"\n"), "the log ends with a whole line");
    // tetherd itself goes on.
    host.handled_so_far();
}

#[test]
fn the_person_is_told_which_log_cannot_be_written_and_the_turn_ends_without_anything_unsaved_shown() {
    let workspace = Workspace::new(&long_turn_scenario());
    let mut host = Host::start(workspace.config(false), Some(file_size_limit()));
    host.prompt("Stream a lot");
    host.run_until("the turn's end", |host| matches!(host.turn(), TurnState::Failed { .. } | TurnState::Ended { .. }));

    let log_path = workspace.session_dir().join(EVENTS_FILE);
    let text = format!(
        "Tether cannot write this session's log {} (cannot append to it: File too large (os error 27)), so it stopped the agent: the session does not go on unrecorded. Make room on the disk (or fix the file), then Restart or send a prompt to go on.",
        log_path.display()
    );
    assert_eq!(host.shown, std::slice::from_ref(&text));
    assert_eq!(
        host.turn(),
        &TurnState::Failed {
            message: "the session's log could not be written, so Tether stopped the agent".to_owned()
        }
    );
    assert_eq!(host.notices(), [text]);
    host.run_until("the agent's exit", |host| host.session.as_ref().is_some_and(|session| session.can_restart));
    assert_eq!(
        host.session.as_ref().map(|session| session.status.clone()),
        Some(SessionStatus::Exited {
            message: "The agent was stopped: the session's log cannot be written".to_owned()
        })
    );

    // What the person saw of the agent is exactly what the log has: nothing unsaved was shown.
    let log = workspace.log();
    let info = tether_core::acp::ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let policy = tether_core::permissions::PermissionPolicy::new(tether_core::permissions::Mode::Ask, 1);
    let (replayed, _) = tether_core::acp::AcpClient::replay(info, "/workspace", 1, policy, &log);
    let saved = agent_text(replayed.thread().entries());
    assert!(saved.starts_with("Before the fault. 0000 "), "{saved:.80}");
    assert!(!saved.contains("The end."), "the turn did not fit in the log");
    assert_eq!(host.agent_text(), saved);
    let record = recorded_messages(&workspace.record(), DEFAULT_MAX_LINE_BYTES as u64);
    let logged = messages_from_agent(&log).len();
    assert_log_matches_record(&log, &record[..logged]);
}
