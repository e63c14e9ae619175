//! End-to-end tests of the test agent binary: real process, real pipes, ACP as a client
//! speaks it.

mod line_client;

use expect_test::expect;
use line_client::{AgentProcess, choose, describe, run_turn};
use serde_json::{Value, json};

fn no_capabilities() -> Value {
    json!({})
}

fn all_capabilities() -> Value {
    json!({ "fs": { "readTextFile": true, "writeTextFile": true }, "terminal": true })
}

/// What `cargo xtask run` and the end-to-end tests put in the Demo's workspace as notes.md.
const DEMO_NOTES: &str = "# Notes\n\n- Try the Tether sidebar.\n";

/// The Demo agent with a session in a temporary workspace of its own, which holds notes.md as
/// `cargo xtask run` writes it.
struct DemoWorkspace {
    agent: AgentProcess,
    session: String,
    notes: std::path::PathBuf,
    folder: tempfile::TempDir,
}

fn demo_workspace() -> DemoWorkspace {
    let folder = tempfile::tempdir().expect("a temporary workspace");
    let notes = folder.path().join("notes.md");
    std::fs::write(&notes, DEMO_NOTES).expect("the test can write the demo's notes");
    let mut agent = AgentProcess::spawn(&[]);
    let session = agent.start_session_in(no_capabilities(), folder.path().to_str().expect("a UTF-8 temporary path"));
    DemoWorkspace { agent, session, notes, folder }
}

