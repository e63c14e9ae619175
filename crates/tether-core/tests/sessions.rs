//! Tests of the host engine's session life against a scripted tetherd: reopening the workspace's
//! last session at start (a restart of VS Code), going on with an agent that still runs (a window
//! reload), Restart after the agent died, and the history's commands.
//!
//! Each test plays tetherd's part line by line; what the person would see is the webview's
//! snapshot, rendered one entry a line.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;

use tether_core::host::HostEngine;
use tether_core::host_api::{EngineConfig, ExportFormat, HostAction};
use tether_core::intent::Intent;
use tether_core::webview::{HostToWebview, SessionView, ViewEvent, ViewSnapshot};

const DIR: &str = "/ws/.tether/sessions/20261123-100000-1";

fn config() -> EngineConfig {
    EngineConfig {
        token: "secret-token".to_owned(),
        client_name: "Tether".to_owned(),
        client_version: "0.1.0".to_owned(),
        workspace_root: "/ws".to_owned(),
        workspace_folders: Vec::new(),
        demo_agent_command: Some("/ext/bin/tether-test-agent".to_owned()),
        agents: serde_json::Value::Null,
        builtin_profiles: Vec::new(),
        missing_builtins: Vec::new(),
        default_profile: None,
        tether_dir: Some("/ws/.tether".to_owned()),
        permissions: Default::default(),
        follow_agent: false,
        workspace_trusted: true,
        claude_cli: Default::default(),
        mcp_servers: serde_json::Value::Null,
    }
}

/// Plays tetherd: answers the engine's requests by method, and remembers what it was sent.
struct Tetherd {
    engine: HostEngine,
    now: u64,
    /// Every line the engine wrote to tetherd, in order.
    sent: Vec<serde_json::Value>,
    /// Every other action, in order.
    actions: Vec<HostAction>,
    snapshot: Option<ViewSnapshot>,
}

impl Tetherd {
    /// An engine connected to this tetherd, which has accepted its hello.
    fn connect() -> Self {
        let mut tetherd = Tetherd {
            engine: HostEngine::new(config()),
            now: 0,
            sent: Vec::new(),
            actions: Vec::new(),
            snapshot: None,
        };
        tetherd.engine.handle_webview(ViewEvent::Ready, 0);
        tetherd.engine.handle_sidecar_connected(0);
        tetherd.answer("hello", r#"{"tetherdVersion":"0.1.0","pid":9}"#);
        tetherd
    }

    fn pump(&mut self) {
        while let Some(action) = self.engine.poll_action() {
            match action {
                HostAction::SidecarWrite { data } => {
                    self.sent.extend(data.lines().map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()))
                }
                HostAction::PostWebview { message } => match *message {
                    HostToWebview::Snapshot { snapshot } => self.snapshot = Some(snapshot),
                    HostToWebview::Patch { .. }
                    | HostToWebview::EarlierEntries { .. }
                    | HostToWebview::Mentions { .. }
                    | HostToWebview::AddMention { .. }
                    | HostToWebview::PromptReturned { .. } => {}
                },
                other => self.actions.push(other),
            }
        }
    }

    /// The last request the engine sent to tetherd with this method.
    fn request(&mut self, method: &str) -> serde_json::Value {
        self.pump();
        self.sent.iter().rev().find(|line| line["method"] == method).cloned().unwrap_or_else(|| {
            panic!("the engine sent no {method}; it sent {:#?}", self.sent);
        })
    }

