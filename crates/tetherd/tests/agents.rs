//! Agent processes through the real tetherd: spawning, stdin and stdout, bad lines, stderr, exit
//! codes and kills. The agents are real processes (`cat`, `sh`, `sleep`).

#![cfg(unix)]

mod support;

use expect_test::expect;
use serde_json::{Value, json};
use support::{Line, Tetherd, eventually, live_group_members, sh, zombie_children};

/// An agent's notifications as `method params` lines, without the agent id, for comparison.
fn summary(events: &[Line]) -> String {
    events
        .iter()
        .map(|line| {
            let mut params = line.params().clone();
            if let Some(params) = params.as_object_mut() {
                params.remove("agentId");
            }
            format!("{} {params}", line.method().unwrap_or("(response)"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn messages_sent_to_cat_come_back_byte_for_byte() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _) = host.spawn(json!({ "name": "cat", "command": "cat", "cwd": "." }));
    // Odd spacing, escapes and non-ASCII: the raw JSON must travel untouched both ways.
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        r#"{ "jsonrpc" : "2.0", "method":"session/update", "params":{"text":"caf\u00e9 é \"quoted\" \\ \n"} }"#,
        r#"[1, 2.50, -0e3, null, true, {"nested":{"deep":[]}}]"#,
    ];
    for message in messages {
        // Built by hand, not with `json!`, which would re-serialize the message.
        host.send_raw(
            format!(
                r#"{{"jsonrpc":"2.0","method":"agent/send","params":{{"agentId":{agent_id},"message":{message}}}}}"#
            )
            .as_bytes(),
        );
        host.send_raw(b"\n");
    }
    for message in messages {
        let echoed = host.agent_event("agent/message", agent_id);
        assert_eq!(echoed.raw_agent_message(), message);
    }
    host.call("agent/kill", json!({ "agentId": agent_id })).expect("cat can be killed");
}

#[test]
fn closing_an_agents_input_after_its_messages_lets_it_finish_and_exit() {
    // The Claude CLI reads its input to the end, finishes and exits: closing the input is how
    // a oneshot turn ends. The close waits for the messages sent before it.
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _) =
        host.spawn(sh(r#"while read -r line; do printf '%s\n' "$line"; done; printf '{"eof":true}\n'"#));
    host.send_to_agent(agent_id, r#"{"first":1}"#);
    host.send_to_agent(agent_id, r#"{"second":2}"#);
    host.notify("agent/closeInput", json!({ "agentId": agent_id }));
    // Sent after the close: dropped, never written.
    host.send_to_agent(agent_id, r#"{"too":"late"}"#);
    let events = host.agent_events_until_exit(agent_id);
    expect![[r#"
        agent/message {"message":{"first":1}}
        agent/message {"message":{"second":2}}
        agent/message {"message":{"eof":true}}
        agent/exited {"killed":false,"code":0,"signal":null}"#]]
    .assert_eq(&summary(&events));
}

#[test]
fn lines_that_are_not_messages_are_reported_and_the_next_good_line_still_arrives() {
    let tetherd = Tetherd::start(&["--max-line-bytes", "64"]);
    let mut host = tetherd.host();
    let script = r#"
        printf 'Debugger listening on ws://127.0.0.1:9229\n'
        printf '{"long":"%0100d"}\n' 0
        printf '\377\376 not UTF-8\n'
        printf '{"after":"the bad lines"}\n'
        printf '{"unterminated":true}'
    "#;
    let (agent_id, _) = host.spawn(sh(script));
    let events = host.agent_events_until_exit(agent_id);
    expect![[r#"
        agent/badLine {"error":"not JSON: expected value at line 1 column 1","kind":"invalidJson","len":41,"preview":"Debugger listening on ws://127.0.0.1:9229"}
        agent/badLine {"error":"a line of 111 bytes is longer than the maximum of 64 bytes and was dropped","kind":"tooLong","len":111,"preview":""}
        agent/badLine {"error":"not UTF-8 (the first 0 bytes are)","kind":"invalidUtf8","len":12,"preview":"�� not UTF-8"}
        agent/message {"message":{"after":"the bad lines"}}
        agent/message {"message":{"unterminated":true}}
        agent/exited {"killed":false,"code":0,"signal":null}"#]]
    .assert_eq(&summary(&events));
}

#[test]
fn stderr_lines_are_reported() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _) = host.spawn(sh("echo 'warning: no API key' >&2; printf 'half a line' >&2"));
    let events = host.agent_events_until_exit(agent_id);
    expect![[r#"
        agent/stderr {"line":"warning: no API key"}
        agent/stderr {"line":"half a line"}
        agent/exited {"killed":false,"code":0,"signal":null}"#]]
    .assert_eq(&summary(&events));
    // The host may get the event before tetherd's own log of it reaches its stderr: wait for it.
    eventually("stderr is logged too", || tetherd.stderr().contains("warning: no API key"));
}

#[test]
fn every_stdout_line_is_forwarded_before_the_exit_code() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let script = r#"i=0; while [ $i -lt 3000 ]; do echo "{\"n\":$i}"; i=$((i+1)); done; exit 3"#;
    let (agent_id, _) = host.spawn(sh(script));
    let events = host.agent_events_until_exit(agent_id);
    let (exited, messages) = events.split_last().expect("at least the exit");
    assert_eq!(exited.params(), &json!({ "agentId": agent_id, "code": 3, "signal": null, "killed": false }));
    let numbers: Vec<Value> = messages.iter().map(|line| line.params()["message"]["n"].clone()).collect();
    let expected: Vec<Value> = (0..3000).map(|n| json!(n)).collect();
    assert_eq!(numbers, expected, "all 3000 lines, in order, before agent/exited");
}

#[test]
fn kill_ends_the_whole_process_group_and_leaves_no_zombie() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, pid) = host.spawn(sh("sleep 1000 & sleep 1000; wait"));
    eventually("the agent's two sleeps to start", || live_group_members(pid).len() == 3);

    let kill = host.request("agent/kill", json!({ "agentId": agent_id }));
    let exited = host.agent_event("agent/exited", agent_id);
    assert_eq!(exited.params()["killed"], json!(true));
    assert_eq!(exited.params()["signal"], json!(15), "SIGTERM was enough");
    assert_eq!(host.response(kill), Ok(json!({})));

    assert_eq!(live_group_members(pid), Vec::<u32>::new(), "no process of the agent's group is alive");
    assert_eq!(zombie_children(tetherd.pid), Vec::<u32>::new(), "tetherd reaped its child");
    let again = host.call("agent/kill", json!({ "agentId": agent_id })).expect_err("a reaped agent");
    assert_eq!(again["code"], json!(-32011));
}

#[test]
fn an_agent_ignoring_sigterm_is_sigkilled_after_the_grace() {
    let tetherd = Tetherd::start(&["--kill-grace-ms", "300"]);
    let mut host = tetherd.host();
    let (agent_id, pid) = host.spawn(sh(r#"trap "" TERM; sleep 1000; echo survived"#));
    // The sleep only starts once the trap is set, so from here on SIGTERM is ignored.
    eventually("the agent's sleep to start", || live_group_members(pid).len() == 2);

    let kill = host.request("agent/kill", json!({ "agentId": agent_id }));
    let exited = host.agent_event("agent/exited", agent_id);
    assert_eq!(exited.params()["killed"], json!(true));
    assert_eq!(exited.params()["signal"], json!(9));
    assert_eq!(host.response(kill), Ok(json!({})));
    assert_eq!(live_group_members(pid), Vec::<u32>::new());
    assert_eq!(zombie_children(tetherd.pid), Vec::<u32>::new());
}

#[test]
fn a_command_that_does_not_exist_fails_to_spawn_saying_which_is_missing() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let error = host
        .call("agent/spawn", json!({ "name": "ghost", "command": "/nonexistent/agent", "cwd": "." }))
        .expect_err("spawn fails");
    assert_eq!(error["code"], json!(-32010));
    // Before, the OS's words: "No such file or directory (os error 2)".
    assert_eq!(error["message"], json!("cannot start \"/nonexistent/agent\": there is no such file"));
    let error = host
        .call("agent/spawn", json!({ "name": "ghost", "command": "no-such-agent-tether", "cwd": "." }))
        .expect_err("spawn fails");
    assert_eq!(error["message"], json!("cannot start \"no-such-agent-tether\": no program of that name is on PATH"));
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("agent.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let error =
        host.call("agent/spawn", json!({ "name": "plain", "command": script, "cwd": "." })).expect_err("spawn fails");
    assert_eq!(
        error["message"],
        json!(format!("cannot start {:?}: it is not executable (permission denied)", script.display().to_string()))
    );

    let error = host
        .call("agent/spawn", json!({ "name": "lost", "command": "cat", "cwd": "/nonexistent/dir" }))
        .expect_err("spawn fails");
    assert_eq!(error["code"], json!(-32010));
    assert!(error["message"].as_str().is_some_and(|message| message.contains("/nonexistent/dir")), "{error}");
}

#[test]
fn the_agent_gets_the_requested_environment_but_never_the_token() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let mut params =
        sh(r#"printf '{"token":"%s","added":"%s","home":"%s"}\n' "${TETHER_TOKEN-unset}" "$ADDED" "${HOME-unset}""#);
    params["env"] = json!({ "ADDED": "yes", "HOME": "" });
    let (agent_id, _) = host.spawn(params);
    let message = host.agent_event("agent/message", agent_id);
    assert_eq!(message.params()["message"], json!({ "token": "unset", "added": "yes", "home": "unset" }));
}

#[test]
fn events_go_to_every_connected_host() {
    let tetherd = Tetherd::start(&[]);
    let mut first = tetherd.host();
    let mut second = tetherd.host();
    let (agent_id, _) = first.spawn(sh(r#"echo '{"to":"everyone"}'"#));
    for host in [&mut first, &mut second] {
        let message = host.agent_event("agent/message", agent_id);
        assert_eq!(message.raw_agent_message(), r#"{"to":"everyone"}"#);
        host.agent_event("agent/exited", agent_id);
    }
}
