//! Data-driven tests of the ACP client engine.
//!
//! Each `test_data/acp/*.script` is a conversation: lines starting with `>` are inputs (what the
//! agent sent, or what the person did), the rest are comments. The test runs the script through
//! an [`AcpClient`] and writes, after each input, every line the client sent to the agent, every
//! event it raised and every thread patch, into `<name>.out` (checked with `expect_file!`; run with
//! `UPDATE_EXPECT=1` to accept a change). A reader can see the whole exchange in one file.
//!
//! Inputs:
//! - `> start` / `> prompt <text>` / `> cancel` / `> answer <key> <option id>`
//! - `> attach <json PromptAttachment>`: the next prompt carries it
//! - `> resume <agent session id>`: resume that session of the agent's instead of a new one
//! - `> agent <json line>`: a line from the agent's stdout
//! - `> badline <tooLong|invalidUtf8|invalidJson> <preview>`: a line tetherd could not forward
//! - `> exit <description>` / `> killed <description>`: the agent process ended
//! - `> time <ms>`: the clock moves; expired requests time out
//! - `> mode <ask|acceptEdits|plan|bypass>`: the person picks a mode
//! - `> rule <session|workspace> <json rule>` / `> unrule <id>` / `> keep <id>`: the rules panel
//! - `> settings <json array of rules>`: the workspace settings changed
//! - `> snapshots`: the host can snapshot the workspace; `> snapshot <tree>` / `> snapshot-failed
//!   <why>` answer a snapshot, `> scan <json array of SnapshotChange>` / `> scan-failed <why>` a scan;
//!   `> saved <path>`: the person saved that file in an editor
//! - `> read <id> <json string>`: the host read the rest of a file from disk (`read-editor`: from an
//!   open document; `read-part`: a chunk, more to come; `read-repeated <id> <times> <json string>`:
//!   a large file); `> read-missing <id>`, `> read-failed <id> <why>`
//! - `> edited <edit id> <applied|unsaved|conflict|failed <why>>`: how an edit went
//! - `> review <json ReviewIntent>`: a decision on a change; `> changed <path>`: a file under review
//!   changed
//! - `> restore <entry>`: restore the code to before the prompt at that entry; `> undo-restore
//!   <id>`: undo restore `id`
//! - `> term-answer <call> <json result>` / `> term-error <call> <code> <message>`: tetherd answered a
//!   terminal call; `> term-data <tetherd id> <json string>`: output; `> term-exited <tetherd id>
//!   <json exit status> [killed]`: the command ended
//! - `> term-intent <json TerminalIntent>` / `> term-input <terminal> <json string>` /
//!   `> term-closed <terminal>`: the person used a terminal's card or its mirrored VS Code terminal
//! - `> frame`: a frame passed: terminal output goes to the mirrored terminals and the cards
//! - `> sign-in <method id> [with-env]`: the person chose how to sign in (`with-env`: they gave
//!   keys for the agent's environment); `> new-agent`: the host started a new agent process for
//!   the thread (after stopping the old one with `> killed`)
//! - `> link <path> <where it leads>`: a symbolic link, for every path resolved after it. The
//!   host's answer to each `resolvePaths` is given at once (`resolved` lines), through the links.
//! - `> folders <path> ...`: the workspace's other folders, beside `/workspace`.
//!
//! Audit records are written as `audit <json>`; whenever the policy changed, one `policy` line
//! shows the mode, the agent's own mode and every rule with how often it fired.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::fmt::Write;
use std::path::Path;

use tether_core::acp::{AcpClient, AcpEvent, ClientInfo};
use tether_core::host_api::{EditOutcome, FileReadOutcome, FileReadReply, HostAction, ResolvedPath};
use tether_core::jsonrpc::RpcError;
use tether_core::permissions::{Mode, PermissionPolicy, RuleScope, RuleSpec, RuleView};
use tether_core::review::{ChangePhase, FileChangeView, HunkState};
use tether_core::session_log::{LogEvent, encode_line, read_log};
use tether_core::sidecar::{BadLineKind, TerminalExited};
use tether_core::thread::{Entry, Thread, ToolCallView, ToolStatus};
use tether_core::webview::{ChangedFileView, ReviewIntent};

fn run_script(script: &str) -> String {
    run_script_logged(script).0
}