#[test]
fn the_demo_turn_streams_plans_calls_tools_and_asks_permission() {
    let DemoWorkspace { mut agent, session, notes, folder } = demo_workspace();
    let cwd = folder.path().to_str().expect("a UTF-8 temporary path");
    let transcript = run_turn(&mut agent, &session, "What can you do?", choose("allow-once"));
    // Allowed, the edit is made: what the agent proposed is what the file then holds.
    assert_eq!(
        std::fs::read_to_string(&notes).expect("notes.md is there"),
        format!("{DEMO_NOTES}- Tether was here.\n")
    );
    let transcript = transcript.join("\n").replace(cwd, "<workspace>");
    expect![[r##"
        think "The person aske"
        think "d something; le"
        think "t me show what "
        think "Tether can do."
        plan [in_progress: Read the README; pending: Propose an edit to notes.md; pending: Ask before changing anything]
        say "Hello!"
        say " I'm t"
        say "he Tet"
        say "her de"
        say "mo age"
        say "nt. I"
        say " stre"
        say "am my"
        say " answ"
        say "er in"
        say " smal"
        say "l pie"
        say "ces, "
        say "show "
        say "my to"
        say "ol ca"
        say "lls, "
        say "and a"
        say "sk be"
        say "fore "
        say "I cha"
        say "nge a"
        say "nythi"
        say "ng.\n\n"
        say "In this tu"
        say "rn I will:"
        say "\n\n- read `"
        say "README.md`"
        say "\n- propose"
        say " an edit t"
        say "o `notes.m"
        say "d`\n- wait "
        say "for your "
        say "answer be"
        say "fore appl"
        say "ying it\n\n"
        tool_call demo-read "Read README.md" kind=read status=pending locations=[{"path":"<workspace>/README.md"}]
        tool_update demo-read status=in_progress
        tool_update demo-read status=completed content=[{"type":"content","content":{"type":"text","text":"# Demo workspace\n\nA small folder for trying Tether."}}]
        plan [completed: Read the README; in_progress: Propose an edit to notes.md; pending: Ask before changing anything]
        tool_call demo-edit "Edit notes.md" kind=edit status=pending locations=[{"path":"<workspace>/notes.md","line":1}] content=[{"type":"diff","path":"<workspace>/notes.md","oldText":"# Notes\n\n- Try the Tether sidebar.\n","newText":"# Notes\n\n- Try the Tether sidebar.\n- Tether was here.\n"}]
        permission {"toolCallId":"demo-edit","kind":"edit","title":"Edit notes.md"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        say "Permission gr"
        say "anted: I will"
        say " add a line t"
        say "o notes.md.\n\n"
        say "Wrote notes.md myself.\n\n"
        tool_update demo-edit status=completed
        say "Tether shows th"
        say "e change on its"
        say " card, where yo"
        say "u can keep it "
        say "or revert it h"
        say "unk by hunk.\n\n"
        plan [completed: Read the README; completed: Propose an edit to notes.md; completed: Ask before changing anything]
        say "Finally, a comman"
        say "d: Tether runs it"
        say " in a real termin"
        say "al, shown in VS C"
        say "ode's terminal p"
        say "anel and here.\n\n"
        tool_call demo-run "Run ls -la" kind=execute status=pending rawInput={"command":"ls -la"}
        permission {"toolCallId":"demo-run","kind":"execute","title":"Run ls -la","rawInput":{"command":"ls -la"}} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        say "Skipped running `ls -la`: client does not support terminal.\n\n"
        tool_update demo-run status=failed
        say "That was a full turn."
        result {"stopReason":"end_turn"}"##]].assert_eq(&transcript);
}

#[test]
fn a_second_demo_turn_proposes_its_edit_against_what_the_first_left() {
    // A newcomer tries the Demo again, in the same session or after restarting it: the edit it
    // proposes must be a change of the file as it is, not of the file the first turn started from.
    let DemoWorkspace { mut agent, session, notes, folder: _folder } = demo_workspace();
    run_turn(&mut agent, &session, "What can you do?", choose("allow-once"));
    let transcript = run_turn(&mut agent, &session, "Again, please", choose("allow-once"));
    let proposal = transcript.iter().find(|line| line.starts_with("tool_call demo-edit-2 ")).expect("a second edit");
    let after_first = format!("{DEMO_NOTES}- Tether was here.\n");
    let after_second = format!("{after_first}- Tether was here.\n");
    let diff = json!([{ "type": "diff", "path": notes, "oldText": after_first, "newText": after_second }]);
    assert!(proposal.ends_with(&format!("content={diff}")), "the second proposal: {proposal}");
    assert_eq!(std::fs::read_to_string(&notes).expect("notes.md is there"), after_second);
}

#[test]
fn rejecting_the_demo_edit_takes_the_rejected_branch() {
    let mut agent = AgentProcess::scenario("demo");
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "hello", choose("reject-once"));
    let after_permission: Vec<&str> =
        transcript.iter().skip_while(|line| !line.starts_with("permission")).skip(1).map(String::as_str).collect();
    expect![[r#"
        tool_update demo-edit status=failed
        say "Understoo"
        say "d: I left"
        say " notes.md"
        say " alone.\n\n"
        plan [completed: Read the README; completed: Propose an edit to notes.md; completed: Ask before changing anything]
        say "Finally, a comman"
        say "d: Tether runs it"
        say " in a real termin"
        say "al, shown in VS C"
        say "ode's terminal p"
        say "anel and here.\n\n"
        tool_call demo-run "Run ls -la" kind=execute status=pending rawInput={"command":"ls -la"}
        permission {"toolCallId":"demo-run","kind":"execute","title":"Run ls -la","rawInput":{"command":"ls -la"}} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        tool_update demo-run status=failed
        say "Understood: I di"
        say "d not run it.\n\n"
        say "That was a full turn."
        result {"stopReason":"end_turn"}"#]].assert_eq(&after_permission.join("\n"));
}

/// ACP wants a tool call's id used once in a session. The Demo's one prompt runs for every
/// prompt: a second turn that sent `demo-read` again would have a client update the first turn's
/// card instead of showing a new one (Tether did, before the ids were made unique).
#[test]
fn a_prompt_that_runs_again_sends_its_tool_calls_with_new_ids() {
    let mut agent = AgentProcess::scenario("demo");
    let session = agent.start_session(no_capabilities());
    let tool_lines = |transcript: Vec<String>| -> String {
        let lines = transcript.into_iter().filter(|line| line.starts_with("tool_") || line.starts_with("permission"));
        lines.map(|line| line.split(" kind=").next().unwrap_or_default().to_owned()).collect::<Vec<_>>().join("\n")
    };
    let first = tool_lines(run_turn(&mut agent, &session, "hello", choose("reject-once")));
    let second = tool_lines(run_turn(&mut agent, &session, "again", choose("reject-once")));
    expect![[r##"
        tool_call demo-read "Read README.md"
        tool_update demo-read status=in_progress
        tool_update demo-read status=completed content=[{"type":"content","content":{"type":"text","text":"# Demo workspace\n\nA small folder for trying Tether."}}]
        tool_call demo-edit "Edit notes.md"
        permission {"toolCallId":"demo-edit","kind":"edit","title":"Edit notes.md"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        tool_update demo-edit status=failed
        tool_call demo-run "Run ls -la"
        permission {"toolCallId":"demo-run","kind":"execute","title":"Run ls -la","rawInput":{"command":"ls -la"}} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        tool_update demo-run status=failed"##]].assert_eq(&first);
    expect![[r##"
        tool_call demo-read-2 "Read README.md"
        tool_update demo-read-2 status=in_progress
        tool_update demo-read-2 status=completed content=[{"type":"content","content":{"type":"text","text":"# Demo workspace\n\nA small folder for trying Tether."}}]
        tool_call demo-edit-2 "Edit notes.md"
        permission {"toolCallId":"demo-edit-2","kind":"edit","title":"Edit notes.md"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        tool_update demo-edit-2 status=failed
        tool_call demo-run-2 "Run ls -la"
        permission {"toolCallId":"demo-run-2","kind":"execute","title":"Run ls -la","rawInput":{"command":"ls -la"}} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        tool_update demo-run-2 status=failed"##]].assert_eq(&second);
}

#[test]
fn cancelling_mid_stream_stops_the_stream_and_answers_cancelled() {
    let mut agent = AgentProcess::scenario("slow-stream");
    let session = agent.start_session(no_capabilities());
    let prompt_id = agent.send_request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "count" }] }),
    );
    let first = agent.next_message();
    assert_eq!(describe(&first), r#"say "001 ""#);
    agent.notify("session/cancel", json!({ "sessionId": session }));
    let mut chunks = 1;
    let response = loop {
        let message = agent.next_message();
        if message["id"] == json!(prompt_id) {
            break message;
        }
        assert_eq!(message["params"]["update"]["sessionUpdate"], "agent_message_chunk", "{message}");
        chunks += 1;
    };
    assert_eq!(response["result"], json!({ "stopReason": "cancelled" }));
    assert!(chunks < 200, "the stream ran to its end ({chunks} chunks) despite the cancel");

    // The session takes a new prompt afterwards.
    agent.notify("session/cancel", json!({ "sessionId": session }));
    let next_id = agent.send_request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "again" }] }),
    );
    assert_eq!(describe(&agent.next_message()), r#"say "001 ""#);
    agent.notify("session/cancel", json!({ "sessionId": session }));
    let response = loop {
        let message = agent.next_message();
        if message["id"] == json!(next_id) {
            break message;
        }
    };
    assert_eq!(response["result"], json!({ "stopReason": "cancelled" }));
}

#[test]
fn cancelling_while_permission_is_pending_runs_the_cancelled_branch() {
    let mut agent = AgentProcess::scenario("demo");
    let session = agent.start_session(no_capabilities());
    let cancel_session = session.clone();
    let transcript = run_turn(&mut agent, &session, "hello", move |agent, request| {
        assert_eq!(request["method"], "session/request_permission");
        // What a client does on cancel: send the notification, then answer what is pending.
        agent.notify("session/cancel", json!({ "sessionId": cancel_session }));
        agent.respond(&request["id"], json!({ "outcome": { "outcome": "cancelled" } }));
    });
    let after_permission: Vec<&str> =
        transcript.iter().skip_while(|line| !line.starts_with("permission")).skip(1).map(String::as_str).collect();
    expect![[r#"
        tool_update demo-edit status=failed
        result {"stopReason":"cancelled"}"#]]
    .assert_eq(&after_permission.join("\n"));
}

#[test]
fn die_mid_turn_exits_with_code_3_and_says_why_on_stderr() {
    let mut agent = AgentProcess::scenario("die-mid-turn");
    let session = agent.start_session(no_capabilities());
    agent.send_request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "go" }] }));
    let status = agent.wait_for_exit();
    assert_eq!(status.code(), Some(3));
    let (_, stderr) = agent.finish();
    assert!(stderr.contains("fatal: simulated crash"), "stderr: {stderr}");
}

