//! Snapshots of sessions exported as Markdown.
//!
//! The threads are built by the real engine: folded from the event logs of
//! `test_data/replay/*.log` with `AcpClient::replay`, or driven live with the agent's lines and
//! the person's decisions. Each document is checked with `expect_file!` against
//! `test_data/export/<name>.md` (`UPDATE_EXPECT=1` accepts a change), so a snapshot can be opened
//! in VS Code's Markdown preview to see what the person would get.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use expect_test::expect;
use tether_core::acp::{AcpClient, AcpEvent, ClientInfo};
use tether_core::export::{ExportHeader, thread_markdown};
use tether_core::host_api::{EditOutcome, FileReadOutcome, FileReadReply, HostAction, ResolvedPath};
use tether_core::permissions::{Mode, PermissionPolicy, RuleScope};
use tether_core::session_log::read_log;
use tether_core::sidecar::BadLineKind;
use tether_core::thread::Thread;
use tether_core::webview::PromptAttachment;

fn header() -> ExportHeader {
    ExportHeader {
        title: "Fix the failing test".to_owned(),
        agent: "Test Agent".to_owned(),
        created: Some("2026-11-23T10:00:01.000Z".to_owned()),
        exported: Some("2026-11-23T12:30:00Z".to_owned()),
    }
}

fn client_info() -> ClientInfo {
    ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() }
}

fn export_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/export")
}

/// The thread of `test_data/replay/<name>.log`, as a reloaded window rebuilds it.
fn replayed(name: &str) -> Thread {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("test_data/replay/{name}.log"));
    let log = read_log(&std::fs::read_to_string(path).unwrap());
    let (client, problems) =
        AcpClient::replay(client_info(), "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &log);
    assert_eq!(problems, Vec::<String>::new(), "{name}: the log reads back whole");
    client.thread().clone()
}

fn check_replayed(name: &str) {
    let document = thread_markdown(&header(), &replayed(name));
    expect_test::expect_file![export_dir().join(format!("{name}.md"))].assert_eq(&document);
}

#[test]
fn a_finished_session_reads_as_the_conversation_with_the_permission_the_person_gave() {
    check_replayed("turn");
}

#[test]
fn an_agent_that_died_mid_turn_leaves_its_notice_with_stderr_and_the_failed_turn() {
    check_replayed("crash");
}

#[test]
fn a_cancelled_turn_says_so_and_the_request_it_cancelled() {
    check_replayed("cancelled");
}

#[test]
fn a_session_exported_while_a_request_waits_shows_it_waiting_and_the_turn_running() {
    check_replayed("pending-permission");
}

/// An agent session driven through the engine: the agent's lines, and what the host and the
/// person did in between.
struct Live {
    client: AcpClient,
    /// The time of what happens next, in milliseconds.
    now: u64,
}

impl Live {
    /// A session past its handshake, with `prompt` sent.
    fn prompted(prompt: &str) -> Live {
        let mut client = AcpClient::new(client_info(), "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1));
        client.start(0);
        let mut live = Live { client, now: 0 };
        live.agent(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#);
        live.agent(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
        live.client.prompt(prompt, &[], 0).unwrap();
        live
    }

    /// A line from the agent. The host's part of resolving paths is played as a host with no
    /// symbolic links would (each path leads to itself); nothing else the client raises matters
    /// to an export.
    fn agent(&mut self, line: &str) {
        self.client.handle_message(line, self.now);
        while let Some(event) = self.client.poll_event() {
            if let AcpEvent::Host(action) = event
                && let HostAction::ResolvePaths { resolve, roots, paths } = *action
            {
                let found = |path: String| ResolvedPath::Found { path };
                self.client.handle_paths_resolved(
                    resolve,
                    roots.into_iter().map(found).collect(),
                    paths.into_iter().map(found).collect(),
                    self.now,
                );
            }
        }
    }

    /// A `session/update` of session s1.
    fn update(&mut self, update: &str) {
        self.agent(&format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{update}}}}}"#
        ));
    }

    fn rule(&mut self, scope: RuleScope, spec: &str) {
        self.client.add_rule(serde_json::from_str(spec).unwrap(), scope).unwrap();
    }

    /// The host read a file the engine asked for.
    fn read(&mut self, read: u64, text: &str) {
        let outcome = FileReadOutcome::Data { eof: true, from_editor: false };
        self.client.handle_file_read(FileReadReply { read, outcome }, text.as_bytes(), 0);
    }

    fn review(&mut self, intent: &str) {
        self.client.review(serde_json::from_str(intent).unwrap(), 0).unwrap();
    }

    /// A frame passed at `now`: terminal output reaches the cards (and the thread).
    fn frame(&mut self, now: u64) {
        self.now = now;
        self.client.flush_terminals(now);
    }

    fn markdown(&self) -> String {
        thread_markdown(&header(), self.client.thread())
    }
}

