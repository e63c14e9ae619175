//! Data-driven tests of every stable `session/update` kind of ACP v1, as the person sees it.
//!
//! Each `test_data/updates/<kind>.json` is a JSON array of steps, run through an [`AcpClient`]
//! whose session `s1` was created by a plain handshake:
//! - `{"sessionUpdate": ...}`: the agent sends this update for `s1`;
//! - `{"sessionNew": {...}}` (first step only): the agent's answer to `session/new`;
//! - `{"setConfigOption": {"configId": ..., "value": ...}}`: the person picks a config value;
//! - `{"mode": "plan"}`: the person picks Tether's mode in the header;
//! - `{"answer": {...}}` / `{"answerError": {"code": ..., "message": ...}}`: the agent answers the
//!   last request the client sent.
//!
//! `<kind>.out` holds, after each step, what the client sent, the events it raised and the thread
//! patches, then the whole thread and the session controls the header shows. Run with
//! `UPDATE_EXPECT=1` to accept a change. A further test lists the kinds of the schema's
//! `SessionUpdate` enum and fails when one has no data file.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::fmt::Write;
use std::path::Path;

use agent_client_protocol_schema::v1 as acp;
use tether_core::acp::{AcpClient, AcpEvent, ClientInfo};
use tether_core::permissions::{Mode, PermissionPolicy};

fn data_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/updates")
}

/// Sends a line from the agent and writes what came of it.
fn agent_says(client: &mut AcpClient, line: &str, out: &mut String, last_request: &mut Option<serde_json::Value>) {
    client.handle_message(line, 0);
    drain(client, out, last_request);
}

fn drain(client: &mut AcpClient, out: &mut String, last_request: &mut Option<serde_json::Value>) {
    while let Some(line) = client.poll_outgoing() {
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message.get("method").is_some() && message.get("id").is_some() {
            *last_request = Some(message["id"].clone());
        }
        writeln!(out, "  sent {line}").unwrap();
    }
    while let Some(event) = client.poll_event() {
        match event {
            AcpEvent::Audit(_) => {}
            AcpEvent::PolicyChanged => {
                let mode = client.policy().mode();
                writeln!(out, "  policy mode={mode} agent={:?}", client.agent_mode()).unwrap();
            }
            event => writeln!(out, "  event {event:?}").unwrap(),
        }
    }
    for patch in client.thread_mut().take_patches() {
        writeln!(out, "  patch {}", serde_json::to_string(&patch).unwrap()).unwrap();
    }
}

fn run(steps: &[serde_json::Value]) -> String {
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let mut client = AcpClient::new(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1));
    let mut out = String::new();
    let mut last_request = None;
    client.start(0);
    drain(&mut client, &mut String::new(), &mut last_request);
    client.handle_message(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#, 0);
    let (new_session, steps) = match steps.first().and_then(|step| step.get("sessionNew")) {
        Some(answer) => (answer.clone(), &steps[1..]),
        None => (serde_json::json!({ "sessionId": "s1" }), steps),
    };
    if new_session != serde_json::json!({ "sessionId": "s1" }) {
        writeln!(out, "> sessionNew {new_session}").unwrap();
    }
    let answer = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "result": new_session });
    agent_says(&mut client, &answer.to_string(), &mut out, &mut last_request);
    if new_session == serde_json::json!({ "sessionId": "s1" }) {
        // A plain handshake says nothing worth reading.
        out.clear();
    }
    for step in steps {
        writeln!(out, "> {step}").unwrap();
        if step.get("sessionUpdate").is_some() {
            let params = serde_json::json!({ "sessionId": "s1", "update": step });
            let line = serde_json::json!({ "jsonrpc": "2.0", "method": "session/update", "params": params });
            agent_says(&mut client, &line.to_string(), &mut out, &mut last_request);
        } else if let Some(set) = step.get("setConfigOption") {
            let value = serde_json::from_value(set["value"].clone()).unwrap();
            if let Err(error) = client.set_config_option(set["configId"].as_str().unwrap(), value, 0) {
                writeln!(out, "  refused: {error}").unwrap();
            }
            drain(&mut client, &mut out, &mut last_request);
        } else if let Some(mode) = step.get("mode") {
            client.set_mode(serde_json::from_value(mode.clone()).unwrap(), 0);
            drain(&mut client, &mut out, &mut last_request);
        } else if let Some(result) = step.get("answer") {
            let id = last_request.clone().expect("an answer to a request never sent");
            let line = serde_json::json!({ "jsonrpc": "2.0", "id": id, "result": result });
            agent_says(&mut client, &line.to_string(), &mut out, &mut last_request);
        } else if let Some(error) = step.get("answerError") {
            let id = last_request.clone().expect("an answer to a request never sent");
            let line = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error });
            agent_says(&mut client, &line.to_string(), &mut out, &mut last_request);
        } else {
            panic!("unknown step {step}");
        }
    }
    writeln!(out, "\nthread:").unwrap();
    for (index, entry) in client.thread().entries().iter().enumerate() {
        writeln!(out, "  {index} {}", serde_json::to_string(entry).unwrap()).unwrap();
    }
    writeln!(out, "controls:\n{}", serde_json::to_string_pretty(client.controls()).unwrap()).unwrap();
    out
}

/// The `sessionUpdate` names of the schema's `SessionUpdate` enum, as serde lists them when it
/// meets a name it does not know: the crate's own list, so a kind added by an upgrade shows up.
fn stable_kinds() -> Vec<String> {
    let error = serde_json::from_value::<acp::SessionUpdate>(serde_json::json!({ "sessionUpdate": "no_such_kind" }))
        .unwrap_err()
        .to_string();
    let expected = error.split_once("expected one of").expect("serde lists the variants").1;
    expected.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

#[test]
fn every_stable_update_kind_has_a_data_file() {
    let kinds = stable_kinds();
    // The fourteen stable kinds of ACP v1 in agent-client-protocol-schema 1.15.
    assert!(kinds.len() >= 14, "{kinds:?}");
    let missing: Vec<&String> = kinds.iter().filter(|kind| !data_dir().join(format!("{kind}.json")).exists()).collect();
    assert!(missing.is_empty(), "no test_data/updates file for {missing:?}");
    for file in std::fs::read_dir(data_dir()).unwrap() {
        let name = file.unwrap().file_name().into_string().unwrap();
        if let Some(kind) = name.strip_suffix(".json") {
            assert!(kinds.iter().any(|known| known == kind), "{name} names no stable kind");
        }
    }
}

#[test]
fn every_stable_update_kind_is_rendered() {
    for kind in stable_kinds() {
        let path = data_dir().join(format!("{kind}.json"));
        let steps: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert!(steps.iter().any(|step| step["sessionUpdate"] == kind.as_str()), "{kind}.json sends no {kind} update");
        expect_test::expect_file![data_dir().join(format!("{kind}.out"))].assert_eq(&run(&steps));
    }
}