#[test]
fn malformed_prints_bad_lines_and_then_carries_on() {
    let mut agent = AgentProcess::scenario("malformed");
    let session = agent.start_session(no_capabilities());
    let prompt_id = agent
        .send_request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "go" }] }));
    assert_eq!(describe(&agent.next_message()), r#"say "About to print some bad lines.\n\n""#);
    assert_eq!(agent.next_line(), b"this is not json");
    assert_eq!(agent.next_line(), [0xff, 0xfe]);
    let long_line = agent.next_line();
    assert_eq!(long_line.len(), 70_000_000);
    assert!(long_line.iter().all(|&byte| byte == b'x'));
    assert_eq!(describe(&agent.next_message()), r#"say "Still here after the bad lines.""#);
    let response = agent.next_message();
    assert_eq!(response["id"], json!(prompt_id));
    assert_eq!(response["result"], json!({ "stopReason": "end_turn" }));
}

#[test]
fn stream_many_sends_5000_chunks_of_100_kb_in_order() {
    let mut agent = AgentProcess::scenario("stream-many");
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "go", |_, request| panic!("unexpected {request}"));
    let (response, chunks) = transcript.split_last().expect("a response");
    assert_eq!(response, r#"result {"stopReason":"end_turn"}"#);
    assert_eq!(chunks.len(), 5000);
    assert!(chunks.iter().all(|chunk| chunk == r#"say "The quick brown fox ""#));
}

#[test]
fn two_permission_requests_are_outstanding_at_once_and_branches_follow_the_answers() {
    let mut agent = AgentProcess::scenario("permission-twice");
    let session = agent.start_session(no_capabilities());
    let prompt_id = agent.send_request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "edit" }] }),
    );
    let mut transcript = Vec::new();
    let mut permission_requests = Vec::new();
    while permission_requests.len() < 2 {
        let message = agent.next_message();
        transcript.push(describe(&message));
        if message["method"] == "session/request_permission" {
            permission_requests.push(message);
        }
    }
    // Answer the second request first: its branch runs first.
    agent.respond(
        &permission_requests[1]["id"],
        json!({ "outcome": { "outcome": "selected", "optionId": "allow-always" } }),
    );
    agent.respond(
        &permission_requests[0]["id"],
        json!({ "outcome": { "outcome": "selected", "optionId": "reject-always" } }),
    );
    loop {
        let message = agent.next_message();
        transcript.push(describe(&message));
        if message["id"] == json!(prompt_id) && message.get("method").is_none() {
            break;
        }
    }
    expect![[r#"
        say "I would like to change two files.\n\n"
        tool_call edit-a "Edit a.txt" kind=edit status=pending content=[{"type":"diff","path":"/tmp/tether-demo-workspace/a.txt","oldText":"a\n","newText":"A\n"}]
        tool_call edit-b "Edit b.txt" kind=edit status=pending content=[{"type":"diff","path":"/tmp/tether-demo-workspace/b.txt","oldText":"b\n","newText":"B\n"}]
        permission {"toolCallId":"edit-a","kind":"edit","title":"Edit a.txt"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        permission {"toolCallId":"edit-b","kind":"edit","title":"Edit b.txt"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        tool_update edit-b status=completed
        say "Edited b.txt.\n\n"
        tool_update edit-a status=failed
        say "Left a.txt alone.\n\n"
        say "Both answers are in."
        result {"stopReason":"end_turn"}"#]].assert_eq(&transcript.join("\n"));
}

#[test]
fn fs_and_terminal_use_the_client_methods_it_declared() {
    let mut agent = AgentProcess::scenario("fs-and-terminal");
    let session = agent.start_session(all_capabilities());
    let mut requests = Vec::new();
    let transcript = run_turn(&mut agent, &session, "go", |agent, request| {
        requests.push(format!("{} {}", request["method"].as_str().unwrap_or("?"), request["params"]));
        let result = match request["method"].as_str() {
            Some("fs/read_text_file") => json!({ "content": "# Demo workspace\n" }),
            Some("fs/write_text_file") => json!({}),
            Some("terminal/create") => json!({ "terminalId": "term-7" }),
            Some("terminal/wait_for_exit") => json!({ "exitCode": 0 }),
            Some("terminal/output") => json!({ "output": "hi\n", "truncated": false, "exitStatus": { "exitCode": 0 } }),
            Some("terminal/release") => json!({}),
            other => panic!("unexpected request {other:?}"),
        };
        agent.respond(&request["id"], result);
    });
    expect![[r##"
        fs/read_text_file {"sessionId":"test-session-1","path":"/tmp/tether-demo-workspace/README.md","line":1,"limit":5}
        fs/write_text_file {"sessionId":"test-session-1","path":"/tmp/tether-demo-workspace/notes.md","content":"# Notes\n\nWritten by the test agent.\n"}
        terminal/create {"sessionId":"test-session-1","command":"echo","args":["hi"],"cwd":"/tmp/tether-demo-workspace"}
        terminal/wait_for_exit {"sessionId":"test-session-1","terminalId":"term-7"}
        terminal/output {"sessionId":"test-session-1","terminalId":"term-7"}
        terminal/release {"sessionId":"test-session-1","terminalId":"term-7"}"##]].assert_eq(&requests.join("\n"));
    expect![[r##"
        say "Let me look at the README, take a note and run a command.\n\n"
        request fs/read_text_file {"sessionId":"test-session-1","path":"/tmp/tether-demo-workspace/README.md","line":1,"limit":5}
        say "Read /tmp/tether-demo-workspace/README.md:\n\n```\n# Demo workspace\n```\n\n"
        request fs/write_text_file {"sessionId":"test-session-1","path":"/tmp/tether-demo-workspace/notes.md","content":"# Notes\n\nWritten by the test agent.\n"}
        say "Wrote /tmp/tether-demo-workspace/notes.md.\n\n"
        request terminal/create {"sessionId":"test-session-1","command":"echo","args":["hi"],"cwd":"/tmp/tether-demo-workspace"}
        tool_call terminal-1 "Run `echo hi`" kind=execute status=in_progress content=[{"type":"terminal","terminalId":"term-7"}]
        request terminal/wait_for_exit {"sessionId":"test-session-1","terminalId":"term-7"}
        request terminal/output {"sessionId":"test-session-1","terminalId":"term-7"}
        request terminal/release {"sessionId":"test-session-1","terminalId":"term-7"}
        tool_update terminal-1 status=completed
        say "`echo hi` exited with code 0:\n\n```\nhi\n```\n\n"
        say "Done."
        result {"stopReason":"end_turn"}"##]].assert_eq(&transcript.join("\n"));
}

#[test]
fn fs_and_terminal_say_so_when_the_client_lacks_them() {
    let mut agent = AgentProcess::scenario("fs-and-terminal");
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "go", |_, request| panic!("unexpected {request}"));
    expect![[r#"
        say "Let me look at the README, take a note and run a command.\n\n"
        say "Skipped reading /tmp/tether-demo-workspace/README.md: client does not support fs/read_text_file.\n\n"
        say "Skipped writing /tmp/tether-demo-workspace/notes.md: client does not support fs/write_text_file.\n\n"
        say "Skipped running `echo hi`: client does not support terminal.\n\n"
        say "Done."
        result {"stopReason":"end_turn"}"#]]
    .assert_eq(&transcript.join("\n"));
}

#[test]
fn client_errors_get_json_rpc_errors_and_the_agent_keeps_going() {
    let mut agent = AgentProcess::scenario("slow-stream");
    let mut answers = Vec::new();

    agent.send_raw(b"{not json\n");
    answers.push(describe(&agent.next_message()));
    agent.send_raw(b"[1, 2]\n");
    answers.push(describe(&agent.next_message()));
    answers.push(describe(&agent.request("session/load", json!({}))));
    answers.push(describe(&agent.request("session/new", json!({ "mcpServers": [] }))));
    answers.push(describe(&agent.request("session/new", json!({ "cwd": "relative", "mcpServers": [] }))));
    answers.push(describe(&agent.request("session/prompt", json!({ "sessionId": "no-such-session", "prompt": [] }))));

    let session = agent.start_session(no_capabilities());
    let prompt_id = agent
        .send_request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "one" }] }));
    assert_eq!(describe(&agent.next_message()), r#"say "001 ""#);
    let second_id = agent
        .send_request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "two" }] }));
    let second = loop {
        let message = agent.next_message();
        if message["id"] == json!(second_id) {
            break message;
        }
    };
    answers.push(describe(&second));
    agent.notify("session/cancel", json!({ "sessionId": session }));
    loop {
        if agent.next_message()["id"] == json!(prompt_id) {
            break;
        }
    }
    expect![[r#"
        error {"code":-32700,"message":"Parse error: key must be a string at line 1 column 2"}
        error {"code":-32600,"message":"Invalid request: not a JSON object"}
        error {"code":-32601,"message":"Method not found: session/load"}
        error {"code":-32602,"message":"Invalid params: missing field `cwd`"}
        error {"code":-32602,"message":"Invalid params: cwd must be an absolute path, got relative"}
        error {"code":-32002,"message":"Unknown session: no-such-session","data":{"sessionId":"no-such-session"}}
        error {"code":-32600,"message":"session test-session-1 already has a prompt in progress"}"#]]
    .assert_eq(&answers.join("\n"));
    let (status, _) = agent.finish();
    assert!(status.success(), "closing stdin ends the agent cleanly: {status}");
}

#[test]
fn a_scenario_file_with_an_error_names_the_file_and_line() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("broken-scenario.toml");
    std::fs::write(
        &path,
        "description = \"broken\"\n\n[[prompt]]\nsteps = [\n  { say = \"fine\" },\n  { tool_call = { id = \"t\", title = \"T\", status = \"done\" } },\n]\n",
    )
    .expect("the test can write to its temporary directory");
    let agent = AgentProcess::scenario(path.to_str().expect("a UTF-8 path"));
    let (status, stderr) = agent.finish();
    assert_eq!(status.code(), Some(2));
    assert!(stderr.contains(&format!("{}, line 6", path.display())), "stderr: {stderr}");
    assert!(stderr.contains("done"), "stderr: {stderr}");
}