/// Every kind of entry in one session: thoughts and text grouped under one heading per reply, a
/// plan, a read with a location, a diff, commands allowed and rejected by rules with the agent's
/// own terminal, a write reviewed hunk by hunk, and a second turn cut off by the agent's exit in
/// the middle of a code block.
#[test]
fn a_whole_session_with_every_kind_of_entry() {
    let mut live = Live::prompted("Add a `--verbose` flag.\n\nKeep the change **small**.");
    live.update(
        r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"Flags are parsed in `cli.rs`; "}}"#,
    );
    live.update(r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"the tests cover them."}}"#);
    live.update(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I'll start with the parser."}}"#,
    );
    live.update(
        r#"{"sessionUpdate":"plan","entries":[{"content":"Read the parser","priority":"high","status":"completed"},{"content":"Add `--verbose`","priority":"high","status":"in_progress"},{"content":"Run the tests","priority":"medium","status":"pending"}]}"#,
    );
    live.update(
        r#"{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read src/cli.rs","kind":"read","status":"completed","locations":[{"path":"/workspace/src/cli.rs","line":3}],"content":[{"type":"content","content":{"type":"text","text":"```rust\nlet quiet = args.flag(\"quiet\");\n```"}}]}"#,
    );
    live.update(
        r#"{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit src/cli.rs","kind":"edit","status":"completed","content":[{"type":"diff","path":"/workspace/src/cli.rs","oldText":"fn parse() {\n    let quiet = args.flag(\"quiet\");\n}\n","newText":"fn parse() {\n    let quiet = args.flag(\"quiet\");\n    let verbose = args.flag(\"verbose\");\n}\n"}]}"#,
    );

    // The person's rules answer two commands; the agent runs the allowed one itself and streams
    // its output.
    live.rule(RuleScope::Session, r#"{"decision":"allow","kinds":["execute"],"pattern":"cargo test*"}"#);
    live.rule(RuleScope::Workspace, r#"{"decision":"deny","pattern":"rm *"}"#);
    let options = r#"[{"optionId":"ao","name":"Allow once","kind":"allow_once"},{"optionId":"ro","name":"Reject","kind":"reject_once"}]"#;
    live.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{{"toolCallId":"x1","title":"Run the tests","kind":"execute","rawInput":{{"command":"cargo test"}}}},"options":{options}}}}}"#
    ));
    live.now = 1000;
    live.update(
        r#"{"_meta":{"terminal_info":{"terminal_id":"x1"},"terminal_output":{"terminal_id":"x1","data":"running 2 tests\r\ntest parses_quiet ... \u001b[32mok\u001b[0m\r\ntest parses_verbose ... \u001b[32mok\u001b[0m\r\n"}},"sessionUpdate":"tool_call_update","toolCallId":"x1","status":"in_progress","content":[{"type":"terminal","terminalId":"x1"}]}"#,
    );
    live.now = 4400;
    live.update(
        r#"{"_meta":{"terminal_exit":{"terminal_id":"x1","exit_code":0,"signal":null}},"sessionUpdate":"tool_call_update","toolCallId":"x1","status":"completed"}"#,
    );
    live.frame(4400);
    live.agent(&format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{{"toolCallId":"x2","title":"Clean the build","kind":"execute","rawInput":{{"command":"rm -rf target"}}}},"options":{options}}}}}"#
    ));

    // A write, reviewed: the first hunk kept, the second rejected.
    live.agent(
        r##"{"jsonrpc":"2.0","id":20,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/workspace/README.md","content":"# cli\n\nUse `--verbose` to see more.\n\nMIT\n"}}"##,
    );
    live.read(1, "# cli\n\nA tool.\n\nGPL\n");
    live.review(r#"{"type":"hunk","change":1,"hunk":0,"keep":true}"#);
    live.review(r#"{"type":"hunk","change":1,"hunk":1,"keep":false}"#);
    live.client.handle_edit_done(1, EditOutcome::Applied { saved: true });

    live.update(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done: `--verbose` is parsed and documented."}}"#);
    live.agent(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);

    let attachments = [
        PromptAttachment::File { path: "/workspace/README.md".to_owned() },
        PromptAttachment::Selection {
            path: "/workspace/src/cli.rs".to_owned(),
            start_line: 2,
            end_line: 3,
            text: "let quiet = args.flag(\"quiet\");\nlet verbose = args.flag(\"verbose\");".to_owned(),
        },
    ];
    live.client.prompt("Show me an example.", &attachments, 0).unwrap();
    live.update(
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Like this:\n\n```console\n$ cli --verbose\n"}}"#,
    );
    live.client.handle_exited(
        "exited with code 101",
        false,
        "thread 'main' panicked at src/main.rs:3:5\n`verbose` was not set",
    );

    expect_test::expect_file![export_dir().join("session.md")].assert_eq(&live.markdown());
}

/// Content that holds fences of its own cannot close the document's: each block's fence is
/// longer than any backtick run inside it, in a diff, a terminal's output and a notice's detail.
#[test]
fn backticks_in_diffs_output_and_details_stay_inside_their_blocks() {
    let mut live = Live::prompted("Fence it");
    live.update(
        r#"{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit notes.md","kind":"edit","status":"completed","content":[{"type":"diff","path":"/workspace/notes.md","oldText":"text\n","newText":"````\n```rust\n````\n"}]}"#,
    );
    live.update(
        r#"{"_meta":{"terminal_info":{"terminal_id":"x1"},"terminal_output":{"terminal_id":"x1","data":"```\n`````\n"},"terminal_exit":{"terminal_id":"x1","exit_code":1,"signal":null}},"sessionUpdate":"tool_call","toolCallId":"x1","title":"cat fences.md","kind":"execute","status":"failed","content":[{"type":"terminal","terminalId":"x1"}]}"#,
    );
    live.frame(120);
    live.client.handle_bad_line(BadLineKind::InvalidJson, 9, "```oops``", "expected value at line 1 column 1");

    expect![[r#"
        # Fix the failing test

        *Test Agent · started 2026-11-23 10:00 UTC · exported 2026-11-23 12:30 UTC*

        ## You

        Fence it

        ## Test Agent

        **📝 Edit notes.md** — Completed

        `notes.md` +3 −1
        `````diff
        -text
        +````
        +```rust
        +````
        `````

        **💻 cat fences.md** — Failed

        ``````console
        $ cat fences.md
        ```
        `````
        ``````
        *Exit 1 · 0.0 s · run by the agent*

        > **Warning:** The agent printed a line that is not JSON (9 bytes); it was skipped
        >
        > ````text
        > expected value at line 1 column 1
        >
        > ```oops``
        > ````

        *The turn was still running when this was exported*
    "#]]
    .assert_eq(&live.markdown());
}

/// A restore to a checkpoint is the person's, between the turns: its line names the prompt and
/// the files it puts back, and the change it proposed follows.
#[test]
fn a_restore_to_a_checkpoint_reads_as_what_it_puts_back() {
    let mut live = Live::prompted("Rename the tool");
    live.agent(
        r##"{"jsonrpc":"2.0","id":20,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/workspace/README.md","content":"# tool\n"}}"##,
    );
    live.read(1, "# cli\n");
    live.review(r#"{"type":"all","change":1,"keep":true}"#);
    live.client.handle_edit_done(1, EditOutcome::Applied { saved: true });
    live.agent(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
    live.client.restore_code(0).unwrap();
    live.read(2, "# tool\n");
    expect_test::expect_file![export_dir().join("restore.md")].assert_eq(&live.markdown());
}
