#![allow(clippy::unwrap_used, clippy::print_stderr)]
use std::time::Instant;
use tether_core::acp::{AcpClient, ClientInfo};
use tether_core::permissions::{Mode, PermissionPolicy};
use tether_core::session_log::read_log;

fn main() {
    let mut log = String::new();
    let mut seq = 0;
    let mut push = |log: &mut String, event: &str, msg: String| {
        seq += 1;
        log.push_str(&format!(
            "{{\"seq\":{seq},\"time\":\"2026-11-23T10:00:00.120Z\",\"event\":\"{event}\",\"message\":{msg}}}\n"
        ));
    };
    push(
        &mut log,
        "toAgent",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#
            .into(),
    );
    push(&mut log, "fromAgent", r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#.into());
    push(
        &mut log,
        "toAgent",
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/workspace","mcpServers":[]}}"#.into(),
    );
    push(&mut log, "fromAgent", r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#.into());
    push(&mut log, "toAgent", r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"burst"}]}}"#.into());
    for n in 1..=10000u32 {
        let update = if n % 2 == 1 {
            let text = format!(
                "Entry {n:05} of 10000: this paragraph stands for an agent's explanation. It is long enough to wrap over a few lines in a narrow sidebar, and a code block of ten lines follows it, as in many replies.\n\n```rust\nfn entry_{n}() -> u64 {{\n    // A loop and a print, in ten lines.\n    let mut total = 0;\n    for step in 0..10 {{\n        total += step * {n};\n    }}\n    total %= 100;\n    println!(\"{{total}}\");\n    total\n}}\n```\n\n"
            );
            serde_json::json!({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":text}})
        } else {
            match (n / 2) % 3 {
                1 => {
                    serde_json::json!({"sessionUpdate":"tool_call","toolCallId":format!("b-{n}"),"title":format!("Read src/module_{n}.rs"),"kind":"read","status":"completed","locations":[{"path":format!("/workspace/src/module_{n}.rs")}],"content":[{"type":"content","content":{"type":"text","text":format!("```rust\n// module {n}\npub fn value() -> u64 {{\n    {n}\n}}\n```")}}]})
                }
                2 => {
                    serde_json::json!({"sessionUpdate":"tool_call","toolCallId":format!("b-{n}"),"title":format!("Run `cargo test --lib module_{n}`"),"kind":"execute","status":"completed","rawInput":{"command":format!("cargo test --lib module_{n}")},"content":[{"type":"content","content":{"type":"text","text":format!("running 3 tests\ntest module_{n}::adds ... ok\ntest module_{n}::reads ... ok\ntest module_{n}::writes ... ok\n\ntest result: ok. 3 passed; 0 failed")}}]})
                }
                _ => {
                    serde_json::json!({"sessionUpdate":"tool_call","toolCallId":format!("b-{n}"),"title":format!("Edit src/module_{n}.rs"),"kind":"edit","status":"completed","locations":[{"path":format!("/workspace/src/module_{n}.rs")}],"content":[{"type":"diff","path":format!("/workspace/src/module_{n}.rs"),"oldText":format!("pub fn value() -> u64 {{\n    {n}\n}}\n"),"newText":format!("pub fn value() -> u64 {{\n    {n} + 1\n}}\n\npub fn name() -> &'static str {{\n    \"module {n}\"\n}}\n")}]})
                }
            }
        };
        let line =
            serde_json::json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":update}});
        push(&mut log, "fromAgent", line.to_string());
    }
    push(&mut log, "fromAgent", r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#.into());
    eprintln!("log {} bytes", log.len());
    let t = Instant::now();
    let read = read_log(&log);
    eprintln!("read_log {:?}", t.elapsed());
    let info = ClientInfo { name: "t".to_owned(), version: "0".to_owned() };
    let t = Instant::now();
    let (client, problems) = AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read);
    eprintln!("replay {:?} entries {} problems {:?}", t.elapsed(), client.thread().entries().len(), problems.len());
    let t = Instant::now();
    let mut n = 0;
    for e in client.thread().entries() {
        n += serde_json::to_string(e).unwrap().len();
    }
    eprintln!("serialize entries {:?} {} bytes", t.elapsed(), n);
}
