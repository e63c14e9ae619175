//! The hello handshake and the handling of bad input on an authenticated connection, against the
//! real tetherd binary over its real socket.

#![cfg(unix)]

mod support;

use expect_test::expect;
use serde_json::json;
use support::{Tetherd, hello_params, sh};

#[test]
fn a_connection_without_a_valid_hello_gets_an_error_and_is_closed() {
    let tetherd = Tetherd::start(&[]);
    let first_lines: [&[u8]; 6] = [
        b"this is not json",
        br#"{"jsonrpc":"2.0","method":"hello","params":{"token":"test-token-0123456789","protocolVersion":1,"client":"x"}}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":"agent/spawn","params":{"name":"x","command":"true","cwd":"."}}"#,
        br#"{"jsonrpc":"2.0","id":2,"method":"hello","params":{"token":"wrong","protocolVersion":1,"client":"x"}}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"hello","params":{"token":"test-token-0123456789","protocolVersion":99,"client":"x"}}"#,
        br#"{"jsonrpc":"2.0","id":"four","method":"hello","params":{"protocolVersion":1}}"#,
    ];
    let mut answers = Vec::new();
    for first_line in first_lines {
        let mut client = tetherd.connect();
        // The line and its newline in one write: tetherd closes the connection as soon as it has
        // answered, and a second write could find it closed (EPIPE; seen once in CI).
        client.send_raw(&[first_line, b"\n"].concat());
        let answer = client.next_line().expect("an error answers a bad hello");
        answers.push(answer.raw);
        assert!(client.next_line().is_none(), "the connection is closed after the error");
    }
    expect![[r#"
        {"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unauthorized: expected hello: not JSON: expected ident at line 1 column 2"}}
        {"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unauthorized: expected a hello request"}}
        {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"unauthorized: expected hello, got agent/spawn"}}
        {"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"unauthorized: wrong token"}}
        {"jsonrpc":"2.0","id":3,"error":{"code":-32003,"message":"this tetherd speaks sidecar protocol 1, the host speaks 99"}}
        {"jsonrpc":"2.0","id":"four","error":{"code":-32001,"message":"unauthorized: expected hello: Invalid params: missing field `token` at line 1 column 21"}}"#]]
    .assert_eq(&answers.join("\n"));
}

#[test]
fn a_wrong_token_cannot_spawn_an_agent_even_when_the_spawn_is_already_sent() {
    let tetherd = Tetherd::start(&[]);
    let marker = tetherd.dir.path().join("spawned");
    let spawn = json!({
        "jsonrpc": "2.0", "id": 2, "method": "agent/spawn",
        "params": sh(&format!("touch '{}'", marker.display())),
    });
    let hello = json!({ "jsonrpc": "2.0", "id": 1, "method": "hello", "params": hello_params("guess") });

    let mut intruder = tetherd.connect();
    // Both lines in one write, so tetherd has the spawn in hand when it refuses the hello.
    intruder.send_raw(format!("{hello}\n{spawn}\n").as_bytes());
    let refusal = intruder.next_line().expect("the hello is answered");
    assert_eq!(refusal.value["id"], json!(1));
    assert_eq!(refusal.value["error"]["code"], json!(-32001));
    assert!(intruder.next_line().is_none(), "no answer to the spawn: the connection is closed");

    // A real host's agent runs to completion: had the intruder's spawn been run, its agent would
    // have touched the marker by now.
    let mut host = tetherd.host();
    let (agent_id, _) = host.spawn(sh("exit 0"));
    host.agent_event("agent/exited", agent_id);
    assert!(!marker.exists(), "the refused connection's spawn must not run");
}

#[test]
fn hello_answers_with_tetherd_version_and_pid() {
    let tetherd = Tetherd::start(&[]);
    let mut client = tetherd.connect();
    let result = client.call("hello", hello_params(support::TOKEN)).expect("hello is accepted");
    assert_eq!(result, json!({ "tetherdVersion": env!("CARGO_PKG_VERSION"), "pid": tetherd.pid }));
}

#[test]
fn bad_input_after_hello_gets_json_rpc_errors_and_the_connection_stays_up() {
    let tetherd = Tetherd::start(&[]);
    let mut client = tetherd.host();
    client.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\n");
    let not_json = client.next_line().expect("an answer to malformed JSON");
    client.send_raw(b"[1,2]\n");
    let batch = client.next_line().expect("an answer to a batch");
    let unknown = client.call("agent/teleport", json!({})).expect_err("unknown method");
    let bad_params = client.call("agent/spawn", json!({ "command": 42 })).expect_err("bad params");
    let again = client.call("hello", hello_params(support::TOKEN)).expect_err("a second hello");
    let unknown_agent = client.call("agent/kill", json!({ "agentId": 999 })).expect_err("unknown agent");
    // Notifications cannot be answered; they must not break anything either.
    client.notify("agent/send", json!({ "agentId": 999, "message": {} }));
    client.notify("agent/whatever", json!({}));

    let answers = [not_json.value, batch.value, unknown, bad_params, again, unknown_agent]
        .map(|answer| answer.to_string())
        .join("\n");
    expect![[r#"
        {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 22"}}
        {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: batches are not supported"}}
        {"code":-32601,"message":"Method not found: agent/teleport"}
        {"code":-32602,"message":"Invalid params: invalid type: integer `42`, expected a string at line 1 column 13"}
        {"code":-32600,"message":"Invalid request: hello was already said"}
        {"code":-32011,"message":"no agent with id 999 (never spawned, or already exited)"}"#]]
    .assert_eq(&answers);

    // Still serving.
    let (agent_id, _) = client.spawn(sh("exit 0"));
    client.agent_event("agent/exited", agent_id);
}

#[test]
fn a_line_over_the_host_maximum_is_an_error_for_that_line_only() {
    // The host maximum is the agent maximum plus 1 MiB of envelope.
    let tetherd = Tetherd::start(&["--max-line-bytes", "16"]);
    let mut client = tetherd.host();
    let huge = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(1024 * 1024 + 100));
    client.send_raw(huge.as_bytes());
    let error = client.next_line().expect("an answer to the over-long line");
    assert_eq!(error.value["error"]["code"], json!(-32700));
    assert_eq!(error.value["id"], json!(null));
    let (agent_id, _) = client.spawn(sh("exit 0"));
    client.agent_event("agent/exited", agent_id);
}
