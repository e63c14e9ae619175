//! Data-driven tests of the Claude CLI translator: recorded stream-json transcripts in, the thread
//! the person sees out.
//!
//! Each `test_data/claude_cli/*.script` is a session: lines starting with `>` are inputs, the rest
//! comments. The CLI's lines (`> cli <json>`) were recorded from the real `claude` CLI (2.1.x)
//! against a mock of the Messages API (`tests/e2e/anthropic-mock.mjs`), trimmed of long lists
//! (tools, commands) where they do not matter. The test runs an [`AcpClient`] and a [`ClaudeCli`]
//! together, as a session does, and writes into `<name>.out` (checked with `expect_file!`;
//! `UPDATE_EXPECT=1` accepts a change) after each input every line Tether wrote to the CLI, every
//! process action and every log line; at the end, the thread as the Markdown export shows it.
//!
//! Every script is also replayed: the CLI's wire as tetherd would have logged it is folded by
//! [`LogReplay`], and the replayed thread must be the live one (a window reload shows the same
//! conversation).
//!
//! Inputs:
//! - `> start` (the session opens), `> prompt <text>`, `> cancel`, `> answer <key> <option id>`,
//!   `> mode <ask|acceptEdits|plan|bypass>`, `> model <value>` (the person's choices)
//! - `> cli <json>`: a line of the CLI's stdout
//! - `> exit <code> [stderr text]`: the CLI exited
//! - `> start-failed <why>`: the CLI asked for could not be started
//! - `> file <path> <json string>`: the workspace has this file (reads of others find nothing)
//! - `> persistent <idle ms>`: the translator keeps one CLI across turns (before `start`)
//! - `> folders <path> ...`: the workspace's other folders, beside `/workspace` (before `start`;
//!   the replay is given them too)
//! - `> time <ms>`: the clock moves (a persistent CLI's idle timeout)
//!
//! A CLI asked for is started at once (`process Start`), unless the next input is `start-failed`.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use tether_core::acp::{AcpClient, AcpEvent, ClientInfo, LogReplay};
use tether_core::claude_cli::{ClaudeCli, CliEvent, ProcessAction, ProcessMode};
use tether_core::export::{ExportHeader, thread_markdown};
use tether_core::host_api::{FileReadOutcome, FileReadReply, HostAction, ResolvedPath};
use tether_core::permissions::{Mode, PermissionPolicy};
use tether_core::session_log::{LogEvent, encode_line, read_log};
use tether_core::sidecar::BadLineKind;
use tether_core::thread::Thread;

const WORKSPACE: &str = "/workspace";

fn client() -> AcpClient {
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    AcpClient::new(info, WORKSPACE, 1, PermissionPolicy::new(Mode::Ask, 1))
}

/// A session: the client, the translator, the workspace's files, the log tetherd would write.
struct Session {
    client: AcpClient,
    cli: ClaudeCli,
    files: BTreeMap<String, String>,
    log: String,
    seq: u64,
    out: String,
    /// The next CLI start fails instead of starting (`start-failed`).
    start_fails: Option<String>,
    now: u64,
    /// Something happened that the log cannot hold (a bad line).
    live_only: bool,
    /// The turn's state as last written.
    turn: String,
    /// The workspace's other folders (`folders`).
    folders: Vec<String>,
}

impl Session {
    fn record(&mut self, event: LogEvent) {
        self.seq += 1;
        self.log.push_str(&encode_line(self.seq, "2026-11-25T10:00:00.000Z", &event));
        self.log.push('\n');
    }