    fn answer(&mut self, method: &str, result: &str) {
        let id = self.request(method)["id"].clone();
        self.feed(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#));
    }

    fn feed(&mut self, line: &str) {
        self.now += 1;
        self.engine.handle_sidecar_bytes(format!("{line}\n").as_bytes(), self.now);
        self.pump();
    }

    /// A line of agent `agent_id`'s, forwarded with its place in the session's log.
    fn agent_says(&mut self, agent_id: u64, seq: Option<u64>, message: &str) {
        let seq = seq.map(|seq| format!(r#","seq":{seq}"#)).unwrap_or_default();
        self.feed(&format!(
            r#"{{"jsonrpc":"2.0","method":"agent/message","params":{{"agentId":{agent_id},"message":{message}{seq}}}}}"#
        ));
    }

    /// The messages the engine sent to agent `agent_id`, one a line.
    fn sent_to_agent(&mut self, agent_id: u64) -> Vec<serde_json::Value> {
        self.pump();
        self.sent
            .iter()
            .filter(|line| line["method"] == "agent/send" && line["params"]["agentId"] == agent_id)
            .map(|line| line["params"]["message"].clone())
            .collect()
    }

    /// Answers the last request with this method the engine sent to agent `agent_id`, as the
    /// agent, forwarded with `seq`; returns the request.
    fn agent_answers(&mut self, agent_id: u64, seq: u64, method: &str, result: &str) -> serde_json::Value {
        let request = self.sent_to_agent(agent_id).into_iter().rev().find(|message| message["method"] == method);
        let request = request.unwrap_or_else(|| panic!("agent {agent_id} was sent no {method}"));
        let id = &request["id"];
        self.agent_says(agent_id, Some(seq), &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#));
        request
    }

    /// A snapshot of what the chat shows now (the webview reloads and asks for one).
    fn chat(&mut self) -> String {
        self.engine.handle_webview(ViewEvent::Ready, self.now);
        self.pump();
        let snapshot = self.snapshot.clone().unwrap();
        let mut out = String::new();
        for entry in &snapshot.entries {
            writeln!(out, "{}", serde_json::to_string(entry).unwrap()).unwrap();
        }
        writeln!(out, "turn: {}", serde_json::to_string(&snapshot.turn).unwrap()).unwrap();
        writeln!(out, "status: {}", serde_json::to_string(&snapshot.session.status).unwrap()).unwrap();
        writeln!(out, "can restart: {}", snapshot.session.can_restart).unwrap();
        out
    }

    fn session(&mut self) -> SessionView {
        self.chat();
        self.snapshot.clone().unwrap().session
    }
}

/// One line of an event log.
fn log_line(seq: u64, event: &str, body: &str) -> String {
    format!(r#"{{"seq":{seq},"time":"2026-11-23T10:00:{:02}.000Z","event":"{event}",{body}}}"#, seq % 60) + "\n"
}

fn to_agent(seq: u64, message: &str) -> String {
    log_line(seq, "toAgent", &format!(r#""message":{message}"#))
}

fn from_agent(seq: u64, message: &str) -> String {
    log_line(seq, "fromAgent", &format!(r#""message":{message}"#))
}

fn chunk(text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
    )
}

/// The log of a session whose agent (which can load sessions) answered one prompt in two chunks;
/// `open_turn` leaves the second turn's prompt unanswered after one chunk.
fn session_log(open_turn: bool) -> String {
    let mut log = String::new();
    log += &to_agent(1, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    log += &from_agent(
        2,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"name":"test-agent","version":"1.0"}}}"#,
    );
    log += &to_agent(3, r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/ws","mcpServers":[]}}"#);
    log += &from_agent(4, r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    log += &to_agent(
        5,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"Hello"}]}}"#,
    );
    log += &from_agent(6, &chunk("Hi "));
    log += &from_agent(7, &chunk("there."));
    log += &from_agent(8, r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
    if open_turn {
        log += &to_agent(
            9,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"Count slowly"}]}}"#,
        );
        log += &from_agent(10, &chunk("one "));
    }
    log
}

fn listed(turns: u32, live_agent: Option<u64>) -> String {
    let live = live_agent.map_or("null".to_owned(), |id| id.to_string());
    format!(
        r#"{{"sessions":[{{"dir":"{DIR}","meta":{{"agent":"Demo","command":"/old/tether-test-agent","args":["--scenario","demo"],"cwd":"/ws","created":"2026-11-23T10:00:00.000Z"}},"title":"Hello","lastActivity":"2026-11-23T10:00:08.000Z","turns":{turns},"agentSessionId":"s1","liveAgent":{live}}}]}}"#
    )
}

/// Answers `session/read` with `log` in two pieces, as tetherd does for a long log.
fn read_in_two_pieces(tetherd: &mut Tetherd, log: &str) {
    let cut = log[..log.len() / 2].rfind('\n').unwrap() + 1;
    let piece = |text: &str, next: usize, eof: bool| {
        format!(r#"{{"text":{},"next":{next},"eof":{eof}}}"#, serde_json::to_string(text).unwrap())
    };
    let first = tetherd.request("session/read");
    assert_eq!(first["params"]["offset"], 0);
    tetherd.answer("session/read", &piece(&log[..cut], cut, false));
    let second = tetherd.request("session/read");
    assert_eq!(second["params"]["offset"], cut, "the next piece is asked from where the last one ended");
    tetherd.answer("session/read", &piece(&log[cut..], log.len(), true));
}

#[test]
fn at_start_the_last_session_is_reopened_and_its_agent_session_loaded() {
    let mut tetherd = Tetherd::connect();
    tetherd.request("session/list");
    tetherd.answer("session/list", &listed(1, None));
    read_in_two_pieces(&mut tetherd, &session_log(false));

    // The agent is started again in the same session folder (its log goes on), with the
    // profile as the settings have it now rather than the path recorded then.
    let spawn = tetherd.request("agent/spawn");
    expect_test::expect![[r#"{"name":"Demo","command":"/ext/bin/tether-test-agent","args":["--scenario","demo"],"env":{},"cwd":"/ws","tetherDir":"/ws/.tether","sessionDir":"/ws/.tether/sessions/20261123-100000-1"}"#]]
        .assert_eq(&spawn["params"].to_string());
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":2,"pid":100,"sessionDir":"{DIR}"}}"#));
    // The new agent's events are its own, whatever their number: were the log ever numbered
    // wrong (two writers), skipping by the replayed seq would drop its answers.
    let initialize =
        tetherd.agent_answers(2, 5, "initialize", r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}"#);
    // Request ids go on from the log's, so the log never holds two requests with one id.
    assert_eq!(initialize["id"], 3);
    let load = tetherd.sent_to_agent(2).last().unwrap().clone();
    expect_test::expect![[
        r#"{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"mcpServers":[],"cwd":"/ws","sessionId":"s1"}}"#
    ]]
    .assert_eq(&load.to_string());
    // The agent replays the conversation while loading; the thread has it already.
    tetherd.agent_says(
        2,
        Some(13),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"Hello"}}}}"#,
    );
    tetherd.agent_says(2, Some(14), &chunk("Hi there."));
    tetherd.agent_answers(2, 15, "session/load", "{}");
    expect_test::expect![[r#"
        {"type":"user","text":"Hello","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Hi there."}]}
        {"type":"notice","level":"error","text":"The agent was no longer running when Tether came back.","detail":null}
        {"type":"notice","level":"info","text":"The agent resumed this session.","detail":null}
        turn: {"type":"ended","stopReason":"end_turn"}
        status: {"type":"ready"}
        can restart: false
    "#]]
    .assert_eq(&tetherd.chat());
}

