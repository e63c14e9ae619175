//! Session event logs through the real tetherd: everything on an agent's wire, its stderr, its
//! exit and the host's audit records land in `<sessionDir>/events.jsonl` in the order they
//! happened, and a `kill -9` of tetherd mid-turn loses no line a host had already received.
//! The agents are shell scripts that echo, complain on stderr or stream slowly.

#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use expect_test::expect;
use serde_json::json;
use support::{Client, Line, Tetherd};
use tether_core::session_log::{EVENTS_FILE, LogEntry, LogEvent, ReadLog, read_log};

/// Echoes each line, except two commands: one that writes a line to stderr (and nothing on
/// stdout), and one that prints a line that is not JSON, a goodbye and exits with code 3.
const ECHO_AGENT: &str = r#"
while IFS= read -r line; do
    case "$line" in
        *'"say-stderr"'*) printf 'warning: disk "nearly" full\n' >&2 ;;
        *'"quit"'*) printf 'Debugger attached.\n{"bye":true}\n'; exit 3 ;;
        *) printf '%s\n' "$line" ;;
    esac
done
"#;

/// Waits for a prompt, then streams agent message chunks until it is stopped.
const SLOW_STREAM_AGENT: &str = r#"
IFS= read -r prompt
chunk=0
while :; do
    chunk=$((chunk + 1))
    printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d "}}}}\n' "$chunk"
    sleep 0.05
done
"#;

/// Spawns `sh -c <script>` with a session folder in a new workspace; returns the agent's id and
/// pid, its session folder and the workspace (which must outlive the test).
fn spawn_in_session(host: &mut Client, script: &str) -> (u64, u32, PathBuf, tempfile::TempDir) {
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let mut params = support::sh(script);
    params["tetherDir"] = json!(workspace.path().join(".tether").to_str().expect("a UTF-8 temporary path"));
    let (agent_id, pid, session_dir) = host.spawn_with_session(params);
    (agent_id, pid, session_dir.expect("a session folder"), workspace)
}

fn read_events(session_dir: &Path) -> (String, ReadLog) {
    let path = session_dir.join(EVENTS_FILE);
    assert_eq!(std::fs::metadata(&path).expect("the event log exists").permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&path).expect("the event log is UTF-8");
    let read = read_log(&text);
    (text, read)
}

/// Checks what every log must be: numbered from 1 without gaps, each line timed in UTC with
/// milliseconds, as the audit log is.
fn assert_numbered_and_timed(entries: &[LogEntry]) {
    for (index, entry) in entries.iter().enumerate() {
        assert_eq!(entry.seq, index as u64 + 1, "{entry:?}");
        let shape: String = entry.time.chars().map(|char| if char.is_ascii_digit() { 'd' } else { char }).collect();
        assert_eq!(shape, "dddd-dd-ddTdd:dd:dd.dddZ", "{entry:?}");
    }
}

/// Which way a message went.
#[derive(Clone, Copy)]
enum Direction {
    ToAgent,
    FromAgent,
}

/// The log's messages going one way, in order.
fn messages(entries: &[LogEntry], direction: Direction) -> Vec<&str> {
    entries
        .iter()
        .filter_map(|entry| match (&entry.event, direction) {
            (LogEvent::ToAgent(message), Direction::ToAgent) | (LogEvent::FromAgent(message), Direction::FromAgent) => {
                Some(message.as_str())
            }
            _ => None,
        })
        .collect()
}

/// The log's events, one per line, without their times.
fn summary(entries: &[LogEntry]) -> String {
    entries
        .iter()
        .map(|entry| {
            let event = match &entry.event {
                LogEvent::ToAgent(message) => format!("toAgent {message}"),
                LogEvent::FromAgent(message) => format!("fromAgent {message}"),
                LogEvent::Host(record) => format!("host {record}"),
                LogEvent::Stderr(line) => format!("stderr {line}"),
                LogEvent::Exited { code, signal, killed } => {
                    format!("exited code {code:?} signal {signal:?} killed {killed}")
                }
            };
            format!("{} {event}\n", entry.seq)
        })
        .collect()
}