#[test]
fn an_unknown_built_in_name_lists_the_built_in_scenarios() {
    let agent = AgentProcess::scenario("no-such-scenario");
    let (status, stderr) = agent.finish();
    assert_eq!(status.code(), Some(2));
    expect!["tether-test-agent: no built-in scenario named `no-such-scenario` (built-in: demo, stream-many, slow-stream, permission-twice, die-mid-turn, malformed, fs-and-terminal, permissions, files, terminals, faults, sessions, hang-initialize, ignore-cancel, rough-edges); pass a path ending in .toml to load a file"].assert_eq(stderr.trim_end());
}

#[test]
fn two_sessions_run_their_turns_at_the_same_time() {
    let mut agent = AgentProcess::scenario("slow-stream");
    let first = agent.start_session(no_capabilities());
    let second =
        agent.request("session/new", json!({ "cwd": "/tmp/elsewhere", "mcpServers": [] }))["result"]["sessionId"]
            .as_str()
            .expect("a second session id")
            .to_owned();
    assert_ne!(first, second);
    let mut prompts = Vec::new();
    for session in [&first, &second] {
        prompts.push(agent.send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "count" }] }),
        ));
    }
    // Both sessions stream before either turn is over.
    let mut streaming = std::collections::BTreeSet::new();
    while streaming.len() < 2 {
        let message = agent.next_message();
        assert_eq!(message["method"], "session/update", "{message}");
        streaming.insert(message["params"]["sessionId"].as_str().expect("a session id").to_owned());
    }
    for session in [&first, &second] {
        agent.notify("session/cancel", json!({ "sessionId": session }));
    }
    let mut answered = Vec::new();
    while answered.len() < 2 {
        let message = agent.next_message();
        if message.get("result").is_some() {
            assert_eq!(message["result"], json!({ "stopReason": "cancelled" }));
            answered.push(message["id"].as_i64().expect("a numeric id"));
        }
    }
    answered.sort_unstable();
    assert_eq!(answered, prompts);
}

/// Sends a prompt and returns its id; the caller reads what follows.
fn send_prompt(agent: &mut AgentProcess, session: &str, text: &str) -> i64 {
    agent.send_request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] }))
}

/// Reads messages into `transcript` until the answer to request `id`, and returns that answer.
fn read_until_answer(agent: &AgentProcess, id: i64, transcript: &mut Vec<String>) -> Value {
    loop {
        let message = agent.next_message();
        transcript.push(describe(&message));
        if message["id"] == json!(id) && message.get("method").is_none() {
            return message;
        }
    }
}

/// Reads messages into `transcript` until the next request from the agent, and returns it.
fn read_until_request(agent: &AgentProcess, transcript: &mut Vec<String>) -> Value {
    loop {
        let message = agent.next_message();
        transcript.push(describe(&message));
        if message.get("method").is_some() && message.get("id").is_some() {
            return message;
        }
    }
}

/// The agent message text of a transcript: what a person reads in the chat.
fn chat_text(transcript: &[String]) -> String {
    transcript
        .iter()
        .filter_map(|line| line.strip_prefix("say "))
        .map(|quoted| serde_json::from_str::<String>(quoted).expect("say lines hold a JSON string"))
        .collect()
}