#[test]
fn at_start_an_agent_still_running_is_taken_over_without_losing_or_repeating_a_chunk() {
    let mut tetherd = Tetherd::connect();
    let log = session_log(true);
    // While the engine lists the sessions, tetherd delivers what the agent said while no window
    // was attached: a chunk that is in the log already (seq 10) and one that is not (seq 11).
    tetherd.agent_says(1, Some(10), &chunk("one "));
    tetherd.agent_says(1, Some(11), &chunk("two "));
    tetherd.answer("session/list", &listed(2, Some(1)));
    read_in_two_pieces(&mut tetherd, &log);
    tetherd.pump();
    assert!(
        !tetherd.sent.iter().any(|line| line["method"] == "agent/spawn" || line["method"] == "agent/kill"),
        "the running agent is kept, not replaced: {:#?}",
        tetherd.sent
    );
    // The stream goes on live, and the turn ends with the agent's answer to the prompt the
    // previous window sent.
    tetherd.agent_says(1, Some(12), &chunk("three."));
    tetherd.agent_says(1, Some(13), r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#);
    expect_test::expect![[r#"
        {"type":"user","text":"Hello","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Hi there."}]}
        {"type":"user","text":"Count slowly","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"one two three."}]}
        turn: {"type":"ended","stopReason":"end_turn"}
        status: {"type":"ready"}
        can restart: false
    "#]]
    .assert_eq(&tetherd.chat());
    // The person can go on: the next prompt goes to the same agent, with a new id.
    tetherd.engine.handle_webview(Intent::Prompt { text: "Again".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.answer("snapshot/take", r#"{"tree":"t1"}"#);
    let prompt = tetherd.sent_to_agent(1).last().unwrap().clone();
    assert_eq!((prompt["method"].as_str(), prompt["id"].as_u64()), (Some("session/prompt"), Some(4)));
}

#[test]
fn a_workspace_whose_last_session_is_empty_starts_a_new_one() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", &listed(0, None));
    let spawn = tetherd.request("agent/spawn");
    assert_eq!(spawn["params"].get("sessionDir"), None, "a new session gets a new folder");
}

#[test]
fn an_agent_that_dies_mid_turn_can_be_restarted_and_resumes_its_session() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":1,"pid":100,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_says(
        1,
        Some(2),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
    );
    tetherd.agent_says(1, Some(4), r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
    tetherd.engine.handle_webview(Intent::Prompt { text: "Hello".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.answer("snapshot/take", r#"{"tree":"t1"}"#);
    tetherd.agent_says(1, Some(6), &chunk("Hi "));
    tetherd.feed(
        r#"{"jsonrpc":"2.0","method":"agent/stderr","params":{"agentId":1,"line":"panic: out of cheese","seq":7}}"#,
    );
    tetherd.feed(r#"{"jsonrpc":"2.0","method":"agent/exited","params":{"agentId":1,"code":101,"signal":null,"killed":false,"seq":8}}"#);
    expect_test::expect![[r#"
        {"type":"user","text":"Hello","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Hi "}]}
        {"type":"notice","level":"error","text":"The agent exited with code 101.","detail":"panic: out of cheese"}
        turn: {"type":"failed","message":"the agent exited with code 101 during the turn"}
        status: {"type":"exited","message":"The agent exited with code 101"}
        can restart: true
    "#]]
    .assert_eq(&tetherd.chat());

    tetherd.engine.handle_webview(Intent::Restart, tetherd.now);
    let spawn = tetherd.request("agent/spawn");
    assert_eq!(spawn["params"]["sessionDir"], DIR, "the restarted agent goes on in the same session folder");
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":2,"pid":101,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_says(
        2,
        Some(10),
        r#"{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
    );
    let load = tetherd.sent_to_agent(2).last().unwrap().clone();
    assert_eq!((load["method"].as_str(), load["params"]["sessionId"].as_str()), (Some("session/load"), Some("s1")));
    tetherd.agent_says(2, Some(12), r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    let session = tetherd.session();
    assert!(!session.can_restart, "the agent runs again");
    assert!(tetherd.chat().contains("The agent resumed this session."));
}

#[test]
fn the_history_lists_renames_deletes_and_exports_sessions() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", r#"{"agentId":1,"pid":100,"sessionDir":"/ws/.tether/sessions/now"}"#);

    tetherd.engine.handle_command(Intent::ShowHistory, tetherd.now);
    tetherd.answer("session/list", &listed(1, None));
    let shown = tetherd.actions.iter().rev().find_map(|action| match action {
        HostAction::ShowHistory { items } => Some(serde_json::to_string(items).unwrap()),
        _ => None,
    });
    expect_test::expect![[r#"[{"id":"/ws/.tether/sessions/20261123-100000-1","title":"Hello","agent":"Demo","lastActivity":"2026-11-23T10:00:08.000Z","turns":1,"source":"tether","current":false,"live":false,"restores":0,"fromCheckpoint":false}]"#]]
        .assert_eq(&shown.unwrap());

    // A rename goes to tetherd, and the history is listed again after it.
    tetherd
        .engine
        .handle_command(Intent::RenameSession { id: DIR.to_owned(), title: "Greeting".to_owned() }, tetherd.now);
    let rename = tetherd.request("session/rename");
    assert_eq!((rename["params"]["dir"].as_str(), rename["params"]["title"].as_str()), (Some(DIR), Some("Greeting")));
    let lists_before = tetherd.sent.iter().filter(|line| line["method"] == "session/list").count();
    tetherd.answer("session/rename", "{}");
    assert_eq!(tetherd.sent.iter().filter(|line| line["method"] == "session/list").count(), lists_before + 1);

    // The session on screen cannot be deleted; another one can.
    tetherd.engine.handle_command(Intent::DeleteSession { id: "/ws/.tether/sessions/now".to_owned() }, tetherd.now);
    tetherd.pump();
    assert!(!tetherd.sent.iter().any(|line| line["method"] == "session/delete"), "not in the history's last list");
    tetherd.engine.handle_command(Intent::DeleteSession { id: DIR.to_owned() }, tetherd.now);
    assert_eq!(tetherd.request("session/delete")["params"]["dir"], DIR);

    // The log is exported as the file it is; a session not on screen is read to export it as
    // Markdown.
    tetherd
        .engine
        .handle_command(Intent::ExportSession { id: Some(DIR.to_owned()), format: ExportFormat::Jsonl }, tetherd.now);
    tetherd.pump();
    assert!(tetherd.actions.contains(&HostAction::ExportFile {
        source: format!("{DIR}/events.jsonl"),
        suggested_name: "tether-hello.jsonl".to_owned(),
    }));
    tetherd.engine.handle_command(
        Intent::ExportSession { id: Some(DIR.to_owned()), format: ExportFormat::Markdown },
        tetherd.now,
    );
    read_in_two_pieces(&mut tetherd, &session_log(false));
    let markdown = tetherd.actions.iter().rev().find_map(|action| match action {
        HostAction::SaveExport { suggested_name, content } => Some((suggested_name.clone(), content.clone())),
        _ => None,
    });
    let (name, content) = markdown.unwrap();
    assert_eq!(name, "tether-hello.md");
    assert!(content.contains("Hi there."), "the export has the conversation: {content}");
}

#[test]
fn sessions_only_the_agent_keeps_are_listed_and_opened_with_the_history_it_replays() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", r#"{"agentId":1,"pid":100,"sessionDir":"/ws/.tether/sessions/now"}"#);
    tetherd.agent_answers(
        1,
        2,
        "initialize",
        r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"list":{}}}}"#,
    );
    tetherd.agent_answers(1, 4, "session/new", r#"{"sessionId":"s-now"}"#);

    tetherd.engine.handle_command(Intent::ShowHistory, tetherd.now);
    tetherd.answer("session/list", &listed(1, None));
    let asked = tetherd.agent_answers(
        1,
        6,
        "session/list",
        r#"{"sessions":[{"sessionId":"s1","cwd":"/ws","title":"Hello"},{"sessionId":"a-9","cwd":"/ws","title":"Old work","updatedAt":"2026-11-01T09:00:00Z"},{"sessionId":"s-now","cwd":"/ws"}]}"#,
    );
    assert_eq!(asked["params"]["cwd"], "/ws", "the agent is asked for this workspace's sessions");
    // The agent's list is merged in: sessions Tether already has (s1 is in its log, s-now is on
    // screen) are not listed twice.
    let shown = tetherd.actions.iter().rev().find_map(|action| match action {
        HostAction::ShowHistory { items } => {
            Some(items.iter().map(|item| format!("{} {:?} {}", item.id, item.source, item.title)).collect::<Vec<_>>())
        }
        _ => None,
    });
    assert_eq!(shown.unwrap(), ["/ws/.tether/sessions/20261123-100000-1 Tether Hello", "agent:a-9 Agent Old work"]);

    tetherd.engine.handle_command(Intent::OpenSession { id: "agent:a-9".to_owned() }, tetherd.now);
    let spawn = tetherd.request("agent/spawn");
    assert_eq!(spawn["params"].get("sessionDir"), None, "a session new to Tether gets its own folder");
    tetherd.answer("agent/spawn", r#"{"agentId":2,"pid":101,"sessionDir":"/ws/.tether/sessions/a9"}"#);
    tetherd.agent_answers(2, 2, "initialize", r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}"#);
    let load = tetherd.sent_to_agent(2).last().unwrap().clone();
    assert_eq!((load["method"].as_str(), load["params"]["sessionId"].as_str()), (Some("session/load"), Some("a-9")));
    let update = |kind: &str, text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"a-9","update":{{"sessionUpdate":"{kind}","content":{{"type":"text","text":"{text}"}}}}}}}}"#
        )
    };
    tetherd.agent_says(2, Some(4), &update("user_message_chunk", "Refactor the parser"));
    tetherd.agent_says(2, Some(5), &update("agent_message_chunk", "Done: the parser is split in two."));
    tetherd.agent_answers(2, 6, "session/load", "{}");
    expect_test::expect![[r#"
        {"type":"user","text":"Refactor the parser","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Done: the parser is split in two."}]}
        {"type":"notice","level":"info","text":"The agent resumed this session.","detail":null}
        turn: {"type":"idle"}
        status: {"type":"ready"}
        can restart: false
    "#]]
    .assert_eq(&tetherd.chat());
}