#[test]
fn the_wire_both_ways_stderr_audit_records_and_the_exit_are_logged_in_the_order_they_happened() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _, session_dir, _workspace) = spawn_in_session(&mut host, ECHO_AGENT);

    // A turn as the wire carries it (the echo plays the agent's part): odd spacing, escapes and
    // non-ASCII must land as written. The permission request and the prompt's answer are where
    // tetherd syncs the log before forwarding.
    let echoed = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"caf\u00e9 é \"q\""}]}}"#,
        r#"{ "jsonrpc" : "2.0", "id":5, "method":"session/request_permission", "params":{} }"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
    ];
    let mut received = Vec::new();
    for message in echoed {
        host.send_to_agent(agent_id, message);
        received.push(host.agent_event("agent/message", agent_id).raw_agent_message());
    }
    host.send_to_agent(agent_id, r#"{"method":"say-stderr"}"#);
    host.agent_event("agent/stderr", agent_id);
    host.audit(agent_id, r#"{"kind":"permission", "decision":"allowOnce"}"#);
    host.handled_so_far();
    host.send_to_agent(agent_id, r#"{"method":"quit"}"#);
    let last = host.agent_events_until_exit(agent_id);
    received
        .extend(last.iter().filter(|line| line.method() == Some("agent/message")).map(|line| line.raw_agent_message()));
    assert_eq!(last.iter().filter(|line| line.method() == Some("agent/badLine")).count(), 1, "{last:#?}");

    let (text, read) = read_events(&session_dir);
    assert_eq!(read.problems, [], "{text}");
    assert!(!read.cut_tail, "{text}");
    assert_numbered_and_timed(&read.entries);
    assert_eq!(messages(&read.entries, Direction::FromAgent), received, "every line the host got, in order");
    let mut sent = echoed.to_vec();
    sent.extend([r#"{"method":"say-stderr"}"#, r#"{"method":"quit"}"#]);
    assert_eq!(messages(&read.entries, Direction::ToAgent), sent, "every line the agent got, in order");
    expect![[r#"
        1 toAgent {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
        2 fromAgent {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
        3 toAgent {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"caf\u00e9 é \"q\""}]}}
        4 fromAgent {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"caf\u00e9 é \"q\""}]}}
        5 toAgent { "jsonrpc" : "2.0", "id":5, "method":"session/request_permission", "params":{} }
        6 fromAgent { "jsonrpc" : "2.0", "id":5, "method":"session/request_permission", "params":{} }
        7 toAgent {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
        8 fromAgent {"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
        9 toAgent {"method":"say-stderr"}
        10 stderr warning: disk "nearly" full
        11 host {"kind":"permission", "decision":"allowOnce"}
        12 toAgent {"method":"quit"}
        13 fromAgent {"bye":true}
        14 exited code Some(3) signal None killed false
    "#]]
    .assert_eq(&summary(&read.entries));

    // The audit record still goes to the audit log too.
    let audit = std::fs::read_to_string(session_dir.join("audit.jsonl")).expect("the audit log");
    assert!(audit.ends_with("\"kind\":\"permission\", \"decision\":\"allowOnce\"}\n"), "{audit}");
}

#[test]
fn a_killed_agent_and_one_without_output_are_logged_too() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _, session_dir, _workspace) = spawn_in_session(&mut host, "exec cat");
    host.call("agent/kill", json!({ "agentId": agent_id })).expect("cat can be killed");

    let (text, read) = read_events(&session_dir);
    assert_eq!(read.problems, [], "{text}");
    expect![[r#"
        1 exited code None signal Some(15) killed true
    "#]]
    .assert_eq(&summary(&read.entries));
}

#[test]
fn a_kill_9_of_tetherd_mid_turn_loses_no_line_a_host_received_and_a_cut_tail_still_reads() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, agent_pid, session_dir, _workspace) = spawn_in_session(&mut host, SLOW_STREAM_AGENT);
    let prompt = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[]}}"#;
    host.send_to_agent(agent_id, prompt);
    let received: Vec<String> =
        (0..5).map(|_| host.agent_event("agent/message", agent_id).raw_agent_message()).collect();

    tetherd.signal(nix::sys::signal::Signal::SIGKILL);
    let mut tetherd = tetherd;
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&tetherd.wait_for_exit()), Some(9));
    // The agent outlives tetherd (its own process group); it is of no more use to the test.
    let agent_group = nix::unistd::Pid::from_raw(i32::try_from(agent_pid).expect("pids fit in i32"));
    if let Err(error) = nix::sys::signal::killpg(agent_group, nix::sys::signal::Signal::SIGKILL) {
        // It may already have died of the broken pipe.
        assert_eq!(error, nix::errno::Errno::ESRCH);
    }

    let (text, read) = read_events(&session_dir);
    assert_eq!(read.problems, [], "valid JSON lines up to the last complete one: {text}");
    assert_numbered_and_timed(&read.entries);
    assert_eq!(messages(&read.entries, Direction::ToAgent), [prompt]);
    assert_eq!(read.entries[0].event, LogEvent::ToAgent(prompt.to_owned()), "the prompt comes first");
    let logged = messages(&read.entries, Direction::FromAgent);
    assert!(logged.len() >= received.len(), "{text}");
    assert_eq!(logged[..received.len()], received, "every line the host got, in order");
    assert!(!read.entries.iter().any(|entry| matches!(entry.event, LogEvent::Exited { .. })), "{text}");

    // A crash in the middle of a write leaves the last line cut: reading takes every whole line
    // before it and says the tail was cut.
    let complete = text.strip_suffix('\n').unwrap_or(&text);
    let last_line_start = complete.rfind('\n').map_or(0, |newline| newline + 1);
    let cut = &text[..last_line_start + (complete.len() - last_line_start) / 2];
    let cut_read = read_log(cut);
    assert_eq!(cut_read.problems, []);
    assert!(cut_read.cut_tail);
    assert_eq!(cut_read.entries[..], read.entries[..read.entries.len() - 1]);
}