/// Runs a script and also returns the event log tetherd would have written for it (the agent's
/// lines and the engine's, and the agent's exit) and the client at the end.
fn run_script_logged(script: &str) -> (String, String, AcpClient) {
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let mut client = AcpClient::new(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1));
    let mut now = 0;
    let mut out = String::new();
    let mut log = EventLog::default();
    let mut attachments = Vec::new();
    let mut links: Vec<(String, String)> = Vec::new();
    // The thread as the webview folds it from the patches it is sent.
    let mut webview = Thread::default();
    for line in script.lines() {
        let Some(input) = line.strip_prefix("> ") else {
            continue;
        };
        writeln!(out, "> {input}").unwrap();
        let (verb, rest) = input.split_once(' ').unwrap_or((input, ""));
        match verb {
            "start" => client.start(now),
            "resume" => client.resume_session(rest.to_owned()),
            "attach" => attachments.push(serde_json::from_str(rest).unwrap()),
            "prompt" => {
                if let Err(error) = client.prompt(rest, &std::mem::take(&mut attachments), now) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "cancel" => client.cancel(now),
            "answer" => {
                let (key, option) = rest.split_once(' ').expect("answer <key> <option>");
                if let Err(error) = client.answer_permission(key.parse().unwrap(), option) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "agent" => {
                log.record(LogEvent::FromAgent(rest.to_owned()));
                client.handle_message(rest, now)
            }
            "badline" => {
                let (kind, preview) = rest.split_once(' ').unwrap_or((rest, ""));
                let kind = match kind {
                    "tooLong" => BadLineKind::TooLong,
                    "invalidUtf8" => BadLineKind::InvalidUtf8,
                    "invalidJson" => BadLineKind::InvalidJson,
                    other => panic!("unknown bad line kind {other}"),
                };
                client.handle_bad_line(kind, preview.len() as u64, preview, "expected value at line 1 column 1");
            }
            "exit" => {
                log.record(LogEvent::Stderr("panic: out of cheese".to_owned()));
                log.record(LogEvent::Stderr("stack trace ...".to_owned()));
                // The scripts describe exits as "exited with code N", as the host does.
                let code = rest.strip_prefix("exited with code ").and_then(|code| code.parse().ok());
                log.record(LogEvent::Exited { code, signal: None, killed: false });
                client.handle_exited(rest, false, "panic: out of cheese\nstack trace ...")
            }
            "killed" => {
                log.record(LogEvent::Exited { code: None, signal: Some(15), killed: true });
                client.handle_exited(rest, true, "")
            }
            "time" => {
                now = rest.parse().unwrap();
                client.handle_timeout(now);
            }
            "mode" => client.set_mode(serde_json::from_value(serde_json::Value::String(rest.to_owned())).unwrap(), now),
            "rule" => {
                let (scope, spec) = rest.split_once(' ').expect("rule <scope> <json>");
                let scope = match scope {
                    "session" => RuleScope::Session,
                    "workspace" => RuleScope::Workspace,
                    other => panic!("unknown scope {other}"),
                };
                match serde_json::from_str::<RuleSpec>(spec) {
                    Ok(spec) => {
                        if let Err(error) = client.add_rule(spec, scope) {
                            writeln!(out, "  refused: {error}").unwrap();
                        }
                    }
                    Err(error) => writeln!(out, "  refused: {error}").unwrap(),
                }
            }
            "unrule" => {
                if let Err(error) = client.remove_rule(rest.parse().unwrap()) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "keep" => {
                if let Err(error) = client.keep_rule_for_workspace(rest.parse().unwrap()) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "settings" => client.set_workspace_rules(serde_json::from_str(rest).unwrap()),
            "option" => {
                let (id, value) = rest.split_once(' ').expect("option <id> <value>");
                let value = tether_core::webview::ConfigValue::Choice(value.to_owned());
                if let Err(error) = client.set_config_option(id, value, now) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "agentmode" => {
                if let Err(error) = client.set_agent_mode(rest, now) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
                let (_, current) = client.agent_mode_choices();
                writeln!(out, "  tether mode: {}, agent mode: {current:?}", client.policy().mode()).unwrap();
            }
            "controls" => {
                let options: Vec<String> = client
                    .controls()
                    .config_options
                    .iter()
                    .map(|option| format!("{} {}", option.id, serde_json::to_string(&option.kind).unwrap()))
                    .collect();
                writeln!(out, "  controls: {}", options.join("; ")).unwrap();
            }
            "snapshots" => client.enable_snapshots(),
            "snapshot" => client.handle_snapshot(Ok(rest.to_owned())),
            "snapshot-failed" => client.handle_snapshot(Err(rest.to_owned())),
            "scan" => client.handle_scan(Ok(serde_json::from_str(rest).unwrap())),
            "scan-failed" => client.handle_scan(Err(rest.to_owned())),
            "saved" => client.handle_document_saved(rest),
            "read-repeated" => {
                let (id, rest) = rest.split_once(' ').expect("read-repeated <id> <times> <json string>");
                let (times, text) = rest.split_once(' ').expect("read-repeated <id> <times> <json string>");
                let text = serde_json::from_str::<String>(text).unwrap().repeat(times.parse().unwrap());
                let outcome = FileReadOutcome::Data { eof: true, from_editor: false };
                client.handle_file_read(FileReadReply { read: id.parse().unwrap(), outcome }, text.as_bytes(), now);
            }
            "read" | "read-editor" | "read-part" => {
                let (id, text) = rest.split_once(' ').expect("read <id> <json string>");
                let text: String = serde_json::from_str(text).unwrap();
                let outcome = FileReadOutcome::Data { eof: verb != "read-part", from_editor: verb == "read-editor" };
                client.handle_file_read(FileReadReply { read: id.parse().unwrap(), outcome }, text.as_bytes(), now);
            }
            "read-missing" => {
                let reply = FileReadReply { read: rest.parse().unwrap(), outcome: FileReadOutcome::NotFound };
                client.handle_file_read(reply, &[], now);
            }
            "read-failed" => {
                let (id, message) = rest.split_once(' ').expect("read-failed <id> <why>");
                let outcome = FileReadOutcome::Failed { message: message.to_owned() };
                client.handle_file_read(FileReadReply { read: id.parse().unwrap(), outcome }, &[], now);
            }
            "edited" => {
                let (id, outcome) = rest.split_once(' ').expect("edited <id> <outcome>");
                let outcome = match outcome.split_once(' ').map_or((outcome, ""), |(a, b)| (a, b)) {
                    ("applied", _) => EditOutcome::Applied { saved: true },
                    ("unsaved", _) => EditOutcome::Applied { saved: false },
                    ("conflict", _) => EditOutcome::Conflict,
                    ("failed", why) => EditOutcome::Failed { message: why.to_owned() },
                    (other, _) => panic!("unknown edit outcome {other}"),
                };
                client.handle_edit_done(id.parse().unwrap(), outcome);
            }
            "review" => {
                if let Err(error) = client.review(serde_json::from_str(rest).unwrap(), now) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "changed" => client.handle_file_changed(rest),
            "restore" => {
                if let Err(error) = client.restore_code(rest.parse().unwrap()) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "undo-restore" => {
                if let Err(error) = client.undo_restore(rest.parse().unwrap()) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "term-answer" => {
                let (call, result) = rest.split_once(' ').expect("term-answer <call> <json>");
                let raw = serde_json::value::RawValue::from_string(result.to_owned()).unwrap();
                client.handle_terminal_answer(call.parse().unwrap(), Ok(&raw), now);
            }
            "term-error" => {
                let mut parts = rest.splitn(3, ' ');
                let call = parts.next().unwrap().parse().unwrap();
                let code: i32 = parts.next().unwrap().parse().unwrap();
                let error = RpcError::new(code, parts.next().unwrap_or_default());
                client.handle_terminal_answer(call, Err(error), now);
            }
            "term-data" => {
                let (id, data) = rest.split_once(' ').expect("term-data <id> <json string>");
                let data: String = serde_json::from_str(data).unwrap();
                client.handle_terminal_data(id.parse().unwrap(), &data, now);
            }
            "term-exited" => {
                let (id, status) = rest.split_once(' ').expect("term-exited <id> <json> [killed]");
                let (status, killed) = match status.strip_suffix(" killed") {
                    Some(status) => (status, true),
                    None => (status, false),
                };
                let exited = TerminalExited {
                    terminal_id: id.parse().unwrap(),
                    status: serde_json::from_str(status).unwrap(),
                    killed,
                    elapsed_ms: None,
                };
                client.handle_terminal_exited(exited, now);
            }
            "term-intent" => {
                if let Err(error) = client.terminal_intent(serde_json::from_str(rest).unwrap()) {
                    writeln!(out, "  refused: {error}").unwrap();
                }
            }
            "term-input" => {
                let (terminal, data) = rest.split_once(' ').expect("term-input <terminal> <json string>");
                client.terminal_input(terminal, serde_json::from_str(data).unwrap());
            }
            "term-closed" => client.terminal_closed(rest),
            "frame" => {
                for action in client.flush_terminals(now) {
                    writeln!(out, "  host {}", serde_json::to_string(&action).unwrap()).unwrap();
                }
            }
            "sign-in" => {
                let (method, with_env) = match rest.strip_suffix(" with-env") {
                    Some(method) => (method, true),
                    None => (rest, false),
                };
                match client.sign_in(method, with_env) {
                    Ok(step) => writeln!(out, "  sign-in: {step:?}").unwrap(),
                    Err(error) => writeln!(out, "  refused: {error}").unwrap(),
                }
            }
            "new-agent" => client.prepare_new_agent(now),
            "link" => {
                let (from, to) = rest.split_once(' ').expect("link <path> <where it leads>");
                links.push((from.to_owned(), to.to_owned()));
            }
            "folders" => client.set_workspace_folders(rest.split(' ').map(str::to_owned)),
            other => panic!("unknown input {other:?}"),
        }
        drain(&mut client, &mut out, &mut log, &mut webview, &links, now);
    }
    // What the webview builds from the patches is the thread: patches merged before they are sent
    // (see `ThreadPatch::merge_into`) fold to what the engine holds.
    let thread = client.thread();
    assert_eq!(webview.entries(), thread.entries(), "the patches fold to the thread's entries");
    assert_eq!(
        (webview.plan(), webview.turn()),
        (thread.plan(), thread.turn()),
        "the patches fold to the plan and turn"
    );
    assert_eq!(webview.terminals(), thread.terminals(), "the patches fold to the terminals");
    (out, log.text, client)
}

/// Writes everything the client sent and raised after an input. The host's side of resolving
/// paths is played here at once, through `links` (see [`resolve_through`]).
fn drain(
    client: &mut AcpClient,
    out: &mut String,
    log: &mut EventLog,
    webview: &mut Thread,
    links: &[(String, String)],
    now: u64,
) {
    let mut resolutions = Vec::new();
    loop {
        while let Some(line) = client.poll_outgoing() {
            writeln!(out, "  -> {line}").unwrap();
            log.record(LogEvent::ToAgent(line));
        }
        let mut policy_changed = false;
        while let Some(event) = client.poll_event() {
            match event {
                AcpEvent::Audit(record) => {
                    let record = serde_json::to_string(&record).unwrap();
                    writeln!(out, "  audit {record}").unwrap();
                    log.record(LogEvent::Host(record));
                }
                AcpEvent::PolicyChanged => policy_changed = true,
                AcpEvent::Host(action) => {
                    writeln!(out, "  host {}", serde_json::to_string(&action).unwrap()).unwrap();
                    if let HostAction::ResolvePaths { resolve, roots, paths } = *action {
                        let paths = paths.iter().map(|path| resolve_through(links, path)).collect();
                        let roots = roots.iter().map(|root| resolve_through(links, root)).collect();
                        resolutions.push((resolve, roots, paths));
                    }
                }
                event => writeln!(out, "  event {event:?}").unwrap(),
            }
        }
        if policy_changed {
            let policy = client.policy();
            write!(out, "  policy mode={:?}", policy.mode()).unwrap();
            if let Some(agent_mode) = client.agent_mode() {
                write!(out, " agent={agent_mode:?}").unwrap();
            }
            writeln!(out).unwrap();
            for rule in policy.rules() {
                writeln!(out, "    #{} {} ({:?}, fired {})", rule.id, rule.description, rule.scope, rule.fired)
                    .unwrap();
            }
        }
        for patch in client.thread_mut().take_patches() {
            writeln!(out, "  patch {}", serde_json::to_string(&patch).unwrap()).unwrap();
            webview.apply(&patch);
        }
        if resolutions.is_empty() {
            return;
        }
        for (resolve, roots, paths) in std::mem::take(&mut resolutions) {
            writeln!(out, "  resolved {resolve}: {}", serde_json::to_string(&paths).unwrap()).unwrap();
            client.handle_paths_resolved(resolve, roots, paths, now);
        }
    }
}

/// Where `path` leads through the script's links (`> link <path> <where it leads>`, absolute
/// paths): a link replaces the part of a path it names, again until none applies, as `realpath`
/// does. A loop is a failure, as it is for `realpath`.
fn resolve_through(links: &[(String, String)], path: &str) -> ResolvedPath {
    let mut path = path.to_owned();
    for _ in 0..40 {
        let through = links.iter().find(|(from, _)| {
            path == *from || path.strip_prefix(from.as_str()).is_some_and(|rest| rest.starts_with('/'))
        });
        match through {
            Some((from, to)) => path = format!("{to}{}", &path[from.len()..]),
            None => return ResolvedPath::Found { path },
        }
    }
    ResolvedPath::Failed { message: "too many levels of symbolic links".to_owned() }
}

/// The event log tetherd would write for a script's run.
#[derive(Default)]
struct EventLog {
    text: String,
    seq: u64,
}

impl EventLog {
    fn record(&mut self, event: LogEvent) {
        self.seq += 1;
        self.text.push_str(&encode_line(self.seq, "2026-11-23T10:00:00.000Z", &event));
        self.text.push('\n');
    }
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join(format!("{name}.script"))).unwrap();
    expect_test::expect_file![dir.join(format!("{name}.out"))].assert_eq(&run_script(&script));
}

#[test]
fn handshake_and_streamed_turn() {
    check("turn");
}

#[test]
fn permission_answered_and_cancelled() {
    check("permission");
}

#[test]
fn rules_answer_requests_and_always_answers_pending() {
    check("rules");
}

#[test]
fn modes_decide_requests_client_side() {
    check("modes");
}

#[test]
fn mode_is_sent_to_an_agent_with_matching_modes() {
    check("agent-modes");
}

#[test]
fn mode_is_sent_as_a_config_option() {
    check("agent-config-mode");
}

#[test]
fn the_person_picks_one_of_the_agents_own_modes() {
    check("agent-mode-pick");
}

#[test]
fn an_agent_with_models_gets_a_model_picker_that_sends_set_model() {
    check("legacy-models");
}

#[test]
fn misbehaving_agent() {
    check("misbehaving");
}

#[test]
fn agent_dies_mid_turn() {
    check("dies");
}

#[test]
fn paths_are_placed_by_where_their_links_lead() {
    check("links");
}

#[test]
fn every_folder_of_a_multi_root_workspace_is_inside() {
    check("multi-root");
}

#[test]
fn terminals_run_by_tetherd() {
    check("terminals");
}

#[test]
fn terminals_stopped_closed_and_reopened_and_the_agents_own_commands() {
    check("terminals-person");
}

#[test]
fn an_earlier_session_is_loaded_and_its_replayed_history_not_shown_twice() {
    check("resume-load");
}

#[test]
fn an_agent_that_cannot_resume_starts_a_new_session_and_says_so() {
    check("resume-fallback");
}

#[test]
fn authentication_required_with_keys_restarts_the_agent_with_them_then_authenticates() {
    check("auth-env");
}

#[test]
fn an_agent_sign_in_is_sent_to_the_live_agent_and_asked_again_when_refused() {
    check("auth-agent");
}

#[test]
fn a_prompt_refused_for_want_of_a_sign_in_is_sent_again_after_it() {
    check("auth-prompt");
}

#[test]
fn claudes_terminal_login_restarts_the_agent_without_a_stopped_notice_and_sends_the_prompt_again() {
    check("auth-terminal");
}

#[test]
fn mentions_are_embedded_for_an_agent_that_takes_embedded_context() {
    check("mentions-embedded");
}

#[test]
fn mentions_are_linked_for_an_agent_without_embedded_context_and_images_refused() {
    check("mentions-linked");
}

#[test]
fn handshake_failures() {
    check("handshake");
}

#[test]
fn handshake_times_out() {
    check("timeout");
}

#[test]
fn a_mode_switch_the_agent_never_answers_times_out_and_the_session_goes_on() {
    check("unanswered-switch");
}

/// Replays what the real `@agentclientprotocol/sdk@1.9.0` example agent printed in a recorded
/// turn (test_data/transcripts, see record-sdk-example.mjs) through the engine: the person
/// prompts once the session exists and allows the permission request. The thread the person
/// would see is snapshotted, and the engine must have sent the agent the same requests, with the
/// same ids, as the recording client did.
#[test]
fn replay_of_a_recorded_sdk_example_turn() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/transcripts");
    let agent_lines = std::fs::read_to_string(dir.join("sdk-example.agent.ndjson")).unwrap();
    let client_lines = std::fs::read_to_string(dir.join("sdk-example.client.ndjson")).unwrap();

    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let mut client = AcpClient::new(info, "/tmp/tether-transcript", 1, PermissionPolicy::new(Mode::Ask, 1));
    let mut sent = Vec::new();
    client.start(0);
    for line in agent_lines.lines().filter(|line| !line.trim().is_empty()) {
        client.handle_message(line, 0);
        if client.is_ready() && sent.iter().all(|line: &String| !line.contains("session/prompt")) {
            client.prompt("Please tidy up the project configuration.", &[], 0).unwrap();
        }
        let waiting = client.thread().entries().iter().find_map(|entry| match entry {
            Entry::ToolCall(call) => call
                .permission
                .as_ref()
                .filter(|permission| permission.outcome.is_none())
                .map(|permission| (permission.key, permission.options[0].id.clone())),
            _ => None,
        });
        if let Some((key, option)) = waiting {
            client.answer_permission(key, &option).unwrap();
        }
        sent.extend(std::iter::from_fn(|| client.poll_outgoing()));
    }

    // Same requests and answers, in the same order, with the same ids.
    let shape = |line: &str| {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        format!("{} {}", value["id"], value["method"].as_str().unwrap_or("(response)"))
    };
    let recorded: Vec<String> = client_lines.lines().filter(|l| !l.trim().is_empty()).map(shape).collect();
    let ours: Vec<String> = sent.iter().map(|line| shape(line)).collect();
    assert_eq!(ours, recorded);

    let mut rendered = String::new();
    for entry in client.thread().entries() {
        writeln!(rendered, "{}", serde_json::to_string(entry).unwrap()).unwrap();
    }
    writeln!(rendered, "turn: {:?}", client.thread().turn()).unwrap();
    expect_test::expect_file![Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp/sdk-example-replay.out")]
        .assert_eq(&rendered);
}

#[test]
fn reads_from_the_editor_in_pieces_and_outside_the_workspace_with_permission() {
    check("files-read");
}

#[test]
fn writes_are_reviewed_per_hunk_before_anything_is_written() {
    check("files-write");
}

#[test]
fn a_write_keeps_the_line_endings_of_the_file_it_replaces() {
    check("files-line-endings");
}

#[test]
fn a_kept_write_to_a_file_with_unsaved_edits_is_said_to_be_in_the_unsaved_editor_not_on_disk() {
    check("files-unsaved");
}

#[test]
fn cards_show_paths_relative_to_the_workspace_and_a_change_once() {
    check("cards-paths");
}

#[test]
fn writes_that_meet_a_changed_file_are_conflicts() {
    check("files-conflict");
}

#[test]
fn edits_the_agent_makes_itself_are_found_by_snapshot_and_revertible() {
    check("files-agent");
}

#[test]
fn a_file_the_person_saved_during_the_turn_is_listed_but_not_offered_to_revert() {
    check("files-saved-by-person");
}

#[test]
fn without_a_snapshot_tool_call_diffs_find_the_edits() {
    check("files-tool-diff");
}

/// The thread is the fold of the session's log: for every script whose conversation lives on the
/// agent's wire, the thread rebuilt from the log the run would have written is the thread the
/// person saw, and so are the session's controls. Left out: scripts whose thread also holds what
/// the host did beside the wire (file reads and reviews, terminal output, timeouts, lines tetherd
/// could not forward), which the log does not hold.
#[test]
fn replaying_the_log_of_a_run_gives_the_thread_of_the_run() {
    for name in [
        "turn",
        "permission",
        "rules",
        "modes",
        "agent-modes",
        "agent-config-mode",
        "legacy-models",
        "dies",
        "handshake",
        "resume-load",
        "resume-fallback",
        "auth-env",
        "auth-agent",
        "auth-prompt",
        "auth-terminal",
        "mentions-embedded",
        "mentions-linked",
    ] {
        let (live, replayed, problems) = live_and_replayed(name);
        assert_eq!(problems, Vec::<String>::new(), "{name}: the log reads back whole");
        assert_eq!(replayed.thread().entries(), live.thread().entries(), "{name}: the entries");
        assert_eq!(replayed.thread().turn(), live.thread().turn(), "{name}: the turn");
        assert_eq!(replayed.permissions_waiting(), live.permissions_waiting(), "{name}: requests waiting");
        assert_eq!(replayed.controls(), live.controls(), "{name}: the session's controls");
        // The session's own rules ("always" choices, rules added in the panel) are the person's
        // decisions for the rest of the session: after a reload they still answer requests. Their
        // ids are the replaying engine's own; the workspace's rules come from the settings.
        assert_eq!(session_rules(&replayed), session_rules(&live), "{name}: the session's rules");
    }
}

/// The client that ran the recorded script `name`, and one that replayed the log that run wrote,
/// with the problems the replay found.
fn live_and_replayed(name: &str) -> (AcpClient, AcpClient, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join(format!("{name}.script"))).unwrap();
    let (_, log, live) = run_script_logged(&script);
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let (replayed, problems) =
        AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    (live, replayed, problems)
}

/// The file change cards of a session come back when it is reopened: each as the person was left
/// with it (the change on disk, decided, failed, or not reviewable). One whose texts the log
/// holds (a change on disk that waited for decisions) goes on as it was; any other is a record,
/// no longer decidable (the file's text before the change is not in the log). A card still
/// waiting for a review does not come back: its write waits for an answer, and a host going on
/// with the agent proposes it again.
#[test]
fn replaying_the_log_of_a_run_shows_its_change_cards_as_they_were_left() {
    for name in ["files-write", "files-agent", "files-unsaved", "files-tool-diff", "files-line-endings"] {
        let (live, replayed, problems) = live_and_replayed(name);
        assert_eq!(problems, Vec::<String>::new(), "{name}: the log reads back whole");
        let cards = |client: &AcpClient| -> Vec<FileChangeView> {
            let views = client.thread().entries().iter().filter_map(|entry| match entry {
                Entry::FileChange(view) => Some(view.clone()),
                _ => None,
            });
            views
                .filter(|view| {
                    !matches!(view.phase, ChangePhase::Proposed | ChangePhase::Writing | ChangePhase::Conflict { .. })
                })
                .collect()
        };
        let live_cards = cards(&live);
        let mut reopened = cards(&replayed);
        assert!(!live_cards.is_empty(), "{name}: the run has change cards to show");
        for (card, live_card) in reopened.iter_mut().zip(&live_cards) {
            if matches!(live_card.phase, ChangePhase::Unreviewable { .. }) {
                continue; // A binary file's card says why already, and is shown as it was.
            }
            match &card.phase {
                ChangePhase::Unreviewable { reason } => {
                    assert!(reason.starts_with("Reopened from the session's log"), "{name}: {reason}");
                    card.phase = live_card.phase.clone();
                }
                // Reopened from its texts: the same card under this engine's number.
                _ => card.id = live_card.id,
            }
        }
        assert_eq!(reopened, live_cards, "{name}: the cards as the person was left with them");
        // A tool call's diff links to the card that shows its change, as it did live, rather
        // than drawing the change a second time.
        let tool_calls = |client: &AcpClient| -> Vec<Entry> {
            let entries = client.thread().entries().iter();
            entries.filter(|entry| matches!(entry, Entry::ToolCall(_))).cloned().collect()
        };
        assert_eq!(tool_calls(&replayed), tool_calls(&live), "{name}: the tool calls");
    }
}

/// A change the agent made on disk, still to decide when the window reloads, is reviewed after
/// the reload as it was before: the same card, the host told of it again (its diff editor and
/// CodeLens), and reverting a hunk writes the file back from the text before the change, as long
/// as the file still holds what the card shows. Before, the log held no text of the file: the
/// card came back as a record, and the change could no longer be reverted from Tether. A change
/// made after the reload never gets the number of one reopened.
#[test]
fn a_change_on_disk_still_to_decide_is_reviewed_after_a_reload_as_before() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join("files-agent.script")).unwrap();
    // The first turn of `files-agent`: the agent's edits found on disk, nothing decided yet.
    let first_turn = &script[..script.find("\nRevert the second hunk").expect("files-agent's decisions")];
    let (_, log, live) = run_script_logged(first_turn);
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let first_key = 2 << 32; // Another engine's numbers, as after a reload into another tab.
    let (mut replayed, problems) =
        AcpClient::replay(info, "/workspace", first_key, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    assert_eq!(problems, Vec::<String>::new());
    let cards = |client: &AcpClient| -> Vec<FileChangeView> {
        let entries = client.thread().entries().iter();
        entries
            .filter_map(|entry| if let Entry::FileChange(view) = entry { Some(view.clone()) } else { None })
            .collect()
    };
    let phases = |cards: &[FileChangeView]| -> Vec<(String, ChangePhase)> {
        cards.iter().map(|card| (card.label.clone(), card.phase.clone())).collect()
    };
    let reopened = cards(&replayed);
    assert_eq!(phases(&reopened), phases(&cards(&live)), "the cards come back as they were, still to decide");
    let shown: Vec<String> = std::iter::from_fn(|| replayed.poll_event())
        .filter_map(|event| match event {
            AcpEvent::Host(action) => match *action {
                HostAction::ShowReview { document, .. } => Some(document.path),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(shown, ["/workspace/src/lib.rs", "/workspace/old.txt"], "the host hears of the changes to decide");

    // Revert the second hunk of lib.rs: its number routes to this engine's session.
    let lib = reopened.iter().find(|card| card.label == "src/lib.rs").unwrap().id;
    assert_eq!(lib >> 32, 2, "the change goes on under this engine's number");
    replayed.review(ReviewIntent::Hunk { change: lib, hunk: 1, keep: false }, 0).unwrap();
    let edits: Vec<(String, Option<String>, Option<String>)> = std::iter::from_fn(|| replayed.poll_event())
        .filter_map(|event| match event {
            AcpEvent::Host(action) => match *action {
                HostAction::EditFile { path, expected, result, .. } => Some((path, expected, result)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        edits,
        [(
            "/workspace/src/lib.rs".to_owned(),
            Some("fn a() { 1 }\n\nfn b() { 2 }\n".to_owned()),
            Some("fn a() { 1 }\n\nfn b() {}\n".to_owned())
        )],
        "the hunk is reverted from the text before the change, if the file holds what the card shows"
    );

    // Reopened by an engine whose numbers are the log's own (the same tab after a reload): a
    // change made after the reload gets a number of its own, not one of the reopened changes'.
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let (mut replayed, _) =
        AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    let write = r#"{"jsonrpc":"2.0","id":9,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/workspace/new.txt","content":"new\n"}}"#;
    replayed.handle_message(write, 0);
    // The host's part: the file is new.
    play_host_reads(&mut replayed, None);
    let ids: Vec<(String, u64)> = cards(&replayed).iter().map(|card| (card.label.clone(), card.id)).collect();
    let mut unique: Vec<u64> = ids.iter().map(|(_, id)| *id).collect();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "every change has a number of its own: {ids:?}");
}

/// A session's log holds a bounded amount of change texts (`MAX_LOGGED_TEXTS_PER_SESSION`,
/// 32 MiB), counting those already in it: past the budget a change is reviewed as before, but its
/// texts are not written (a reload would reopen its card as a card only), so every reload of a
/// long session does not read ever more. Before, every change's texts were written.
#[test]
fn a_sessions_log_holds_a_bounded_amount_of_change_texts() {
    const BUDGET: usize = 32 * 1024 * 1024;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join("files-agent.script")).unwrap();
    let first_turn = &script[..script.find("\nRevert the second hunk").expect("files-agent's decisions")];
    let (_, log, _) = run_script_logged(first_turn);
    let texts_in =
        |records: &[String]| records.iter().filter(|record| record.contains(r#""event":"changeTexts""#)).count();

    // A kept write in a session reopened from `log`: the texts it writes to the log.
    let texts_of_a_kept_write = |log: &str| -> usize {
        let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
        let (mut client, problems) =
            AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(log));
        assert_eq!(problems, Vec::<String>::new());
        while client.poll_event().is_some() {}
        let write = r#"{"jsonrpc":"2.0","id":9,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/workspace/new.txt","content":"new\n"}}"#;
        client.handle_message(write, 0);
        play_host_reads(&mut client, None);
        let change = client
            .thread()
            .entries()
            .iter()
            .rev()
            .find_map(|entry| match entry {
                Entry::FileChange(view) if view.label == "new.txt" => Some(view.id),
                _ => None,
            })
            .expect("the write's card");
        client.review(ReviewIntent::All { change, keep: true }, 0).unwrap();
        let mut records = Vec::new();
        let mut edits = Vec::new();
        while let Some(event) = client.poll_event() {
            match event {
                AcpEvent::Host(action) => {
                    if let HostAction::EditFile { edit, .. } = *action {
                        edits.push(edit);
                    }
                }
                AcpEvent::Audit(record) => records.push(serde_json::to_string(&record).unwrap()),
                _ => {}
            }
        }
        assert_eq!(edits.len(), 1, "keeping the write edits the file");
        client.handle_edit_done(edits[0], EditOutcome::Applied { saved: true });
        while let Some(event) = client.poll_event() {
            if let AcpEvent::Audit(record) = event {
                records.push(serde_json::to_string(&record).unwrap());
            }
        }
        texts_in(&records)
    };
    assert_eq!(texts_of_a_kept_write(&log), 1, "with room, the kept write's texts are written");

    // The same log with texts that fill the budget but for a few bytes (an earlier change's).
    let last_seq = read_log(&log).entries.last().expect("a log").seq;
    let padding = serde_json::json!({
        "seq": last_seq + 1,
        "time": "2026-11-23T10:00:00.000Z",
        "event": "host",
        "record": {"event": "changeTexts", "change": 99, "old": null, "new": "x".repeat(BUDGET - 2)},
    });
    let full = format!("{log}{padding}\n");
    assert_eq!(texts_of_a_kept_write(&full), 0, "the budget is spent: the texts are left out");
}

/// A checkpoint can still be restored after a reload: the files the agent changed since are
/// read to be put back, as before it. Before, the log held no file's text before a change, and
/// a reopened session had nothing to restore.
#[test]
fn a_checkpoint_is_restored_after_a_reload_as_before() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join("restore.script")).unwrap();
    // The two turns of `restore`, each writing files in Accept Edits mode, to their end.
    let turns = &script[..script.find("\nNot while a turn runs").expect("restore's second turn")];
    let end = "> agent {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n";
    let (_, log, _) = run_script_logged(&format!("{turns}\n{end}"));
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let (mut replayed, problems) =
        AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    assert_eq!(problems, Vec::<String>::new());
    while replayed.poll_event().is_some() {}
    replayed.restore_code(0).unwrap();
    let reads: Vec<String> = std::iter::from_fn(|| replayed.poll_event())
        .filter_map(|event| match event {
            AcpEvent::Host(action) => match *action {
                HostAction::ReadFile { path, .. } => Some(path),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(reads, ["/workspace/a.txt", "/workspace/b.txt", "/workspace/c.txt"], "each file changed since is read");
}

/// A write still waiting for its review when the window reloads is proposed again with the
/// decisions the person had made on it: a hunk rejected before the reload stays rejected.
/// Before, the decisions were in memory only, and every hunk was to decide again.
#[test]
fn a_waiting_writes_decisions_so_far_survive_a_reload() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join("files-write.script")).unwrap();
    // The first write of `files-write`, proposed and read; its second hunk rejected, the first
    // still waiting, when the window reloads.
    let proposed = &script[..script.find("> review").expect("files-write's first review")];
    let decided = format!("{proposed}> review {{\"type\":\"hunk\",\"change\":1,\"hunk\":1,\"keep\":false}}\n");
    let (_, log, live) = run_script_logged(&decided);
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let (mut replayed, problems) =
        AcpClient::replay(info, "/workspace", 1 << 32, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    assert_eq!(problems, Vec::<String>::new());
    replayed.continue_live(0);
    // The host's part: the file holds what it held.
    play_host_reads(&mut replayed, Some("import os\n\ndef main():\n    print('hello')\n\nmain()\n"));
    let states = |client: &AcpClient| -> Vec<Vec<HunkState>> {
        let entries = client.thread().entries().iter();
        entries
            .filter_map(|entry| match entry {
                Entry::FileChange(view) => Some(view.hunks.iter().map(|hunk| hunk.state).collect()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(states(&live), [[HunkState::Pending, HunkState::Rejected]], "as the person left it");
    assert_eq!(states(&replayed), states(&live), "proposed again as the person left it");
}

/// Plays the host's part for what `client` asks until it asks nothing more: every path leads to
/// itself, and every file read holds `file` (`None`: there is no file). Other actions are
/// dropped.
fn play_host_reads(client: &mut AcpClient, file: Option<&str>) {
    while let Some(event) = client.poll_event() {
        let AcpEvent::Host(action) = event else { continue };
        match *action {
            HostAction::ResolvePaths { resolve, roots, paths } => {
                let found = |path: String| ResolvedPath::Found { path };
                let (roots, paths) = (roots.into_iter().map(found).collect(), paths.into_iter().map(found).collect());
                client.handle_paths_resolved(resolve, roots, paths, 0);
            }
            HostAction::ReadFile { read, .. } => match file {
                Some(text) => {
                    let outcome = FileReadOutcome::Data { eof: true, from_editor: false };
                    client.handle_file_read(FileReadReply { read, outcome }, text.as_bytes(), 0);
                }
                None => client.handle_file_read(FileReadReply { read, outcome: FileReadOutcome::NotFound }, &[], 0),
            },
            _ => {}
        }
    }
}

/// Tether's own cards (for a command or a read the agent did not ask about) come back when a
/// session is reopened, answered as they were: the agent's wire has no trace of them. They are
/// placed where they were answered (a card still waiting is not in the log: the agent's request
/// is asked again), so the comparison is of the cards, not of their order.
#[test]
fn replaying_the_log_of_a_run_shows_tethers_own_cards_as_they_were_answered() {
    for name in ["terminals-unasked", "files-read", "links"] {
        let (live, replayed, _) = live_and_replayed(name);
        let own_cards = |client: &AcpClient| -> Vec<ToolCallView> {
            let mut cards: Vec<ToolCallView> = client
                .thread()
                .entries()
                .iter()
                .filter_map(|entry| match entry {
                    Entry::ToolCall(call)
                        if call
                            .permission
                            .as_ref()
                            .is_some_and(|permission| permission.from_tether && permission.outcome.is_some()) =>
                    {
                        Some(call.clone())
                    }
                    _ => None,
                })
                .collect();
            cards.sort_by(|a, b| a.id.cmp(&b.id));
            cards
        };
        let live_cards = own_cards(&live);
        assert!(!live_cards.is_empty(), "{name}: the run has cards of Tether's own");
        assert_eq!(own_cards(&replayed), live_cards, "{name}: Tether's own cards");
    }
}

/// A window reloaded while a command Tether asked about still runs goes on with it: the card,
/// read back as "Running", says how the command ended once tetherd reports the exit. So it does
/// when the agent then showed the terminal on a tool call of its own, which takes the output off
/// Tether's card: before, that card said "Running" for good after a reload.
#[test]
fn a_reopened_card_of_tethers_own_follows_its_command_to_the_end() {
    let asked = r#"
> start
> agent {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}
> agent {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}
> prompt Build it
> agent {"jsonrpc":"2.0","id":10,"method":"terminal/create","params":{"sessionId":"s1","command":"make"}}
> answer 1 allow
> term-answer 1 {"terminalId":1,"pid":100}
"#;
    let shown_by_the_agent = format!(
        "{asked}> agent {}\n",
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"a1","title":"make","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"term-1"}]}}}"#
    );
    for (case, script) in [("asked", asked.to_owned()), ("shown by the agent", shown_by_the_agent)] {
        let (_, log, live) = run_script_logged(&script);
        let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
        let (mut reopened, problems) =
            AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
        assert_eq!(problems, Vec::<String>::new());
        let card_status = |client: &AcpClient| {
            client.thread().entries().iter().find_map(|entry| match entry {
                Entry::ToolCall(call) if call.title == "Run make" => Some(call.status),
                _ => None,
            })
        };
        assert_eq!(card_status(&live), Some(ToolStatus::InProgress), "{case}: the command runs");
        assert_eq!(card_status(&reopened), Some(ToolStatus::InProgress), "{case}: reopened as it was");
        let exited = TerminalExited {
            terminal_id: 1,
            status: serde_json::from_str(r#"{"exitCode":2,"signal":null}"#).unwrap(),
            killed: false,
            elapsed_ms: None,
        };
        reopened.handle_terminal_exited(exited, 5_000);
        reopened.flush_terminals(5_000);
        assert_eq!(card_status(&reopened), Some(ToolStatus::Failed), "{case}: make failed, and the card says so");
    }
}

/// The session-scoped rules in force, as the rules panel lists them, without their ids.
fn session_rules(client: &AcpClient) -> Vec<RuleView> {
    client
        .policy()
        .rules()
        .into_iter()
        .filter(|rule| rule.scope == RuleScope::Session)
        .map(|rule| RuleView { id: 0, ..rule })
        .collect()
}

/// The changes bar and a change's card count the same lines: after a review that rejected a
/// hunk, both leave it out (the bar counted the whole proposal, "+2 −2" beside a card's "+1 −1").
#[test]
fn the_changes_bar_counts_a_change_as_its_card_does() {
    let mut compared = 0;
    for name in ["files-write", "files-agent", "files-unsaved"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
        let script = std::fs::read_to_string(dir.join(format!("{name}.script"))).unwrap();
        let (_, _, client) = run_script_logged(&script);
        for row in client.changes_bar() {
            compared += 1;
            let card = client.thread().entries().iter().rev().find_map(|entry| match entry {
                Entry::FileChange(view) if view.id == row.change => Some(view),
                _ => None,
            });
            let card = card.unwrap_or_else(|| panic!("{name}: change {} has a card", row.change));
            assert_eq!((row.added, row.removed), (card.added, card.removed), "{name}: {}", row.label);
        }
    }
    assert!(compared > 0, "the scripts end with changes in the bar");
}

#[test]
fn commands_the_agent_did_not_ask_about_wait_for_the_persons_answer_on_a_card() {
    check("terminals-unasked");
}

#[test]
fn restoring_to_a_checkpoint_proposes_each_file_back_and_can_be_undone() {
    check("restore");
}

/// After a restore and its undo, the changes bar lists a row for each change still waiting and
/// none for the restore's and the undo's settled ones: each file's settled changes are history
/// the thread's cards keep. Before, it listed ten rows for three files, six of them "Restore:
/// Reviewed".
#[test]
fn the_changes_bar_lists_a_files_settled_changes_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/acp");
    let script = std::fs::read_to_string(dir.join("restore.script")).unwrap();
    let rows = |script: &str| {
        let (_, _, client) = run_script_logged(script);
        let rows: Vec<String> = client
            .changes_bar()
            .iter()
            .map(|row| {
                let ChangedFileView { change, label, origin, phase, added, removed, pending, .. } = row;
                format!("{change} {label} {origin:?} {phase:?} +{added} -{removed} pending {pending}")
            })
            .collect();
        rows.join("\n")
    };
    expect_test::expect![[r#"
        1 a.txt Write Applied +1 -1 pending 1
        2 b.txt Write Applied +1 -0 pending 1
        3 a.txt Write Applied +1 -1 pending 1
        4 c.txt Write Applied +1 -1 pending 1"#]]
    .assert_eq(&rows(&script));

    // Once the person kept the agent's changes too, each file keeps one row: its newest change,
    // the undo's, which says where the file ended up.
    let kept: String =
        (1..=4).map(|change| format!("> review {{\"type\":\"all\",\"change\":{change},\"keep\":true}}\n")).collect();
    expect_test::expect![[r#"
        8 a.txt Restore Settled +1 -1 pending 0
        9 b.txt Restore Settled +1 -0 pending 0
        10 c.txt Restore Settled +2 -1 pending 0"#]]
    .assert_eq(&rows(&format!("{script}\n{kept}")));
}
