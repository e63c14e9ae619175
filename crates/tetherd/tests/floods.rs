//! Floods survived with bounded memory, through the real tetherd and real agents over real
//! pipes: a single line a hundred times the size tetherd accepts, an agent that stops reading its
//! input while the host goes on sending, and an agent that sends a thousand requests at once to
//! the real engine (driven here as the host drives it). (The terminal flood is in `terminals.rs`.)
//!
//! Each test prints its figures (bytes through, time, tetherd's RSS before the flood and its peak
//! from VmHWM) and checks what the flood added against a cap made of tetherd's configured buffer
//! sizes, far below what went through. VmHWM is the peak over tetherd's whole life, so the check
//! does not depend on when it is read.

#![cfg(unix)]

mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use support::{
    Client, Line, Tetherd, assert_log_matches_record, fold, peak_rss_kib, recorded_messages, resident_kib, sh,
    tether_test_agent,
};
use tether_core::acp::{AcpClient, ClientInfo, MAX_AGENT_REQUESTS_WAITING};
use tether_core::permissions::{Mode, PermissionPolicy};
use tether_core::session_log::{EVENTS_FILE, read_log};
use tether_core::thread::{Entry, NoticeLevel, TurnState};

/// The longest agent line the tetherd of these tests accepts (`--max-line-bytes`).
const MAX_LINE_BYTES: u64 = 4 * 1024 * 1024;

/// The line the agent prints: a hundred megabytes, with no newline until its end.
const HUGE_LINE_BYTES: u64 = 100_000_000;

/// The agent's stdin queue (tetherd's `STDIN_QUEUE_BUDGET_BYTES`).
const STDIN_QUEUE_KIB: u64 = 32 * 1024;

/// Writes a scenario for the test agent into `dir`.
fn write_scenario(dir: &Path, steps: &str) -> PathBuf {
    let path = dir.join("scenario.toml");
    let text = format!("description = \"a flood test\"\n\n[[prompt]]\nsteps = [\n{steps}\n]\n");
    std::fs::write(&path, text).expect("the scenario is written");
    path
}

/// Spawns the test agent on `scenario` in `workspace`, recording every line it writes: its id,
/// its session folder and the record's path.
fn spawn_recording_agent(host: &mut Client, workspace: &Path, scenario: &Path) -> (u64, PathBuf, PathBuf) {
    let record = workspace.join("record.jsonl");
    let path = |path: &Path| path.to_str().expect("a UTF-8 temporary path").to_owned();
    let (agent_id, _, session_dir) = host.spawn_with_session(json!({
        "name": "test agent",
        "command": tether_test_agent(),
        "args": ["--scenario", path(scenario), "--record-stdout", path(&record)],
        "cwd": workspace,
        "tetherDir": workspace.join(".tether"),
    }));
    (agent_id, session_dir.expect("the agent has a session folder"), record)
}

/// Sends `message` to the agent and waits for the agent's answer to request `id`; returns that
/// answer and every event about the agent on the way.
fn call_agent(host: &mut Client, agent_id: u64, id: u64, message: &Value) -> (Value, Vec<Line>) {
    host.send_to_agent(agent_id, &message.to_string());
    let mut events = Vec::new();
    loop {
        let line = host.wait_for(&format!("the agent's answer to request {id}"), |line| {
            line.params()["agentId"] == json!(agent_id)
        });
        let answer = (line.method() == Some("agent/message")
            && line.params()["message"]["id"] == json!(id)
            && line.params()["message"]["method"].is_null())
        .then(|| line.params()["message"].clone());
        events.push(line);
        if let Some(answer) = answer {
            return (answer, events);
        }
    }
}

