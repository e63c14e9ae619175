//! How long the agent thought: a thought is timed from its first chunk to whatever the agent does
//! next, with the time the host gives each input (live) or the time the log wrote down
//! (replayed), and the webview learns it through a `thoughtEnded` patch.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use tether_core::acp::{AcpClient, ClientInfo};
use tether_core::permissions::{Mode, PermissionPolicy};
use tether_core::session_log::read_log;
use tether_core::thread::{Entry, Thread, ThreadPatch};

fn info() -> ClientInfo {
    ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() }
}

fn update(update: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{update}}}}}"#)
}

fn thought(text: &str) -> String {
    update(&format!(r#"{{"sessionUpdate":"agent_thought_chunk","content":{{"type":"text","text":"{text}"}}}}"#))
}

fn text(text: &str) -> String {
    update(&format!(r#"{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}"#))
}

/// A client whose session `s1` is ready.
fn ready_client() -> AcpClient {
    let mut client = AcpClient::new(info(), "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1));
    client.start(0);
    client.handle_message(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#, 0);
    client.handle_message(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#, 0);
    client.thread_mut().take_patches();
    client
}

/// The durations of the thoughts of every agent message, in order.
fn durations(thread: &Thread) -> Vec<Option<u64>> {
    thread
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Agent(message) => {
                Some(message.chunks.iter().filter(|chunk| chunk.kind == tether_core::thread::ChunkKind::Thought))
            }
            _ => None,
        })
        .flatten()
        .map(|chunk| chunk.duration_ms)
        .collect()
}

#[test]
fn a_thought_lasts_from_its_first_chunk_until_the_agent_writes_text() {
    let mut client = ready_client();
    client.handle_message(&thought("Let me look"), 1_000);
    client.handle_message(&thought(" at the tests."), 7_000);
    assert_eq!(durations(client.thread()), vec![None], "a thought still streaming has no duration");
    client.handle_message(&text("The test fails because"), 13_500);
    assert_eq!(durations(client.thread()), vec![Some(12_500)]);

    // The webview folds the same patches into the same thread.
    let patches = client.thread_mut().take_patches();
    assert!(patches.contains(&ThreadPatch::ThoughtEnded { index: 0, chunk: 0, duration_ms: 12_500 }), "{patches:?}");
    let mut folded = Thread::default();
    patches.iter().for_each(|patch| folded.apply(patch));
    assert_eq!(folded.entries(), client.thread().entries());
    let json = serde_json::to_string(&folded.entries()[0]).unwrap();
    assert!(json.contains(r#""kind":"thought","text":"Let me look at the tests.","durationMs":12500"#), "{json}");
    assert!(json.contains(r#"{"kind":"text","text":"The test fails because"}"#), "text carries no duration: {json}");
}

#[test]
fn a_tool_call_or_the_end_of_the_turn_ends_a_thought_too() {
    let mut client = ready_client();
    client.handle_message(&thought("Which file?"), 2_000);
    client.handle_message(
        &update(r#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"pending"}"#),
        5_000,
    );
    assert_eq!(durations(client.thread()), vec![Some(3_000)]);

    client.prompt("Go on", &[], 6_000).unwrap();
    client.handle_message(&thought("Done?"), 8_000);
    // The agent answers the prompt (its id is 2: initialize 0, session/new 1): the turn ends.
    client.handle_message(r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#, 9_000);
    assert_eq!(durations(client.thread()), vec![Some(3_000), Some(1_000)]);
}

#[test]
fn a_replayed_thought_is_timed_by_the_log() {
    let lines = [
        (1, "2026-11-23T10:00:01.000Z", r#""event":"toAgent","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#.to_owned()),
        (2, "2026-11-23T10:00:01.500Z", r#""event":"fromAgent","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#.to_owned()),
        (3, "2026-11-23T10:00:02.000Z", r#""event":"toAgent","message":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/workspace","mcpServers":[]}}"#.to_owned()),
        (4, "2026-11-23T10:00:02.000Z", r#""event":"fromAgent","message":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#.to_owned()),
        (5, "2026-11-23T10:00:03.000Z", format!(r#""event":"fromAgent","message":{}"#, thought("Hmm"))),
        (6, "2026-11-23T10:00:44.250Z", format!(r#""event":"fromAgent","message":{}"#, text("Found it."))),
        // Across midnight and a month's end, the clock still counts on.
        (7, "2026-11-30T23:59:59.900Z", format!(r#""event":"fromAgent","message":{}"#, thought("Again"))),
        (8, "2026-12-01T00:00:01.000Z", format!(r#""event":"fromAgent","message":{}"#, text("Yes."))),
        // Still thinking when the log ends: the live engine's clock is another one.
        (9, "2026-12-01T00:00:02.000Z", format!(r#""event":"fromAgent","message":{}"#, thought("And"))),
    ];
    let log: String =
        lines.iter().map(|(seq, time, rest)| format!("{{\"seq\":{seq},\"time\":\"{time}\",{rest}}}\n")).collect();
    let (mut client, problems) =
        AcpClient::replay(info(), "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(durations(client.thread()), vec![Some(41_250), Some(1_100), None]);

    // The live agent goes on; the last thought's start is not known on this clock.
    client.continue_live(50);
    client.handle_message(&text("Done."), 60);
    assert_eq!(durations(client.thread()), vec![Some(41_250), Some(1_100), None]);
}

#[test]
fn a_log_with_times_tetherd_never_writes_still_replays() {
    // A hand-edited or corrupted log: a year far past any clock's, a thirteenth month. The fuzzer
    // found the first one overflowing the day count; such times now read as unknown.
    let lines = [
        (1, "2026-11-23T10:00:01.000Z", r#""event":"toAgent","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#.to_owned()),
        (2, "2026-11-23T10:00:01.500Z", r#""event":"fromAgent","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#.to_owned()),
        (3, "2026-11-23T10:00:02.000Z", r#""event":"toAgent","message":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/workspace","mcpServers":[]}}"#.to_owned()),
        (4, "2026-11-23T10:00:02.000Z", r#""event":"fromAgent","message":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#.to_owned()),
        (5, "99999999999999999-11-23T10:00:03.000Z", format!(r#""event":"fromAgent","message":{}"#, thought("Hmm"))),
        (6, "2026-13-23T10:00:44.250Z", format!(r#""event":"fromAgent","message":{}"#, text("Found it."))),
    ];
    let log: String =
        lines.iter().map(|(seq, time, rest)| format!("{{\"seq\":{seq},\"time\":\"{time}\",{rest}}}\n")).collect();
    let (client, problems) =
        AcpClient::replay(info(), "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read_log(&log));
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(durations(client.thread()).len(), 1, "the thought is still in the thread");
    let said: Vec<&str> = client
        .thread()
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Agent(message) => Some(message.chunks.iter().map(|chunk| chunk.text.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(said, vec!["Hmm", "Found it."], "the thought and the answer are still in the thread");
}
