//! `tetherd check-agent` through the real binary: against agents that follow ACP (the SDK's
//! example agent, the scripted test agent's demo) it finds no problem and exits 0; against a
//! scripted agent per misbehaviour (tests/misbehaving_agents) it reports that one and exits 1.
//!
//! Reports are compared as text with the milliseconds of the timings masked, since they vary from
//! run to run.

#![cfg(unix)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::{Expect, expect};
use serde_json::Value;
use support::tether_test_agent;

/// The repository's root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `tetherd check-agent <args>` in `dir`; returns its stdout with timings masked, and its
/// exit code.
fn check_agent(dir: &Path, args: &[&str]) -> (String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_tetherd"))
        .arg("check-agent")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("tetherd runs");
    let stdout = String::from_utf8(output.stdout).expect("the report is UTF-8");
    assert!(output.stderr.is_empty(), "tetherd wrote to stderr:\n{}", String::from_utf8_lossy(&output.stderr));
    (mask_millis(&stdout), output.status.code().expect("tetherd exited, not killed by a signal"))
}

/// Replaces the number in each "took N ms" with "…".
fn mask_millis(report: &str) -> String {
    report
        .lines()
        .map(|line| match line.split_once(" took ") {
            Some((before, after)) if after.ends_with(" ms") => format!("{before} took … ms"),
            _ => line.to_owned(),
        })
        .map(|line| line + "\n")
        .collect()
}

/// Checks the scripted agent `name`.sh of tests/misbehaving_agents (with a one-second timeout,
/// so the one that never answers is quick) against its expected report and exit code.
fn check_script(name: &str, expected_exit: i32, expected_report: Expect) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/misbehaving_agents");
    let script = format!("{name}.sh");
    let (report, exit) = check_agent(&dir, &["--timeout-seconds", "1", "--", "sh", &script]);
    expected_report.assert_eq(&report);
    assert_eq!(exit, expected_exit, "the exit code, for the report:\n{report}");
}