    /// Carries every line and action across until nothing moves.
    fn pump(&mut self) {
        loop {
            let mut moved = false;
            while let Some(line) = self.client.poll_outgoing() {
                moved = true;
                self.cli.handle_client_line(&line, self.now);
            }
            while let Some(line) = self.cli.poll_client_line() {
                moved = true;
                self.client.handle_message(&line, self.now);
            }
            while let Some(action) = self.cli.poll_process() {
                moved = true;
                writeln!(self.out, "  process {action:?}").unwrap();
                if let ProcessAction::Start { .. } = action {
                    match self.start_fails.take() {
                        Some(why) => self.cli.handle_process_start_failed(&why),
                        None => self.cli.handle_process_started(self.now),
                    }
                }
            }
            while let Some(line) = self.cli.poll_cli_line() {
                moved = true;
                writeln!(self.out, "  cli <- {line}").unwrap();
                self.record(LogEvent::ToAgent(line));
            }
            while let Some(event) = self.cli.poll_event() {
                match event {
                    CliEvent::Log(text) => writeln!(self.out, "  log {text}").unwrap(),
                    CliEvent::Warn(text) => writeln!(self.out, "  warn {text}").unwrap(),
                }
            }
            while let Some(event) = self.client.poll_event() {
                match event {
                    AcpEvent::Host(action) => match *action {
                        HostAction::ReadFile { read, path, .. } => {
                            moved = true;
                            let (outcome, data) = match self.files.get(&path) {
                                Some(text) => {
                                    (FileReadOutcome::Data { eof: true, from_editor: false }, text.clone().into_bytes())
                                }
                                None => (FileReadOutcome::NotFound, Vec::new()),
                            };
                            self.client.handle_file_read(FileReadReply { read, outcome }, &data, self.now);
                        }
                        HostAction::ResolvePaths { resolve, roots, paths } => {
                            moved = true;
                            let resolved = |path: &String| ResolvedPath::Found { path: path.clone() };
                            let paths = paths.iter().map(resolved).collect();
                            let roots = roots.iter().map(resolved).collect();
                            self.client.handle_paths_resolved(resolve, roots, paths, self.now);
                        }
                        action => writeln!(self.out, "  host {}", serde_json::to_string(&action).unwrap()).unwrap(),
                    },
                    AcpEvent::Audit(record) => {
                        // The host sends each record to tetherd, which logs it with the session.
                        let record = serde_json::to_string(&record).unwrap();
                        self.record(LogEvent::Host(record.clone()));
                        let record: serde_json::Value = serde_json::from_str(&record).unwrap();
                        writeln!(self.out, "  audit {} {}", record["event"], record["decidedBy"]).unwrap()
                    }
                    AcpEvent::SessionReady { .. } | AcpEvent::Failed { .. } | AcpEvent::PermissionsWaiting { .. } => {
                        writeln!(self.out, "  event {event:?}").unwrap()
                    }
                    _ => {}
                }
            }
            if !moved {
                break;
            }
        }
        // A frame passes: commands' output reaches their cards (the mirrors are the host's).
        self.client.flush_terminals(self.now);
        self.client.thread_mut().take_patches();
        let turn = format!("{:?}", self.client.thread().turn());
        if turn != self.turn {
            writeln!(self.out, "  turn {turn}").unwrap();
            self.turn = turn;
        }
    }
}

fn export(thread: &Thread) -> String {
    let header = ExportHeader {
        title: "Transcript".to_owned(),
        agent: "Claude Code (direct)".to_owned(),
        created: None,
        exported: None,
    };
    thread_markdown(&header, thread)
}