#[test]
fn every_message_stderr_line_and_exit_a_host_receives_carries_the_seq_of_its_line_in_the_log() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _, session_dir, _workspace) = spawn_in_session(&mut host, ECHO_AGENT);

    // Lines for the agent and audit records are numbered too, between the ones the host gets
    // back, so a seq counted by the host alone would not match.
    // Stdout and stderr are forwarded apart, and the agent answers while the test writes, so the
    // test waits for each answer before its next line: the numbers below are then the only ones
    // the log can hold.
    host.send_to_agent(agent_id, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
    let mut received = vec![host.agent_event("agent/message", agent_id)];
    host.audit(agent_id, r#"{"kind":"note"}"#);
    host.send_to_agent(agent_id, r#"{"method":"say-stderr"}"#);
    received.push(host.agent_event("agent/stderr", agent_id));
    host.send_to_agent(agent_id, r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":"é"}}"#);
    received.push(host.agent_event("agent/message", agent_id));
    host.send_to_agent(agent_id, r#"{"method":"quit"}"#);
    received.extend(host.agent_events_until_exit(agent_id));

    let (text, read) = read_events(&session_dir);
    assert_eq!(read.problems, [], "{text}");
    assert_numbered_and_timed(&read.entries);
    let mut shown = String::new();
    for line in &received {
        let method = line.method().expect("a notification");
        let Some(seq) = line.params()["seq"].as_u64() else {
            shown.push_str(&format!("{method} without seq\n"));
            continue;
        };
        let entry = usize::try_from(seq).ok().and_then(|seq| read.entries.get(seq - 1)).expect("a line with that seq");
        let same = match (method, &entry.event) {
            ("agent/message", LogEvent::FromAgent(message)) => *message == line.raw_agent_message(),
            ("agent/stderr", LogEvent::Stderr(logged)) => logged == line.params()["line"].as_str().expect("a line"),
            ("agent/exited", LogEvent::Exited { code, .. }) => code.map(i64::from) == line.params()["code"].as_i64(),
            _ => false,
        };
        assert!(same, "{} has seq {seq}, which in the log is {entry:?}", line.raw);
        shown.push_str(&format!("{method} seq {seq}\n"));
    }
    expect![[r#"
        agent/message seq 2
        agent/stderr seq 5
        agent/message seq 7
        agent/badLine without seq
        agent/message seq 9
        agent/exited seq 10
    "#]]
    .assert_eq(&shown);
}

#[test]
fn the_events_of_an_agent_without_a_session_folder_have_no_seq() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, _) = host.spawn(support::sh(ECHO_AGENT));
    host.send_to_agent(agent_id, r#"{"method":"say-stderr"}"#);
    let mut received = vec![host.agent_event("agent/stderr", agent_id)];
    host.send_to_agent(agent_id, r#"{"method":"quit"}"#);
    received.extend(host.agent_events_until_exit(agent_id));
    let methods: Vec<&str> = received.iter().filter_map(Line::method).collect();
    assert_eq!(methods, ["agent/stderr", "agent/badLine", "agent/message", "agent/exited"]);
    for line in &received {
        assert_eq!(line.params().get("seq"), None, "{}", line.raw);
    }
}