/// An agent that never answers `initialize`: the header says which step is slow and for how
/// long, and offers Stop; Stop has tetherd kill it, says so in the thread, and once tetherd
/// says it is gone, Restart starts it again in the same session.
#[test]
fn an_agent_that_hangs_while_starting_shows_its_progress_and_can_be_stopped() {
    use tether_core::webview::SessionStatus;

    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":1,"pid":100,"sessionDir":"{DIR}"}}"#));
    assert_eq!(tetherd.sent_to_agent(1).last().unwrap()["method"], "initialize");
    // Seven seconds on, a webview that opens is told how long the step has taken so far.
    tetherd.now += 7000;
    let session = tetherd.session();
    assert_eq!(
        session.status,
        SessionStatus::Starting { step: "Initializing the agent".to_owned(), elapsed_ms: 7000, agent_said: None }
    );
    assert!(session.can_stop, "Stop is offered while the agent starts");
    assert!(!session.can_restart);

    tetherd.engine.handle_webview(Intent::StopAgent, tetherd.now);
    assert_eq!(tetherd.request("agent/kill")["params"]["agentId"], 1);
    let session = tetherd.session();
    assert_eq!(
        session.status,
        SessionStatus::Starting { step: "Stopping the agent".to_owned(), elapsed_ms: 0, agent_said: None }
    );
    assert!(!session.can_stop && !session.can_restart, "Restart waits until tetherd says the agent is gone");
    tetherd.feed(r#"{"jsonrpc":"2.0","method":"agent/exited","params":{"agentId":1,"code":null,"signal":15,"killed":true,"seq":2}}"#);
    tetherd.answer("agent/kill", "{}");
    expect_test::expect![[r#"
        {"type":"notice","level":"warning","text":"The agent did not finish starting; Tether stopped it.","detail":null}
        turn: {"type":"idle"}
        status: {"type":"exited","message":"The agent was stopped"}
        can restart: true
    "#]]
    .assert_eq(&tetherd.chat());
    assert!(
        !tetherd.actions.iter().any(|action| matches!(action, HostAction::ShowMessage { .. })),
        "stopping on the person's word is no error to pop up: {:?}",
        tetherd.actions
    );

    tetherd.engine.handle_webview(Intent::Restart, tetherd.now);
    let spawn = tetherd.request("agent/spawn");
    assert_eq!(spawn["params"]["sessionDir"], DIR, "the restarted agent goes on in the same session folder");
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":2,"pid":101,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_answers(2, 4, "initialize", r#"{"protocolVersion":1}"#);
    tetherd.agent_answers(2, 6, "session/new", r#"{"sessionId":"s2"}"#);
    let session = tetherd.session();
    assert_eq!((session.status, session.can_stop, session.can_restart), (SessionStatus::Ready, false, false));
}

/// An agent that ignores `session/cancel` and keeps asking for permissions: Stop agent is offered
/// as soon as the cancel was sent; it kills the agent, ends the turn as cancelled, settles the
/// request still waiting, and Restart resumes the agent's session for the next prompt.
#[test]
fn an_agent_that_ignores_cancel_can_be_stopped_and_restarted() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":1,"pid":100,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_answers(1, 2, "initialize", r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}"#);
    tetherd.agent_answers(1, 4, "session/new", r#"{"sessionId":"s1"}"#);
    assert!(!tetherd.session().can_stop, "a ready agent is not offered to be stopped");
    tetherd.engine.handle_webview(Intent::Prompt { text: "Hello".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.answer("snapshot/take", r#"{"tree":"t1"}"#);
    tetherd.agent_says(1, Some(6), &chunk("Working "));
    assert!(!tetherd.session().can_stop, "a running turn is cancelled first");

    tetherd.engine.handle_webview(Intent::Cancel, tetherd.now);
    assert_eq!(tetherd.sent_to_agent(1).last().unwrap()["method"], "session/cancel");
    assert!(tetherd.session().can_stop, "Stop agent is offered while the agent has not ended the turn");
    // The agent goes on as if nothing was asked, and asks for a permission.
    let tool_call = r#"{"toolCallId":"t1","title":"Run make","kind":"execute","status":"pending"}"#;
    tetherd.agent_says(
        1,
        Some(8),
        &format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{tool_call},"options":[{{"optionId":"once","name":"Allow","kind":"allow_once"}}]}}}}"#
        ),
    );

    tetherd.engine.handle_webview(Intent::StopAgent, tetherd.now);
    assert_eq!(tetherd.request("agent/kill")["params"]["agentId"], 1);
    // The old agent's last words and its exit belong to a stopped agent: they change nothing.
    tetherd.agent_says(1, Some(9), &chunk("still working"));
    tetherd.feed(r#"{"jsonrpc":"2.0","method":"agent/exited","params":{"agentId":1,"code":null,"signal":15,"killed":true,"seq":10}}"#);
    tetherd.answer("agent/kill", "{}");
    expect_test::expect![[r#"
        {"type":"user","text":"Hello","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Working "}]}
        {"type":"toolCall","id":"t1","title":"Run make","kind":"execute","status":"cancelled","content":[],"locations":[],"rawInput":null,"command":null,"rawOutput":null,"permission":{"key":4294967296,"options":[{"id":"once","name":"Allow","kind":"allow_once"}],"outcome":{"type":"cancelled"}}}
        {"type":"notice","level":"warning","text":"The agent did not stop when asked; Tether stopped it.","detail":null}
        turn: {"type":"ended","stopReason":"cancelled"}
        status: {"type":"exited","message":"The agent was stopped"}
        can restart: true
    "#]]
    .assert_eq(&tetherd.chat());
    assert!(!tetherd.session().can_stop);

    tetherd.engine.handle_webview(Intent::Restart, tetherd.now);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":2,"pid":101,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_answers(2, 12, "initialize", r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}"#);
    let load = tetherd.sent_to_agent(2).last().unwrap().clone();
    assert_eq!((load["method"].as_str(), load["params"]["sessionId"].as_str()), (Some("session/load"), Some("s1")));
    tetherd.agent_answers(2, 14, "session/load", "{}");
    assert!(tetherd.chat().contains("The agent resumed this session."));
    tetherd.engine.handle_webview(Intent::Prompt { text: "Again".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.answer("snapshot/take", r#"{"tree":"t2"}"#);
    assert_eq!(tetherd.sent_to_agent(2).last().unwrap()["method"], "session/prompt", "the next prompt goes out");
}

/// A cancel the agent honours ends the turn, and with it the offer to stop the agent.
#[test]
fn an_agent_that_honours_cancel_is_not_offered_to_be_stopped() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":1,"pid":100,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_answers(1, 2, "initialize", r#"{"protocolVersion":1}"#);
    tetherd.agent_answers(1, 4, "session/new", r#"{"sessionId":"s1"}"#);
    tetherd.engine.handle_webview(Intent::Prompt { text: "Hello".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.answer("snapshot/take", r#"{"tree":"t1"}"#);
    tetherd.engine.handle_webview(Intent::Cancel, tetherd.now);
    assert!(tetherd.session().can_stop);
    tetherd.agent_answers(1, 7, "session/prompt", r#"{"stopReason":"cancelled"}"#);
    let session = tetherd.session();
    assert!(!session.can_stop && !session.can_restart, "the agent ended the turn itself and goes on");
    tetherd.engine.handle_command(Intent::StopAgent, tetherd.now);
    assert_eq!(tetherd.request("agent/kill")["params"]["agentId"], 1, "the command stops a ready agent too");
    assert!(tetherd.chat().contains(r#""text":"Tether stopped the agent.""#));
}

/// Claude's adapter refuses the prompt until the person signs in; they dismiss the choice. The
/// header then offers "Sign in", which asks again, and so does the next prompt they send, which
/// goes to the agent once it accepts the sign-in.
#[test]
fn a_dismissed_sign_in_can_be_asked_again_and_the_prompt_sent_meanwhile_goes_after_it() {
    let asked = |tetherd: &mut Tetherd| {
        tetherd.pump();
        let count =
            tetherd.actions.iter().filter(|action| matches!(action, HostAction::AskAuthentication { .. })).count();
        tetherd.actions.clear();
        count
    };
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":1,"pid":100,"sessionDir":"{DIR}"}}"#));
    let methods = r#"[{"id":"claude-login","name":"Log in with Claude Code"}]"#;
    tetherd.agent_answers(1, 2, "initialize", &format!(r#"{{"protocolVersion":1,"authMethods":{methods}}}"#));
    tetherd.agent_answers(1, 4, "session/new", r#"{"sessionId":"s1"}"#);
    tetherd.engine.handle_webview(Intent::Prompt { text: "Fix it".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.answer("snapshot/take", r#"{"tree":"t1"}"#);
    let prompt = tetherd.sent_to_agent(1).into_iter().rfind(|message| message["method"] == "session/prompt").unwrap();
    let refusal = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32000,"message":"Authentication required"}}}}"#,
        prompt["id"]
    );
    tetherd.agent_says(1, Some(6), &refusal);
    assert_eq!(asked(&mut tetherd), 1, "the person is asked to sign in");
    // Dismissed: nothing more happens until the person says so.
    assert!(tetherd.session().can_sign_in, "the header offers Sign in");

    tetherd.engine.handle_webview(Intent::SignIn, tetherd.now);
    assert_eq!(asked(&mut tetherd), 1, "Sign in asks again");
    tetherd
        .engine
        .handle_webview(Intent::Prompt { text: "Fix it now".to_owned(), attachments: Vec::new() }, tetherd.now);
    assert_eq!(asked(&mut tetherd), 1, "a prompt asks again too");

    tetherd.engine.handle_command(
        Intent::Authenticate { method_id: "claude-login".to_owned(), env: Default::default() },
        tetherd.now,
    );
    assert!(!tetherd.session().can_sign_in, "not while the agent checks the sign-in");
    tetherd.agent_answers(1, 7, "authenticate", "{}");
    tetherd.answer("snapshot/take", r#"{"tree":"t2"}"#);
    let sent = tetherd.sent_to_agent(1).into_iter().rfind(|message| message["method"] == "session/prompt").unwrap();
    assert_eq!(sent["params"]["prompt"][0]["text"], "Fix it now", "the prompt sent meanwhile goes once signed in");
    assert!(!tetherd.session().can_sign_in);
}

/// The workspace's history as a repository could commit it: one session of an agent the person
/// never configured, whose (old-style) `meta.json` records a command to run.
fn listed_unconfigured() -> String {
    format!(
        r#"{{"sessions":[{{"dir":"{DIR}","meta":{{"agent":"Repo agent","command":"/bin/sh","args":["-c","touch /tmp/pwned"],"cwd":"/","created":"2026-11-23T10:00:00.000Z"}},"title":"Hello","lastActivity":"2026-11-23T10:00:08.000Z","turns":1,"agentSessionId":"s1","liveAgent":null}}]}}"#
    )
}

#[test]
fn a_session_whose_agent_is_not_configured_is_shown_but_its_recorded_command_never_runs() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", &listed_unconfigured());
    // At start it is not reopened: the person's default agent starts a new session, in a new
    // folder and in the workspace, and the chat says where the earlier session went.
    let spawn = tetherd.request("agent/spawn");
    expect_test::expect![[r#"{"name":"Demo","command":"/ext/bin/tether-test-agent","args":["--scenario","demo"],"env":{},"cwd":"/ws","tetherDir":"/ws/.tether"}"#]]
        .assert_eq(&spawn["params"].to_string());
    assert!(!tetherd.sent.iter().any(|line| line["method"] == "session/read"), "the earlier log is not read");
    tetherd.answer("agent/spawn", r#"{"agentId":1,"pid":100,"sessionDir":"/ws/.tether/sessions/now"}"#);
    expect_test::expect![[r#"
        {"type":"notice","level":"warning","text":"The earlier session \"Hello\" used \"Repo agent\", which is not configured. It is in the history.","detail":null}
        turn: {"type":"idle"}
        status: {"type":"starting","step":"Initializing the agent","elapsedMs":0}
        can restart: false
    "#]]
    .assert_eq(&tetherd.chat());

    // Opened from the history, it shows its transcript and how to go on; nothing is started
    // for it, not even by Restart.
    tetherd.engine.handle_command(Intent::ShowHistory, tetherd.now);
    tetherd.answer("session/list", &listed_unconfigured());
    tetherd.engine.handle_command(Intent::OpenSession { id: DIR.to_owned() }, tetherd.now);
    read_in_two_pieces(&mut tetherd, &session_log(true));
    tetherd.engine.handle_webview(Intent::Restart, tetherd.now);
    tetherd.pump();
    let spawns = tetherd.sent.iter().filter(|line| line["method"] == "agent/spawn").count();
    assert_eq!(spawns, 1, "only the person's own agent was ever spawned: {:#?}", tetherd.sent);
    expect_test::expect![[r#"
        {"type":"user","text":"Hello","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Hi there."}]}
        {"type":"user","text":"Count slowly","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"one "}]}
        {"type":"notice","level":"error","text":"The agent was no longer running when Tether came back.","detail":null}
        {"type":"notice","level":"warning","text":"This session used \"Repo agent\", which is not configured, so Tether does not start it. Choose an agent in the header to go on in a new session.","detail":null}
        turn: {"type":"failed","message":"the agent was no longer running when Tether came back during the turn"}
        status: {"type":"failed","message":"\"Repo agent\" is not configured: choose an agent"}
        can restart: false
    "#]]
    .assert_eq(&tetherd.chat());

    // Choosing an agent goes on in a new session with the person's own profile.
    tetherd.engine.handle_webview(Intent::SelectAgent { name: "Demo".to_owned() }, tetherd.now);
    let spawn = tetherd.request("agent/spawn");
    assert_eq!(
        (spawn["params"]["command"].as_str(), spawn["params"].get("sessionDir")),
        (Some("/ext/bin/tether-test-agent"), None)
    );
}

#[test]
fn a_lost_tetherd_is_started_again_the_turn_shows_as_interrupted_and_a_prompt_sent_meanwhile_goes_after_the_resume() {
    let mut tetherd = Tetherd::connect();
    tetherd.answer("session/list", r#"{"sessions":[]}"#);
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":1,"pid":100,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_says(
        1,
        Some(2),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}"#,
    );
    tetherd.agent_says(1, Some(4), r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);

    // tetherd dies while the second turn streams: it is started again at once, with no word to
    // the person, and a prompt sent while it starts waits for the session.
    tetherd.engine.handle_sidecar_closed("tetherd exited (signal SIGKILL)", tetherd.now);
    tetherd.pump();
    assert!(tetherd.actions.contains(&HostAction::StartSidecar), "tetherd is started again");
    assert!(!tetherd.actions.iter().any(|action| matches!(action, HostAction::ShowMessage { .. })));
    assert!(tetherd.session().can_restart, "the prompt box stays usable");
    tetherd.engine.handle_webview(Intent::Prompt { text: "Go on".to_owned(), attachments: Vec::new() }, tetherd.now);
    tetherd.pump();
    assert!(!tetherd.actions.iter().any(|action| matches!(action, HostAction::ShowMessage { .. })));

    // The new tetherd: the session is reopened from its log, and its agent resumed.
    tetherd.engine.handle_sidecar_connected(tetherd.now);
    tetherd.answer("hello", r#"{"tetherdVersion":"0.1.0","pid":10}"#);
    let list = tetherd.request("session/list");
    assert_eq!(list["params"]["tetherDir"], "/ws/.tether");
    tetherd.answer("session/list", &listed(2, None));
    read_in_two_pieces(&mut tetherd, &session_log(true));
    tetherd.answer("agent/spawn", &format!(r#"{{"agentId":2,"pid":101,"sessionDir":"{DIR}"}}"#));
    tetherd.agent_answers(2, 11, "initialize", r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}"#);
    let prompts = |tetherd: &mut Tetherd| {
        tetherd.sent_to_agent(2).into_iter().filter(|message| message["method"] == "session/prompt").count()
    };
    assert_eq!(prompts(&mut tetherd), 0, "the prompt waits for the session");
    tetherd.agent_answers(2, 12, "session/load", "{}");
    tetherd.answer("snapshot/take", r#"{"tree":"t2"}"#);
    let prompt = tetherd.sent_to_agent(2).into_iter().find(|message| message["method"] == "session/prompt").unwrap();
    assert_eq!(prompt["params"]["prompt"][0]["text"], "Go on");
    expect_test::expect![[r#"
        {"type":"user","text":"Hello","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"Hi there."}]}
        {"type":"user","text":"Count slowly","attachments":[]}
        {"type":"agent","chunks":[{"kind":"text","text":"one "}]}
        {"type":"notice","level":"error","text":"The agent was interrupted: Tether lost the connection to tetherd (tetherd exited (signal SIGKILL)).","detail":null}
        {"type":"notice","level":"info","text":"The agent resumed this session.","detail":null}
        {"type":"user","text":"Go on","attachments":[]}
        turn: {"type":"running"}
        status: {"type":"ready"}
        can restart: false
    "#]]
    .assert_eq(&tetherd.chat());
}