#[test]
fn the_sdk_example_agent_has_no_problem() {
    let examples = repo_root().join("tests/node_modules/@agentclientprotocol/sdk/dist/examples");
    // `cargo xtask setup` installs it (the README's test command runs setup first). A machine
    // without it fails here, saying what to run, rather than passing without checking anything.
    assert!(
        examples.join("agent.js").exists(),
        "{} is missing: run `cargo xtask setup`",
        examples.join("agent.js").display()
    );
    // Run where the agent is, so the report's command line is the same on every machine.
    let (report, exit) = check_agent(&examples, &["--", "node", "agent.js"]);
    expect![[r#"
        check-agent: node agent.js
        note [timing] initialize took … ms
        note [agent-info] no agentInfo in the initialize answer
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        note [client-answer] session/request_permission was answered with the first allow option ("allow")
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        no problems found
    "#]]
    .assert_eq(&report);
    assert_eq!(exit, 0);
}

#[test]
fn the_test_agents_demo_has_no_problem() {
    let agent = tether_test_agent();
    let dir = agent.parent().expect("the executable is in a folder");
    let (report, exit) = check_agent(dir, &["--", "./tether-test-agent", "--scenario", "demo"]);
    expect![[r#"
        check-agent: ./tether-test-agent --scenario demo
        note [timing] initialize took … ms
        note [agent-info] tether-test-agent 0.1.0
        note [capabilities] agentCapabilities {"loadSession":false,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{},"auth":{}}
        note [timing] session/new took … ms
        note [client-answer] session/request_permission was answered with the first allow option ("allow-once")
        note [client-answer] terminal/create was answered with a fake terminal: nothing was run, and it reports exit code 0 with no output
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        no problems found
    "#]].assert_eq(&report);
    assert_eq!(exit, 0);
}

#[test]
fn non_json_on_stdout_is_a_problem() {
    check_script(
        "non-json",
        1,
        expect![[r#"
        check-agent: sh non-json.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        problem [non-json] not JSON: expected value at line 1 column 1 (stdout line 4: Loading model weights... done)
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn a_response_to_an_id_never_sent_is_a_problem() {
    check_script(
        "unknown-id",
        1,
        expect![[r#"
        check-agent: sh unknown-id.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        problem [unknown-id] a response to request 42, which the checker never sent (stdout line 2: {"jsonrpc":"2.0","id":42,"result":{}})
        note [timing] session/new took … ms
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn a_request_answered_twice_is_a_problem() {
    check_script(
        "answered-twice",
        1,
        expect![[r#"
        check-agent: sh answered-twice.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        problem [answered-twice] a second response to request 0 (initialize) (stdout line 2: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}})
        note [timing] session/new took … ms
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn a_response_with_both_result_and_error_is_a_problem() {
    check_script(
        "result-and-error",
        1,
        expect![[r#"
        check-agent: sh result-and-error.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        problem [result-and-error] a response has both "result" and "error" (JSON-RPC allows exactly one) (stdout line 2: {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"},"error":{"code":-32603,"message":"oops"}})
        note [timing] session/new took … ms
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn a_missing_required_field_is_a_problem() {
    check_script(
        "missing-field",
        1,
        expect![[r#"
        check-agent: sh missing-field.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        problem [invalid-message] session/update: missing field `content` (stdout line 3: {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","text":"Hello"}}})
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn wrong_types_are_problems() {
    check_script(
        "wrong-type",
        1,
        expect![[r#"
        check-agent: sh wrong-type.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        problem [invalid-message] session/update: invalid type: integer `42`, expected a string (stdout line 3: {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":42,"status":"completed"}}})
        problem [invalid-message] session/request_permission: invalid type: string "allow", expected a sequence (stdout line 4: {"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":"allow"}})
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        2 problems found
    "#]],
    );
}

#[test]
fn a_tool_call_never_closed_is_a_problem() {
    check_script(
        "tool-call-not-closed",
        1,
        expect![[r#"
        check-agent: sh tool-call-not-closed.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        note [timing] session/prompt took … ms
        problem [tool-call-not-closed] tool call "read-1" was still in_progress when its turn ended (expected completed or failed) (stdout line 3: {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"read-1","title":"Read README.md","kind…)
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn an_update_for_an_unknown_session_is_a_problem() {
    check_script(
        "unknown-session",
        1,
        expect![[r#"
        check-agent: sh unknown-session.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        problem [unknown-session] session/update for session "someone-else", which the agent never created (stdout line 3: {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"someone-else","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":…)
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        1 problem found
    "#]],
    );
}

#[test]
fn a_prompt_that_never_ends_is_a_problem() {
    check_script(
        "never-ends",
        1,
        expect![[r#"
        check-agent: sh never-ends.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        problem [timeout] session/prompt: no answer within 1 s
        1 problem found
    "#]],
    );
}

#[test]
fn an_agent_exiting_mid_check_is_a_problem_and_its_stderr_is_shown() {
    check_script(
        "exits",
        1,
        expect![[r#"
        check-agent: sh exits.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        problem [agent-exited] the agent exited with code 3 while the checker waited for the answer to session/prompt
        note [stderr] 2 line(s) on stderr; the last: Error: model connection reset | at Agent.prompt (agent.js:42)
        1 problem found
    "#]],
    );
}

#[test]
fn a_cancelled_prompt_that_does_not_end_cancelled_is_a_problem() {
    check_script(
        "not-cancelled",
        1,
        expect![[r#"
        check-agent: sh not-cancelled.sh
        note [timing] initialize took … ms
        note [agent-info] scripted 1.0
        note [capabilities] agentCapabilities {"loadSession":false}
        note [timing] session/new took … ms
        note [timing] session/prompt took … ms
        note [timing] session/prompt (cancelled) took … ms
        problem [not-cancelled] session/prompt ended with stopReason end_turn after session/cancel (expected cancelled) (stdout line 7: {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}})
        1 problem found
    "#]],
    );
}

/// A correct agent may end a turn before the cancel reaches it. One that answers every prompt
/// with end_turn at once (streaming nothing) is not running when the check would cancel it, so
/// no cancel is sent and the report says cancellation could not be checked.
#[test]
fn a_prompt_that_ends_at_once_is_not_accused_of_ignoring_the_cancel() {
    check_script(
        "ends-at-once",
        0,
        expect![[r#"
            check-agent: sh ends-at-once.sh
            note [timing] initialize took … ms
            note [agent-info] scripted 1.0
            note [capabilities] agentCapabilities {"loadSession":false}
            note [timing] session/new took … ms
            note [timing] session/prompt took … ms
            note [timing] session/prompt (cancelled) took … ms
            note [cancel-unchecked] the prompt to cancel ended with stopReason end_turn while it was not demonstrably running (it had streamed nothing, or its answer was already there), so session/cancel was not sent and cancellation could not be checked
            no problems found
        "#]],
    );
}

/// An answer that is the very next thing after the cancel may have crossed it on the way: no
/// accusation, a note that cancellation could not be checked.
#[test]
fn an_answer_that_may_have_crossed_the_cancel_is_not_accused() {
    check_script(
        "answer-crosses-cancel",
        0,
        expect![[r#"
            check-agent: sh answer-crosses-cancel.sh
            note [timing] initialize took … ms
            note [agent-info] scripted 1.0
            note [capabilities] agentCapabilities {"loadSession":false}
            note [timing] session/new took … ms
            note [timing] session/prompt took … ms
            note [timing] session/prompt (cancelled) took … ms
            note [cancel-unchecked] the prompt to cancel ended with stopReason end_turn right after session/cancel was sent, with nothing in between: the answer may have crossed the cancel, so cancellation could not be checked
            no problems found
        "#]],
    );
}

#[test]
fn an_agent_that_needs_a_login_is_an_info_not_a_problem() {
    check_script(
        "needs-auth",
        0,
        expect![[r#"
        check-agent: sh needs-auth.sh
        note [timing] initialize took … ms
        note [agent-info] no agentInfo in the initialize answer
        note [capabilities] agentCapabilities {}
        note [capabilities] authMethods api-key, login
        note [timing] session/new took … ms
        info [needs-authentication] session/new: needs authentication (methods: api-key, login); the check stops here
        no problems found
    "#]],
    );
}

#[test]
fn json_output_is_one_object_with_the_problem_count_and_the_findings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/misbehaving_agents");
    let (report, exit) = check_agent(&dir, &["--json", "--", "sh", "non-json.sh"]);
    assert_eq!(exit, 1);
    assert_eq!(report.lines().count(), 1, "one line: {report}");
    let report: Value = serde_json::from_str(&report).expect("the report is JSON");
    assert_eq!(report["command"], serde_json::json!(["sh", "non-json.sh"]));
    assert_eq!(report["problems"], 1);
    let problems: Vec<&Value> =
        report["findings"].as_array().expect("findings").iter().filter(|f| f["severity"] == "problem").collect();
    assert_eq!(
        problems,
        [&serde_json::json!({
            "severity": "problem",
            "kind": "non-json",
            "message": "not JSON: expected value at line 1 column 1",
            "line": 4,
            "excerpt": "Loading model weights... done",
        })]
    );
}

#[test]
fn nothing_the_agent_started_is_left_running() {
    // The agent leaves a child behind in its process group, as agents that run helpers do.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pid_file = dir.path().join("helper.pid");
    let script = format!(
        ". {}/tests/misbehaving_agents/common.sh; sleep 600 & echo $! > {}; initialize; new_session; good_prompt; cancelled_prompt; wait",
        env!("CARGO_MANIFEST_DIR"),
        pid_file.display()
    );
    let (_, exit) = check_agent(dir.path(), &["--", "sh", "-c", &script]);
    assert_eq!(exit, 0);
    let helper: i32 = std::fs::read_to_string(&pid_file).expect("the helper's pid").trim().parse().expect("a pid");
    let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(helper), None).is_ok()
        && !std::fs::read_to_string(format!("/proc/{helper}/stat")).is_ok_and(|stat| stat.contains(") Z "));
    assert!(!alive, "the agent's helper {helper} is still running");
}

/// The stand-in CLI `claude-cli-no-session.sh` of tests/misbehaving_agents, checked with
/// `--claude-cli`: what it prints that is not stream-json, and its session never named.
#[test]
fn a_claude_cli_that_prints_other_things_and_names_no_session_is_reported() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/misbehaving_agents");
    let script = dir.join("claude-cli-no-session.sh");
    let (report, exit) =
        check_agent(&dir, &["--claude-cli", "--timeout-seconds", "5", "--", "sh", script.to_str().unwrap()]);
    let report = report.replace(script.to_str().unwrap(), "claude-cli-no-session.sh");
    expect![[r#"
        check-agent: sh claude-cli-no-session.sh
        note [timing] initialize took … ms
        note [agent-info] claude 0.0.0-fake: 0 commands, 0 models
        problem [non-json] not JSON: expected value at line 1 column 1 (stdout line 2: Loading the model...)
        problem [not-stream-json] a JSON line without a string "type" (stdout line 3: {"progress":50})
        note [timing] first prompt took … ms
        problem [invalid-message] no system/init line named the CLI's session
        3 problems found
    "#]]
    .assert_eq(&report);
    assert_eq!(exit, 1, "the exit code, for the report:\n{report}");
}

/// The real `claude` CLI from npm (`cargo xtask setup` puts it in the tools cache), against the
/// test's own mock of the Messages API: Tether's way of driving it holds, so nothing is found.
#[test]
fn the_real_claude_cli_against_a_mock_api_passes_the_check() {
    let tools = std::env::var_os("TETHER_TOOLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/tether-dev"));
    let claude = tools.join("agents/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    assert!(claude.exists(), "{} is missing: run `cargo xtask setup`", claude.display());
    let workspace = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut mock = Command::new("node")
        .arg(repo_root().join("tests/e2e/anthropic-mock.mjs"))
        .arg(workspace.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs the mock");
    let mut url = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(mock.stdout.take().unwrap()), &mut url).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tetherd"))
        .args(["check-agent", "--claude-cli", "--json", "--"])
        .arg(&claude)
        .env("ANTHROPIC_BASE_URL", url.trim())
        .env("ANTHROPIC_API_KEY", "sk-tether-test-not-a-key")
        .env("CLAUDE_CONFIG_DIR", home.path())
        // The CLI refuses to run as root when IS_SANDBOX is set, as it is on some machines.
        .env_remove("IS_SANDBOX")
        .output()
        .expect("tetherd runs");
    let _stopped = mock.kill();
    let _reaped = mock.wait();
    let report: Value = serde_json::from_slice(&output.stdout).expect("the report is JSON");
    let findings = report["findings"].as_array().unwrap();
    let problems: Vec<&Value> = findings.iter().filter(|finding| finding["severity"] != "note").collect();
    assert!(problems.is_empty(), "{report:#}");
    let said =
        |text: &str| findings.iter().any(|finding| finding["message"].as_str().unwrap_or_default().contains(text));
    assert!(said("--resume went on with the same session"), "{report:#}");
    assert!(said("with its input closed, the CLI exited with code 0"), "{report:#}");
    assert_eq!(output.status.code(), Some(0));
}