#[test]
fn a_100_mb_line_is_an_error_for_that_line_only_and_memory_stays_bounded() {
    let max_line = MAX_LINE_BYTES.to_string();
    let tetherd = Tetherd::start(&["--max-line-bytes", &max_line]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary workspace");
    let scenario = write_scenario(
        workspace.path(),
        &format!(
            r#"{{ say = "Before the huge line. " }},
               {{ long_line = {HUGE_LINE_BYTES} }},
               {{ say = "After the huge line." }},"#
        ),
    );
    let (agent_id, session_dir, record) = spawn_recording_agent(&mut host, workspace.path(), &scenario);

    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": 1, "clientCapabilities": {} } });
    call_agent(&mut host, agent_id, 1, &initialize);
    let new_session = json!({ "jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": { "cwd": workspace.path(), "mcpServers": [] } });
    let (answer, _) = call_agent(&mut host, agent_id, 2, &new_session);
    let session_id = answer["result"]["sessionId"].clone();
    let before = resident_kib(tetherd.pid);
    let started = Instant::now();
    let prompt = json!({ "jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": { "sessionId": session_id, "prompt": [{ "type": "text", "text": "Flood me." }] } });
    let (answer, events) = call_agent(&mut host, agent_id, 3, &prompt);
    let elapsed = started.elapsed();
    let growth = peak_rss_kib(tetherd.pid).saturating_sub(before);
    // The framer holds at most one line of the maximum before it gives up on it, and reads in
    // 64 KiB pieces; the events around it are small. Twice that leaves the allocator room.
    let cap = 2 * (2 * MAX_LINE_BYTES / 1024);
    eprintln!(
        "huge line: {HUGE_LINE_BYTES} bytes through in {elapsed:?}; tetherd's RSS {before} KiB before, {growth} \
         KiB more at its peak (VmHWM), cap {cap} KiB (--max-line-bytes {MAX_LINE_BYTES})"
    );

    assert_eq!(answer["result"]["stopReason"], json!("end_turn"), "the turn ended as the agent said");
    let bad_lines: Vec<&Value> =
        events.iter().filter(|line| line.method() == Some("agent/badLine")).map(Line::params).collect();
    assert_eq!(bad_lines.len(), 1, "one error, for the huge line");
    assert_eq!(bad_lines[0]["kind"], json!("tooLong"));
    assert_eq!(bad_lines[0]["len"], json!(HUGE_LINE_BYTES));
    let said: String = events
        .iter()
        .filter_map(|line| line.params()["message"]["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(said, "Before the huge line. After the huge line.", "the lines around the huge one arrived");
    assert!(cap * 1024 < HUGE_LINE_BYTES / 2, "the cap is far below the line");
    assert!(growth < cap, "the line added {growth} KiB against a cap of {cap} KiB");

    let log = read_log(&std::fs::read_to_string(session_dir.join(EVENTS_FILE)).expect("the event log exists"));
    assert_log_matches_record(&log, &recorded_messages(&record, MAX_LINE_BYTES));
    assert!(fold(&log).contains("After the huge line."), "the session went on after the huge line");
}

#[test]
fn an_agent_that_stops_reading_its_input_is_ended_with_a_clear_error_and_memory_stays_bounded() {
    const MESSAGE_BYTES: usize = 1024 * 1024;
    const MESSAGES: usize = 256;
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    // `sleep` never reads its stdin: what the host sends piles up in front of it.
    let (agent_id, _) = host.spawn(sh("exec sleep 600"));
    let message = json!({ "jsonrpc": "2.0", "method": "filler", "params": "x".repeat(MESSAGE_BYTES) }).to_string();
    let before = resident_kib(tetherd.pid);
    let started = Instant::now();
    for _ in 0..MESSAGES {
        host.send_to_agent(agent_id, &message);
    }
    let events = host.agent_events_until_exit(agent_id);
    let elapsed = started.elapsed();
    let growth = peak_rss_kib(tetherd.pid).saturating_sub(before);
    let sent = MESSAGES * message.len();
    // The stdin queue, and a few messages on their way into and out of it.
    let cap = 2 * (STDIN_QUEUE_KIB + 4 * MESSAGE_BYTES as u64 / 1024);
    eprintln!(
        "stalled input: {sent} bytes sent in {elapsed:?}; tetherd's RSS {before} KiB before, {growth} KiB more at \
         its peak (VmHWM), cap {cap} KiB (stdin queue {STDIN_QUEUE_KIB} KiB)"
    );

    let stderr: Vec<&str> = events
        .iter()
        .filter(|line| line.method() == Some("agent/stderr"))
        .filter_map(|line| line.params()["line"].as_str())
        .collect();
    assert_eq!(
        stderr,
        ["tetherd: the agent left more than 32 MiB of its input unread, so it has stopped reading; ending it"],
        "the reason, where the host shows why an agent ended"
    );
    let exited = events.last().expect("agent/exited").params();
    assert_eq!(exited["signal"], json!(15), "ended with SIGTERM");
    assert_eq!(exited["killed"], json!(false), "not a kill the host asked for: a failure");
    assert!(cap * 1024 < sent as u64 / 2, "the cap is far below what was sent");
    assert!(growth < cap, "the input added {growth} KiB against a cap of {cap} KiB");
}

/// The real engine as the host runs it, on one agent of a real tetherd: what the agent prints
/// goes in, what the engine says goes to the agent.
struct EngineHost {
    host: Client,
    agent_id: u64,
    client: AcpClient,
    /// The most permission requests that ever waited for the person at once.
    most_waiting: u32,
}

impl EngineHost {
    fn new(host: Client, agent_id: u64, workspace: &Path) -> EngineHost {
        let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
        let cwd = workspace.to_str().expect("a UTF-8 temporary path");
        let client = AcpClient::new(info, cwd, 1, PermissionPolicy::new(Mode::Ask, 1));
        EngineHost { host, agent_id, client, most_waiting: 0 }
    }

    /// Sends what the engine has for the agent; drops its events and patches (no view here).
    fn flush(&mut self) {
        while let Some(line) = self.client.poll_outgoing() {
            self.host.send_to_agent(self.agent_id, &line);
        }
        while self.client.poll_event().is_some() {}
        self.client.thread_mut().take_patches();
        self.most_waiting = self.most_waiting.max(self.client.permissions_waiting());
    }

    /// Feeds the agent's lines to the engine until `done` says so.
    fn run_until(&mut self, what: &str, done: impl Fn(&AcpClient) -> bool) {
        self.flush();
        while !done(&self.client) {
            let line = self.host.next_line().unwrap_or_else(|| panic!("tetherd closed the connection before {what}"));
            if line.params()["agentId"] != json!(self.agent_id) {
                continue;
            }
            match line.method() {
                Some("agent/message") => self.client.handle_message(&line.raw_agent_message(), 0),
                Some("agent/exited") => panic!("the agent exited before {what}"),
                _ => {}
            }
            self.flush();
        }
    }
}

fn turn_ended(client: &AcpClient) -> bool {
    matches!(client.thread().turn(), TurnState::Ended { .. } | TurnState::Failed { .. })
}

#[test]
fn a_thousand_requests_at_once_get_each_an_answer_with_bounded_state_and_the_session_goes_on() {
    const REQUESTS: usize = 1000;
    let tetherd = Tetherd::start(&[]);
    let workspace = tempfile::tempdir().expect("a temporary workspace");
    let mut steps = String::new();
    for n in 0..REQUESTS {
        steps.push_str(&format!(
            r#"{{ tool_call = {{ id = "t-{n}", title = "Edit {n}.txt", kind = "edit" }} }},
{{ ask_permission = {{ tool_call_id = "t-{n}", wait = false, report = true,
    allowed = [ {{ tool_update = {{ id = "t-{n}", status = "completed" }} }} ],
    rejected = [ {{ tool_update = {{ id = "t-{n}", status = "failed" }} }} ],
    cancelled = [ {{ tool_update = {{ id = "t-{n}", status = "failed" }} }} ] }} }},
"#
        ));
    }
    steps.push_str(r#"{ say = "Asked everything." }, { await_permissions = true }, { say = "All answered." },"#);
    let scenario = workspace.path().join("scenario.toml");
    let text = format!(
        "description = \"a thousand permission requests at once\"\n\n[[prompt]]\nmatch = \"flood\"\nsteps = [\n{steps}\n]\n\n\
         [[prompt]]\nsteps = [{{ say = \"Still here.\" }}]\n"
    );
    std::fs::write(&scenario, text).expect("the scenario is written");
    let mut host = tetherd.host();
    let (agent_id, session_dir, record) = spawn_recording_agent(&mut host, workspace.path(), &scenario);
    let mut engine = EngineHost::new(host, agent_id, workspace.path());
    engine.client.start(0);
    engine.run_until("the session is ready", AcpClient::is_ready);

    let started = Instant::now();
    engine.client.prompt("flood", &[], 0).expect("the prompt is sent");
    engine.run_until("every request has arrived", |client| {
        client.thread().entries().iter().any(|entry| match entry {
            Entry::Agent(message) => json!(message).to_string().contains("Asked everything."),
            _ => false,
        })
    });
    // The person answers every card.
    let waiting: Vec<_> = engine
        .client
        .thread()
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            Entry::ToolCall(call) => call.permission.as_ref().filter(|permission| permission.outcome.is_none()),
            _ => None,
        })
        .map(|permission| (permission.key, permission.options[0].id.clone()))
        .collect();
    for (key, option) in &waiting {
        engine.client.answer_permission(*key, option).expect("the card is waiting");
    }
    engine.run_until("the turn's end", turn_ended);
    let elapsed = started.elapsed();
    let peak = peak_rss_kib(tetherd.pid);
    eprintln!(
        "request flood: {REQUESTS} permission requests, {} waited for the person (at most {} at once), answered in \
         {elapsed:?}; tetherd's peak RSS (VmHWM) {peak} KiB",
        waiting.len(),
        engine.most_waiting
    );

    assert_eq!(engine.client.thread().turn(), &TurnState::Ended { stop_reason: "end_turn".to_owned() });
    assert_eq!(waiting.len(), MAX_AGENT_REQUESTS_WAITING, "as many cards as may wait");
    assert_eq!(engine.most_waiting as usize, MAX_AGENT_REQUESTS_WAITING, "never more waiting than that");
    let warnings: Vec<&str> = engine
        .client
        .thread()
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Notice(notice) if notice.level == NoticeLevel::Warning => Some(notice.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        warnings,
        ["The agent sent more than 256 requests that wait for an answer; the ones beyond are refused with an error \
          until those are answered"],
        "the person is told once"
    );
    // The agent's own record: one report per request, saying how it was answered.
    let reports: Vec<String> = recorded_messages(&record, MAX_LINE_BYTES)
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|message| message["params"]["update"]["content"]["text"].as_str().map(str::to_owned))
        .filter(|text| text.starts_with("Permission for t-"))
        .collect();
    assert_eq!(reports.len(), REQUESTS, "every request got an answer");
    let allowed = reports.iter().filter(|report| report.contains("allow_once")).count();
    assert_eq!(allowed, MAX_AGENT_REQUESTS_WAITING, "the ones that waited were answered by the person");

    // The session goes on.
    engine.client.prompt("Are you still there?", &[], 0).expect("a new prompt is sent");
    engine.run_until("the second turn's end", |client| {
        turn_ended(client) && client.thread().entries().iter().any(|entry| matches!(entry, Entry::Agent(_)))
    });
    assert_eq!(engine.client.thread().turn(), &TurnState::Ended { stop_reason: "end_turn".to_owned() });
    let log = read_log(&std::fs::read_to_string(session_dir.join(EVENTS_FILE)).expect("the event log exists"));
    assert_log_matches_record(&log, &recorded_messages(&record, MAX_LINE_BYTES));
    assert!(fold(&log).contains("Still here."), "the log has the turn after the flood");
}