#[test]
fn run_tests_sends_the_command_as_raw_input_and_reports_the_choice() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "Please run tests", choose("allow-once"));
    expect![[r#"
        say "Running the tests.\n\n"
        tool_call run-tests "Run npm test" kind=execute status=pending rawInput={"command":"npm test"}
        permission {"toolCallId":"run-tests","kind":"execute","title":"Run npm test","rawInput":{"command":"npm test"}} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        say "Permission for run-tests: allow_once (allow-once).\n\n"
        tool_update run-tests status=completed content=[{"type":"content","content":{"type":"text","text":"All 3 tests passed."}}]
        say "Done."
        result {"stopReason":"end_turn"}"#]]
    .assert_eq(&transcript.join("\n"));
}

#[test]
fn a_reason_in_tether_meta_is_reported_after_the_choice_with_one_period() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "edit the notes", |agent, request| {
        assert_eq!(request["method"], "session/request_permission");
        agent.respond(
            &request["id"],
            json!({ "outcome": { "outcome": "selected", "optionId": "reject-once" },
                    "_meta": { "tether": { "reason": "Plan mode is read-only." } } }),
        );
    });
    expect![[r##"
        tool_call edit-notes "Edit notes.md" kind=edit status=pending locations=[{"path":"/tmp/tether-demo-workspace/notes.md","line":1}] content=[{"type":"diff","path":"/tmp/tether-demo-workspace/notes.md","oldText":"# Notes\n","newText":"# Notes\n\nEdited.\n"}]
        permission {"toolCallId":"edit-notes","kind":"edit","title":"Edit notes.md"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        say "Permission for edit-notes: reject_once (reject-once). Reason: Plan mode is read-only.\n\n"
        tool_update edit-notes status=failed
        say "Done."
        result {"stopReason":"end_turn"}"##]]
    .assert_eq(&transcript.join("\n"));
}

#[test]
fn two_edits_report_each_answer_before_its_branch_once_both_are_in() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let prompt_id = send_prompt(&mut agent, &session, "make two edits");
    let mut transcript = Vec::new();
    let first = read_until_request(&agent, &mut transcript);
    let second = read_until_request(&agent, &mut transcript);
    // A rule answers the second at once (its reason has no period); the person dismisses the first.
    agent.respond(
        &second["id"],
        json!({ "outcome": { "outcome": "selected", "optionId": "allow-always" },
                "_meta": { "tether": { "reason": "Rule: always allow edits" } } }),
    );
    agent.respond(&first["id"], json!({ "outcome": { "outcome": "cancelled" } }));
    read_until_answer(&agent, prompt_id, &mut transcript);
    expect![[r#"
        tool_call edit-a "Edit a.txt" kind=edit status=pending locations=[{"path":"/tmp/tether-demo-workspace/a.txt"}] content=[{"type":"diff","path":"/tmp/tether-demo-workspace/a.txt","oldText":"a\n","newText":"A\n"}]
        tool_call edit-b "Edit b.txt" kind=edit status=pending locations=[{"path":"/tmp/tether-demo-workspace/b.txt"}] content=[{"type":"diff","path":"/tmp/tether-demo-workspace/b.txt","oldText":"b\n","newText":"B\n"}]
        permission {"toolCallId":"edit-a","kind":"edit","title":"Edit a.txt"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        permission {"toolCallId":"edit-b","kind":"edit","title":"Edit b.txt"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        say "Permission for edit-b: allow_always (allow-always). Reason: Rule: always allow edits.\n\n"
        tool_update edit-b status=completed
        say "Permission for edit-a: cancelled.\n\n"
        tool_update edit-a status=failed
        say "Both answers are in."
        result {"stopReason":"end_turn"}"#]]
    .assert_eq(&transcript.join("\n"));
}

#[test]
fn a_report_still_runs_when_the_turn_is_cancelled_while_the_question_is_open() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let cancel_session = session.clone();
    let transcript = run_turn(&mut agent, &session, "edit", move |agent, request| {
        agent.notify("session/cancel", json!({ "sessionId": cancel_session }));
        agent.respond(&request["id"], json!({ "outcome": { "outcome": "cancelled" } }));
    });
    let after_permission: Vec<&str> =
        transcript.iter().skip_while(|line| !line.starts_with("permission")).skip(1).map(String::as_str).collect();
    expect![[r#"
        say "Permission for edit-notes: cancelled.\n\n"
        tool_update edit-notes status=failed
        result {"stopReason":"cancelled"}"#]]
    .assert_eq(&after_permission.join("\n"));
}

#[test]
fn withdraw_sends_cancel_request_and_the_error_answer_runs_the_cancelled_branch() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let prompt_id = send_prompt(&mut agent, &session, "withdraw");
    let mut transcript = Vec::new();
    let request = read_until_request(&agent, &mut transcript);
    // The client leaves the question open; the agent withdraws it after its pause.
    let withdrawal = agent.next_message();
    assert_eq!(
        withdrawal,
        json!({ "jsonrpc": "2.0", "method": "$/cancel_request", "params": { "requestId": request["id"] } })
    );
    transcript.push("notification $/cancel_request (for the permission request)".to_owned());
    agent.respond_error(&request["id"], -32800, "Request cancelled");
    read_until_answer(&agent, prompt_id, &mut transcript);
    expect![[r#"
        tool_call fetch-docs "Fetch https://example.com/docs" kind=fetch status=pending
        permission {"toolCallId":"fetch-docs","kind":"fetch","title":"Fetch https://example.com/docs"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        notification $/cancel_request (for the permission request)
        say "Permission for fetch-docs: withdrawn (Request cancelled).\n\n"
        tool_update fetch-docs status=failed
        say "I withdrew my request."
        result {"stopReason":"end_turn"}"#]]
    .assert_eq(&transcript.join("\n"));
    let (_, stderr) = agent.finish();
    assert_eq!(stderr, "", "an error answer to a withdrawn request is expected, not worth a warning");
}

#[test]
fn cancel_permission_with_nothing_pending_is_reported_on_stderr_and_the_script_goes_on() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cancel-nothing.toml");
    std::fs::write(
        &path,
        r#"description = "withdraws a request it never sent, then one that was already answered"

[[prompt]]
steps = [
  { tool_call = { id = "t", title = "T" } },
  { cancel_permission = { tool_call_id = "never-asked" } },
  { ask_permission = { tool_call_id = "t", report = true } },
  { cancel_permission = { tool_call_id = "t" } },
  { say = "Still here." },
]
"#,
    )
    .expect("the test can write to its temporary directory");
    let mut agent = AgentProcess::scenario(path.to_str().expect("a UTF-8 path"));
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "go", choose("allow-once"));
    expect![[r#"
        tool_call t "T" kind=other status=pending
        permission {"toolCallId":"t","kind":"other","title":"T"} [allow-once="Allow once", allow-always="Always allow", reject-once="Reject", reject-always="Always reject"]
        say "Permission for t: allow_once (allow-once).\n\n"
        say "Still here."
        result {"stopReason":"end_turn"}"#]]
    .assert_eq(&transcript.join("\n"));
    let (status, stderr) = agent.finish();
    assert!(status.success(), "{status}");
    expect![[r#"
        tether-test-agent: scenario error: cancel_permission: no permission request for tool call `never-asked` is pending
        tether-test-agent: scenario error: cancel_permission: no permission request for tool call `t` is pending
    "#]]
    .assert_eq(&stderr);
}

#[test]
fn session_new_announces_the_modes_and_set_mode_switches_them() {
    let mut agent = AgentProcess::scenario("permissions");
    agent.initialize(json!({}));
    let created = agent.request("session/new", json!({ "cwd": line_client::WORKSPACE, "mcpServers": [] }));
    expect![[r#"{"sessionId":"test-session-1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Ask"},{"id":"acceptEdits","name":"Accept edits"},{"id":"plan","name":"Plan"},{"id":"bypassPermissions","name":"Bypass"}]}}"#]]
        .assert_eq(&created["result"].to_string());
    let session = created["result"]["sessionId"].as_str().expect("a session id").to_owned();

    let mut transcript = run_turn(&mut agent, &session, "which mode?", |_, request| panic!("unexpected {request}"));
    let set_id = agent.send_request("session/set_mode", json!({ "sessionId": session, "modeId": "plan" }));
    read_until_answer(&agent, set_id, &mut transcript);
    transcript.extend(run_turn(&mut agent, &session, "MODE", |_, request| panic!("unexpected {request}")));
    // A second session starts in the declared mode, whatever the first one switched to.
    let other = agent.request("session/new", json!({ "cwd": line_client::WORKSPACE, "mcpServers": [] }));
    assert_eq!(other["result"]["modes"]["currentModeId"], "default", "{other}");

    expect![[r#"
        say "Agent mode: default.\n\n"
        result {"stopReason":"end_turn"}
        mode plan
        result {}
        say "Agent mode: plan.\n\n"
        result {"stopReason":"end_turn"}"#]]
    .assert_eq(&transcript.join("\n"));
}

#[test]
fn set_mode_refuses_unknown_modes_and_agents_without_modes() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let mut answers = Vec::new();
    answers.push(describe(&agent.request("session/set_mode", json!({ "sessionId": session, "modeId": "yolo" }))));
    answers.push(describe(&agent.request("session/set_mode", json!({ "sessionId": "nope", "modeId": "plan" }))));
    // The refused switch left the mode alone.
    let chat = chat_text(&run_turn(&mut agent, &session, "mode", |_, request| panic!("unexpected {request}")));
    answers.push(format!("chat {chat:?}"));

    let mut demo = AgentProcess::scenario("demo");
    let demo_session = demo.start_session(no_capabilities());
    let created = demo.request("session/new", json!({ "cwd": line_client::WORKSPACE, "mcpServers": [] }));
    assert_eq!(created["result"].get("modes"), None, "{created}");
    answers.push(describe(&demo.request("session/set_mode", json!({ "sessionId": demo_session, "modeId": "plan" }))));
    expect![[r#"
        error {"code":-32602,"message":"Invalid params: unknown mode `yolo` (modes: default, acceptEdits, plan, bypassPermissions)"}
        error {"code":-32002,"message":"Unknown session: nope","data":{"sessionId":"nope"}}
        chat "Agent mode: default.\n\n"
        error {"code":-32601,"message":"Method not found: session/set_mode"}"#]]
    .assert_eq(&answers.join("\n"));
}

#[test]
fn session_answers_announce_the_models_and_set_model_switches_them() {
    let mut agent = AgentProcess::scenario("rough-edges");
    agent.initialize(json!({}));
    let created = agent.request("session/new", json!({ "cwd": line_client::WORKSPACE, "mcpServers": [] }));
    expect![[r#"{"sessionId":"test-session-1","models":{"availableModels":[{"modelId":"default","name":"Default (recommended)","description":"The agent's default model"},{"modelId":"opus","name":"Opus","description":"The largest model"}],"currentModelId":"default"}}"#]]
        .assert_eq(&created["result"].to_string());
    let session = created["result"]["sessionId"].as_str().expect("a session id").to_owned();

    let mut answers = Vec::new();
    let ask = |agent: &mut AgentProcess, words: &str| {
        chat_text(&run_turn(agent, &session, words, |_, request| panic!("unexpected {request}"))).trim_end().to_owned()
    };
    answers.push(ask(&mut agent, "which model?"));
    answers.push(describe(&agent.request("session/set_model", json!({ "sessionId": session, "modelId": "opus" }))));
    answers.push(describe(&agent.request("session/set_model", json!({ "sessionId": session, "modelId": "huge" }))));
    answers.push(describe(&agent.request("session/set_model", json!({ "sessionId": "nope", "modelId": "opus" }))));
    answers.push(ask(&mut agent, "which model now?"));
    // An agent without models has no session/set_model.
    let mut demo = AgentProcess::scenario("demo");
    let demo_session = demo.start_session(no_capabilities());
    answers.push(describe(&demo.request("session/set_model", json!({ "sessionId": demo_session, "modelId": "opus" }))));
    expect![[r#"
        Model: default.
        result {}
        error {"code":-32602,"message":"Invalid params: unknown model `huge` (models: default, opus)"}
        error {"code":-32002,"message":"Unknown session: nope","data":{"sessionId":"nope"}}
        Model: opus.
        error {"code":-32601,"message":"Method not found: session/set_model"}"#]]
    .assert_eq(&answers.join("\n"));
}

/// What the client says beside a write's success (`_meta.tether.message`) is reported with it.
#[test]
fn a_note_beside_a_write_answer_is_reported() {
    let mut agent = AgentProcess::scenario("rough-edges");
    let session = agent.start_session(all_capabilities());
    let transcript = run_turn(&mut agent, &session, "unsaved", |agent, request| {
        let note = json!({ "_meta": { "tether": { "savedToDisk": false, "message": "Only in the editor." } } });
        agent.respond(&request["id"], note);
    });
    expect![[r#"Wrote /tmp/tether-demo-workspace/notes.md. The client says: Only in the editor.

Done with the notes."#]]
    .assert_eq(&chat_text(&transcript));
}

#[test]
fn prompts_the_permissions_scenario_has_no_script_for_get_the_menu() {
    let mut agent = AgentProcess::scenario("permissions");
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "hello", |_, request| panic!("unexpected {request}"));
    assert_eq!(chat_text(&transcript), "Try: run tests, edit, two edits, withdraw, mode.");
}

/// `write_disk` changes the file without asking the client, as agents that edit files themselves
/// do, and says so; a write that fails is reported, not fatal.
#[test]
fn write_disk_writes_the_file_itself_and_says_so() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("write-disk");
    std::fs::create_dir_all(&dir).expect("the test can create its temporary directory");
    let target = dir.join("notes.md");
    std::fs::write(&target, "# Notes\n").expect("the test can write its fixture");
    let unwritable = dir.join("missing-folder").join("x.md");
    let scenario = dir.join("write-disk.toml");
    std::fs::write(
        &scenario,
        format!(
            "description = \"writes to disk\"\n\n[[prompt]]\nsteps = [\n  {{ write_disk = {{ path = {:?}, content = \"# Notes\\n\\nEdited.\\n\" }} }},\n  {{ write_disk = {{ path = {:?}, content = \"x\" }} }},\n]\n",
            target.display().to_string(),
            unwritable.display().to_string(),
        ),
    )
    .expect("the test can write its scenario");
    let mut agent = AgentProcess::scenario(scenario.to_str().expect("a UTF-8 path"));
    let session = agent.start_session(no_capabilities());
    let transcript = run_turn(&mut agent, &session, "go", |_, request| panic!("no request expected: {request}"));
    assert_eq!(std::fs::read_to_string(&target).expect("the file is there"), "# Notes\n\nEdited.\n");
    let said = chat_text(&transcript);
    assert!(said.starts_with(&format!("Wrote {} myself.\n\n", target.display())), "{said}");
    assert!(said.contains(&format!("Could not write {}: ", unwritable.display())), "{said}");
}

/// With a state folder, a session outlives the agent process: a restarted agent offers
/// `session/load`, replays the conversation (the person's prompt first) as the same updates it
/// sent live, and then takes prompts in that session again. Without one it offers nothing.
#[test]
fn a_stored_session_is_loaded_by_a_restarted_agent() {
    let state = tempfile::tempdir().expect("a temporary folder");
    let state_dir = state.path().to_str().expect("a UTF-8 path");
    let mut first = AgentProcess::spawn(&["--scenario", "stream-many", "--state-dir", state_dir]);
    let session = first.start_session(no_capabilities());
    let live = run_turn(&mut first, &session, "Stream something", |_, _| {});
    drop(first);

    let mut restarted = AgentProcess::spawn(&["--scenario", "stream-many", "--state-dir", state_dir]);
    let initialized = restarted.initialize(no_capabilities());
    assert_eq!(initialized["result"]["agentCapabilities"]["loadSession"], json!(true));
    let load_id = restarted.send_request(
        "session/load",
        json!({ "sessionId": session, "cwd": "/tmp/tether-demo-workspace", "mcpServers": [] }),
    );
    let mut replayed = Vec::new();
    loop {
        let message = restarted.next_message();
        if message["id"] == json!(load_id) {
            assert_eq!(message["result"], json!({}), "{message}");
            break;
        }
        replayed.push(describe(&message));
    }
    // The live turn's updates, without the prompt's answer, after the person's message.
    let mut expected = vec![describe(&json!({
        "jsonrpc": "2.0", "method": "session/update",
        "params": { "sessionId": session, "update": { "sessionUpdate": "user_message_chunk",
                    "content": { "type": "text", "text": "Stream something" } } }
    }))];
    expected.extend(live[..live.len() - 1].iter().cloned());
    assert_eq!(replayed, expected);

    // The loaded session goes on, and a session that was never stored cannot be loaded.
    let next = run_turn(&mut restarted, &session, "Stream again", |_, _| {});
    assert!(next.last().is_some_and(|line| line.contains("end_turn")), "{next:?}");
    let missing = restarted.request(
        "session/load",
        json!({ "sessionId": "test-session-999", "cwd": "/tmp/tether-demo-workspace", "mcpServers": [] }),
    );
    assert_eq!(missing["error"]["code"], json!(-32002), "{missing}");

    let mut stateless = AgentProcess::spawn(&["--scenario", "stream-many"]);
    let initialized = stateless.initialize(no_capabilities());
    assert_eq!(initialized["result"]["agentCapabilities"]["loadSession"], json!(false));
}

/// A scenario that offers `session/fork` and says, for any prompt, whether the session is a fork.
const FORK_SCENARIO: &str =
    "description = \"offers session/fork\"\nfork = true\n\n[[prompt]]\nsteps = [{ report_fork = true }]\n";

/// Writes [`FORK_SCENARIO`] into `dir` and returns its path, for `--scenario`.
fn write_fork_scenario(dir: &std::path::Path) -> String {
    let path = dir.join("fork.toml");
    std::fs::write(&path, FORK_SCENARIO).expect("the test can write its scenario");
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// What the agent says in the chat for one prompt, its last paragraph break left out.
fn chat_answer(agent: &mut AgentProcess, session: &str, prompt: &str) -> String {
    let transcript = run_turn(agent, session, prompt, |_, request| panic!("unexpected {request}"));
    chat_text(&transcript).trim_end().to_owned()
}

/// `fork = true` advertises `sessionCapabilities.fork` and answers `session/fork` with a new
/// session, which says where it came from; the source may be one this process never saw, as when
/// a client restores a conversation in a new agent. Without it, `session/fork` is unknown.
#[test]
fn session_fork_is_offered_with_fork_true_and_the_fork_says_its_source() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut agent = AgentProcess::scenario(&write_fork_scenario(dir.path()));
    let initialized = agent.initialize(no_capabilities());
    assert_eq!(initialized["result"]["agentCapabilities"]["sessionCapabilities"]["fork"], json!({}), "{initialized}");
    let session =
        agent.request("session/new", json!({ "cwd": line_client::WORKSPACE, "mcpServers": [] }))["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();

    let mut answers = vec![chat_answer(&mut agent, &session, "forked?")];
    let fork = |agent: &mut AgentProcess, params: Value| describe(&agent.request("session/fork", params));
    answers.push(fork(
        &mut agent,
        json!({ "sessionId": "test-session-7", "cwd": line_client::WORKSPACE, "mcpServers": [] }),
    ));
    answers.push(chat_answer(&mut agent, "test-session-8", "forked?"));
    answers.push(fork(&mut agent, json!({ "sessionId": session, "cwd": line_client::WORKSPACE, "mcpServers": [] })));
    answers.push(chat_answer(&mut agent, "test-session-9", "forked?"));
    // The source goes on as it was.
    answers.push(chat_answer(&mut agent, &session, "forked?"));
    answers.push(fork(&mut agent, json!({ "sessionId": "", "cwd": line_client::WORKSPACE, "mcpServers": [] })));
    answers.push(fork(&mut agent, json!({ "sessionId": session, "cwd": "relative", "mcpServers": [] })));
    answers.push(fork(&mut agent, json!({ "sessionId": session, "mcpServers": [] })));

    let mut demo = AgentProcess::scenario("demo");
    let initialized = demo.initialize(no_capabilities());
    assert_eq!(initialized["result"]["agentCapabilities"]["sessionCapabilities"].get("fork"), None, "{initialized}");
    let demo_session = demo.request("session/new", json!({ "cwd": line_client::WORKSPACE, "mcpServers": [] }));
    assert_eq!(demo_session["result"]["sessionId"], "test-session-1", "{demo_session}");
    answers.push(fork(
        &mut demo,
        json!({ "sessionId": "test-session-1", "cwd": line_client::WORKSPACE, "mcpServers": [] }),
    ));
    expect![[r#"
        This session was not forked.
        result {"sessionId":"test-session-8"}
        This session was forked from test-session-7.
        result {"sessionId":"test-session-9"}
        This session was forked from test-session-1.
        This session was not forked.
        error {"code":-32602,"message":"Invalid params: sessionId must not be empty"}
        error {"code":-32602,"message":"Invalid params: cwd must be an absolute path, got relative"}
        error {"code":-32602,"message":"Invalid params: missing field `cwd`"}
        error {"code":-32601,"message":"Method not found: session/fork"}"#]]
    .assert_eq(&answers.join("\n"));
}

/// With a state folder, a restarted agent forks a session of the earlier process: the fork
/// starts with a copy of the stored conversation, so loading it replays the source's turns
/// before its own, and the source is left as it was.
#[test]
fn a_fork_of_a_stored_session_starts_with_its_updates() {
    let state = tempfile::tempdir().expect("a temporary folder");
    let state_dir = state.path().join("state");
    let state_dir = state_dir.to_str().expect("a UTF-8 path");
    let scenario = write_fork_scenario(state.path());
    let mut first = AgentProcess::spawn(&["--scenario", &scenario, "--state-dir", state_dir]);
    let source = first.start_session(no_capabilities());
    assert_eq!(chat_answer(&mut first, &source, "first"), "This session was not forked.");
    drop(first);

    let mut restarted = AgentProcess::spawn(&["--scenario", &scenario, "--state-dir", state_dir]);
    restarted.initialize(no_capabilities());
    let forked = restarted.request("session/fork", json!({ "sessionId": source, "cwd": line_client::WORKSPACE }));
    let fork = forked["result"]["sessionId"].as_str().expect("a fork id").to_owned();
    assert_ne!(fork, source);
    assert_eq!(chat_answer(&mut restarted, &fork, "second"), format!("This session was forked from {source}."));
    drop(restarted);

    let mut third = AgentProcess::spawn(&["--scenario", &scenario, "--state-dir", state_dir]);
    third.initialize(no_capabilities());
    let mut replays = Vec::new();
    for session in [&fork, &source] {
        let load_id = third.send_request(
            "session/load",
            json!({ "sessionId": session, "cwd": line_client::WORKSPACE, "mcpServers": [] }),
        );
        replays.push(format!("load {session}"));
        read_until_answer(&third, load_id, &mut replays);
    }
    expect![[r#"
        load test-session-2
        update user_message_chunk {"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"first"}}
        say "This session was not forked.\n\n"
        update user_message_chunk {"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"second"}}
        say "This session was forked from test-session-1.\n\n"
        result {}
        load test-session-1
        update user_message_chunk {"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"first"}}
        say "This session was not forked.\n\n"
        result {}"#]]
    .assert_eq(&replays.join("\n"));
}

const BURST_SCENARIO: &str = r#"description = "A burst of entries."

[[prompt]]
match = "cancel"
steps = [{ burst = { entries = 1000000 } }]

[[prompt]]
steps = [{ burst = { entries = 7 } }]
"#;

fn write_burst_scenario(dir: &std::path::Path) -> String {
    let path = dir.join("burst.toml");
    std::fs::write(&path, BURST_SCENARIO).expect("the test can write its scenario");
    path.to_str().expect("a UTF-8 path").to_owned()
}

#[test]
fn a_burst_alternates_numbered_messages_with_completed_reads_runs_and_edits() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut agent = AgentProcess::scenario(&write_burst_scenario(dir.path()));
    let session = agent.start_session(no_capabilities());
    let prompt_id = agent
        .send_request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "go" }] }));
    let mut updates = Vec::new();
    let response = loop {
        let message = agent.next_message();
        if message["id"] == json!(prompt_id) {
            break message;
        }
        updates.push(message["params"]["update"].clone());
    };
    assert_eq!(response["result"], json!({ "stopReason": "end_turn" }));
    let shapes: Vec<String> = updates
        .iter()
        .map(|update| match update["sessionUpdate"].as_str() {
            Some("agent_message_chunk") => {
                let text = update["content"]["text"].as_str().unwrap_or_default();
                let fence_lines = text.split("```").nth(1).map_or(0, |code| code.trim_end().lines().count() - 1);
                format!("message {:?}, a code block of {fence_lines} lines", text.split(':').next().unwrap_or_default())
            }
            Some("tool_call") => {
                let content: Vec<&str> = update["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|item| item["type"].as_str())
                    .collect();
                format!(
                    "{} {:?} {} {}{}",
                    update["kind"].as_str().unwrap_or("?"),
                    update["title"].as_str().unwrap_or("?"),
                    update["status"].as_str().unwrap_or("?"),
                    content.join("+"),
                    if update["content"][0]["oldText"].is_string() { " with the old text" } else { "" },
                )
            }
            other => format!("{other:?}"),
        })
        .collect();
    expect![[r#"
        message "Entry 00001 of 7", a code block of 10 lines
        read "Read src/module_2.rs" completed content
        message "Entry 00003 of 7", a code block of 10 lines
        execute "Run `cargo test --lib module_4`" completed content
        message "Entry 00005 of 7", a code block of 10 lines
        edit "Edit src/module_6.rs" completed diff with the old text
        message "Entry 00007 of 7", a code block of 10 lines"#]]
    .assert_eq(&shapes.join("\n"));

    // A second burst's tool calls are new ones, not updates of the first burst's.
    let tool_call_ids = |transcript: &[String]| -> Vec<String> {
        transcript
            .iter()
            .filter(|line| line.starts_with("tool_call "))
            .map(|line| line.split(' ').nth(1).unwrap_or_default().to_owned())
            .collect()
    };
    let again = run_turn(&mut agent, &session, "go", |_, request| panic!("unexpected {request}"));
    let first: Vec<String> =
        updates.iter().filter_map(|update| update["toolCallId"].as_str().map(str::to_owned)).collect();
    let second = tool_call_ids(&again);
    assert_eq!(second.len(), 3);
    assert!(second.iter().all(|id| !first.contains(id)), "{first:?} then {second:?}");
}

#[test]
fn cancelling_a_burst_stops_it_between_two_entries() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut agent = AgentProcess::scenario(&write_burst_scenario(dir.path()));
    let session = agent.start_session(no_capabilities());
    let prompt_id = agent.send_request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "cancel" }] }),
    );
    assert_eq!(agent.next_message()["params"]["update"]["sessionUpdate"], "agent_message_chunk");
    agent.notify("session/cancel", json!({ "sessionId": session }));
    let mut entries = 1;
    let response = loop {
        let message = agent.next_message();
        if message["id"] == json!(prompt_id) {
            break message;
        }
        entries += 1;
    };
    assert_eq!(response["result"], json!({ "stopReason": "cancelled" }));
    assert!(entries < 1_000_000, "the burst ran to its end despite the cancel");
}