/// Runs a script: what it wrote, the live thread, and the thread read back from its log.
fn run_script(script: &str) -> (String, String, String) {
    let mut session = Session {
        client: client(),
        cli: ClaudeCli::new(ProcessMode::Oneshot),
        files: BTreeMap::new(),
        log: String::new(),
        seq: 0,
        out: String::new(),
        start_fails: None,
        now: 0,
        live_only: false,
        turn: String::new(),
        folders: Vec::new(),
    };
    for line in script.lines() {
        let Some(input) = line.strip_prefix("> ") else { continue };
        let (verb, rest) = input.split_once(' ').unwrap_or((input, ""));
        // Long CLI lines are shown by their type only: the script has them whole.
        let shown = match verb {
            "cli" => {
                let Ok(value) = serde_json::from_str::<serde_json::Value>(rest) else {
                    // tetherd passes on only JSON lines, and logs only those: this one reaches the
                    // engine as a bad line, and the thread's notice of it is live only (as for an
                    // ACP agent), so the replay is not compared.
                    writeln!(session.out, "> cli (not JSON) {rest}").unwrap();
                    session.cli.handle_bad_line(BadLineKind::InvalidJson, rest.len() as u64, rest, "expected JSON");
                    session.live_only = true;
                    session.pump();
                    continue;
                };
                let kind = value["type"].as_str().unwrap_or_default().to_owned();
                let detail = ["subtype", "event"]
                    .iter()
                    .find_map(|key| match &value[key] {
                        serde_json::Value::String(text) => Some(text.clone()),
                        serde_json::Value::Object(event) => {
                            event.get("type").and_then(|t| t.as_str()).map(str::to_owned)
                        }
                        _ => None,
                    })
                    .or_else(|| value["request"]["subtype"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                format!("cli {kind} {detail}")
            }
            _ => input.to_owned(),
        };
        writeln!(session.out, "> {}", shown.trim_end()).unwrap();
        let now = session.now;
        match verb {
            "persistent" => {
                session.cli = ClaudeCli::new(ProcessMode::Persistent { idle_timeout_ms: rest.parse().unwrap() })
            }
            "folders" => {
                session.folders = rest.split(' ').map(str::to_owned).collect();
                session.client.set_workspace_folders(session.folders.clone());
                session.cli.set_workspace_folders(session.folders.clone());
            }
            "start" => session.client.start(now),
            "prompt" => {
                if let Err(error) = session.client.prompt(rest, &[], now) {
                    writeln!(session.out, "  refused: {error}").unwrap();
                }
            }
            "cancel" => session.client.cancel(now),
            "answer" => {
                let (key, option) = rest.split_once(' ').expect("answer <key> <option>");
                if let Err(error) = session.client.answer_permission(key.parse().unwrap(), option) {
                    writeln!(session.out, "  refused: {error}").unwrap();
                }
            }
            "mode" => session.client.set_mode(serde_json::from_value(serde_json::json!(rest)).unwrap(), now),
            "model" => {
                let value = serde_json::from_value(serde_json::json!(rest)).unwrap();
                if let Err(error) = session.client.set_config_option("model", value, now) {
                    writeln!(session.out, "  refused: {error}").unwrap();
                }
            }
            "cli" => {
                session.record(LogEvent::FromAgent(rest.to_owned()));
                session.cli.handle_cli_line(rest, now);
            }
            "exit" => {
                let (code, stderr) = rest.split_once(' ').unwrap_or((rest, ""));
                if !stderr.is_empty() {
                    session.record(LogEvent::Stderr(stderr.to_owned()));
                }
                let code: i32 = code.parse().unwrap();
                session.record(LogEvent::Exited { code: Some(code), signal: None, killed: false });
                session.cli.handle_process_exited(None, &format!("exited with code {code}"), stderr);
            }
            "start-failed" => session.start_fails = Some(rest.to_owned()),
            "file" => {
                let (path, text) = rest.split_once(' ').expect("file <path> <json string>");
                session.files.insert(path.to_owned(), serde_json::from_str(text).unwrap());
            }
            "time" => {
                session.now = rest.parse().unwrap();
                session.cli.handle_timeout(session.now);
                session.client.handle_timeout(session.now);
            }
            other => panic!("unknown input {other:?}"),
        }
        session.pump();
    }
    let controls = session.client.controls();
    let commands: Vec<&str> = controls.commands.iter().map(|command| command.name.as_str()).collect();
    writeln!(session.out, "\n--- the header and composer ---").unwrap();
    writeln!(session.out, "commands: {}", commands.join(", ")).unwrap();
    for option in &controls.config_options {
        writeln!(session.out, "option: {}", serde_json::to_string(option).unwrap()).unwrap();
    }
    writeln!(session.out, "usage: {}", serde_json::to_string(&controls.usage).unwrap()).unwrap();
    writeln!(session.out, "agent mode: {:?}", session.client.agent_mode()).unwrap();
    let live = export(session.client.thread());
    writeln!(session.out, "\n--- the thread ---\n{live}").unwrap();

    // The same session read back from its log, as a reloaded window folds it.
    let mut replay = LogReplay::new(
        ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() },
        WORKSPACE,
        1,
        PermissionPolicy::new(Mode::Ask, 1),
    );
    replay.set_workspace_folders(session.folders.clone());
    replay.feed(&read_log(&session.log));
    let (replayed, claude, problems) = replay.finish_with_claude();
    assert!(problems.is_empty(), "the replay met problems: {problems:?}");
    assert!(claude.is_some() || session.log.is_empty(), "the log was not recognised as the Claude CLI's");
    let replayed = if session.live_only { live.clone() } else { export(replayed.thread()) };
    (session.out, live, replayed)
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/claude_cli");
    let script = std::fs::read_to_string(dir.join(format!("{name}.script"))).unwrap();
    let (out, live, replayed) = run_script(&script);
    expect_test::expect_file![dir.join(format!("{name}.out"))].assert_eq(&out);
    assert_eq!(replayed, live, "the replayed thread differs from the live one");
}

#[test]
fn a_text_turn_streams_and_ends_with_its_cost() {
    check("text-turn");
}

#[test]
fn a_local_commands_output_keeps_its_lines_and_columns() {
    check("local-command");
}

#[test]
fn a_write_asks_with_the_diff_of_the_new_file_and_runs_once_allowed() {
    check("write-allowed");
}

#[test]
fn a_rejected_write_is_denied_with_a_message_and_the_turn_goes_on() {
    check("write-denied");
}

#[test]
fn cancel_interrupts_the_cli_and_the_turn_ends_cancelled() {
    check("interrupt");
}

#[test]
fn an_error_result_fails_the_turn_with_the_clis_words() {
    check("error-result");
}

#[test]
fn hook_callbacks_are_answered_continue_and_logged() {
    check("hook");
}

#[test]
fn thinking_streams_as_thought_chunks() {
    check("thinking");
}

#[test]
fn the_next_oneshot_turn_resumes_the_clis_session() {
    check("resumed-turn");
}

#[test]
fn a_refused_resume_sends_the_prompt_to_a_fresh_session_and_says_so() {
    check("resume-refused");
}

#[test]
fn an_edit_shows_the_diff_of_the_whole_file_read_through_the_client() {
    check("edit");
}

#[test]
fn an_edit_in_another_folder_of_the_workspace_is_named_and_read_as_in_the_first() {
    check("edit-lib");
}

#[test]
fn bash_output_is_shown_as_a_terminal() {
    check("bash");
}

#[test]
fn persistent_keeps_one_cli_across_turns_and_resumes_after_its_idle_timeout() {
    check("persistent");
}

#[test]
fn start_failures_bad_lines_unknown_requests_and_a_cli_dying_with_a_card_waiting() {
    check("faults");
}

#[test]
fn a_cli_that_never_answers_initialize_is_not_kept_and_nothing_waits_for_it() {
    check("initialize-unanswered");
}

#[test]
fn a_prompt_that_comes_while_the_last_cli_finishes_waits_for_its_exit() {
    check("prompt-before-exit");
}

#[test]
fn a_cli_that_does_not_stop_when_interrupted_is_ended_and_the_turn_ends_cancelled() {
    check("interrupt-unanswered");
}

#[test]
fn a_cli_that_does_not_exit_after_its_turn_is_ended_and_the_waiting_prompt_goes_on() {
    check("exit-overdue");
}

/// A CLI the log saw start and never saw end (tetherd was lost with it) is not waited for once
/// the replay is over. Before, the next CLI's exit was taken for that older one's, and the
/// prompt after it waited for good ("Working…", no CLI running, Stop no help).
#[test]
fn a_cli_the_log_never_saw_end_is_not_waited_for_after_the_replay() {
    let mut cli = ClaudeCli::new(ProcessMode::Oneshot);
    cli.replay_start(WORKSPACE);
    cli.replay_sent_cli(r#"{"type":"control_request","request_id":"tether-1","request":{"subtype":"initialize"}}"#);
    cli.replay_sent_cli(r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hello B"}]}}"#);
    cli.finish_replay();
    while cli.poll_client_line().is_some() {}

    let result = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Hi.","session_id":"c17ea506-5fe2-404b-94d6-2edc0cb99bb4"}"#;
    for (turn, text) in ["hello C", "hello D"].into_iter().enumerate() {
        let prompt = serde_json::json!({
            "jsonrpc": "2.0", "id": 10 + turn, "method": "session/prompt",
            "params": {"sessionId": "claude", "prompt": [{"type": "text", "text": text}]},
        });
        cli.handle_client_line(&prompt.to_string(), 0);
        let actions: Vec<ProcessAction> = std::iter::from_fn(|| cli.poll_process()).collect();
        let Some(ProcessAction::Start { process, .. }) = actions.first() else {
            panic!("{text:?} started no CLI: {actions:?}");
        };
        let process = *process;
        cli.handle_process_started(0);
        cli.handle_cli_line(result, 0);
        while cli.poll_process().is_some() {}
        cli.handle_process_exited(Some(process), "exited with code 0", "");
        let answered =
            std::iter::from_fn(|| cli.poll_client_line()).any(|line| line.contains(&format!("\"id\":{}", 10 + turn)));
        assert!(answered, "{text:?} was not answered");
    }
}

/// A session reopened from its log (tetherd was lost, and a new one reopens every tab) knows the
/// CLI's commands and models from the log: its next CLI starts with the person's next prompt.
/// Before, every reopened Claude tab started an idle CLI at once, for a person who might never
/// go back to it. A session with nothing of the kind in its log still starts one at once.
#[test]
fn a_reopened_session_that_knows_the_clis_commands_starts_its_cli_with_the_next_prompt() {
    let initialize = r#"{"type":"control_request","request_id":"tether-1","request":{"subtype":"initialize"}}"#;
    let answered = r#"{"type":"control_response","response":{"subtype":"success","request_id":"tether-1","response":{"commands":[{"name":"review","description":"Review the changes","argumentHint":""}],"models":[{"value":"default","displayName":"Default"}]}}}"#;
    let load = r#"{"jsonrpc":"2.0","id":20,"method":"session/load","params":{"sessionId":"claude-cli","cwd":"/ws","mcpServers":[]}}"#;
    let starts = |cli: &mut ClaudeCli| {
        std::iter::from_fn(|| cli.poll_process()).filter(|action| matches!(action, ProcessAction::Start { .. })).count()
    };

    let mut cli = ClaudeCli::new(ProcessMode::Oneshot);
    cli.replay_start(WORKSPACE);
    cli.replay_sent_cli(initialize);
    cli.handle_cli_line(answered, 0);
    cli.finish_replay();
    while cli.poll_client_line().is_some() {}
    cli.handle_client_line(load, 0);
    assert_eq!(starts(&mut cli), 0, "the reopened session started a CLI before any prompt");
    // The client forgot the commands with the agent it restarted: it is told them again.
    let told: Vec<String> = std::iter::from_fn(|| cli.poll_client_line()).collect();
    assert!(
        told.iter().any(|line| line.contains("available_commands_update") && line.contains("\"review\"")),
        "the reopened session's commands were not listed again: {told:?}"
    );
    let prompt = r#"{"jsonrpc":"2.0","id":21,"method":"session/prompt","params":{"sessionId":"claude-cli","prompt":[{"type":"text","text":"Go on"}]}}"#;
    cli.handle_client_line(prompt, 0);
    assert_eq!(starts(&mut cli), 1, "the prompt started the CLI");

    // A log with no answer from a CLI (the first one never answered): one starts at once.
    let mut cli = ClaudeCli::new(ProcessMode::Oneshot);
    cli.replay_start(WORKSPACE);
    cli.finish_replay();
    while cli.poll_client_line().is_some() {}
    cli.handle_client_line(load, 0);
    assert_eq!(starts(&mut cli), 1, "a session that knows no commands starts its CLI at once");
}
