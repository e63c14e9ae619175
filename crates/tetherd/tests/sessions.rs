//! Session folders through the real tetherd: `agent/spawn` with a `tetherDir` creates a private
//! session folder (and the `.gitignore` that keeps it out of git), and `session/audit` appends
//! to its audit log, even after the agent has exited.

#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::{Client, Tetherd, eventually};

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).expect("the path exists").permissions().mode() & 0o777
}

/// `cat` as an agent, with `tetherDir` when given.
fn cat(tether_dir: Option<&Path>) -> Value {
    let mut params = json!({ "name": "cat", "command": "cat", "cwd": "." });
    if let Some(tether_dir) = tether_dir {
        params["tetherDir"] = json!(tether_dir.to_str().expect("a UTF-8 temporary path"));
    }
    params
}

/// Spawns an agent; returns its id and the `sessionDir` of the result.
fn spawn(host: &mut Client, params: Value) -> (u64, Option<PathBuf>) {
    let result = host.call("agent/spawn", params).expect("agent/spawn succeeds");
    let agent_id = result["agentId"].as_u64().expect("agentId");
    let session_dir = match &result["sessionDir"] {
        Value::Null => None,
        Value::String(dir) => Some(PathBuf::from(dir)),
        other => panic!("sessionDir is a string or null, not {other}"),
    };
    (agent_id, session_dir)
}

/// Sends a `session/audit` whose record is `record` exactly as written (not re-serialised).
fn audit(host: &mut Client, agent_id: u64, record: &str) {
    host.send_raw(
        format!(r#"{{"jsonrpc":"2.0","method":"session/audit","params":{{"agentId":{agent_id},"record":{record}}}}}"#)
            .as_bytes(),
    );
    host.send_raw(b"\n");
}

/// Returns once tetherd has handled everything this host sent before. A connection's messages
/// are handled in order and an unknown method is answered at once, so its answer means the
/// notifications before it (which get no answer of their own) are done.
fn handled_so_far(host: &mut Client) {
    let error = host.call("tests/barrier", json!({})).expect_err("an unknown method");
    assert_eq!(error["code"], json!(-32601));
}

fn audit_lines(session_dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(session_dir.join("audit.jsonl")).expect("the audit log exists");
    assert!(text.ends_with('\n'), "every record ends its line: {text:?}");
    text.lines().map(str::to_owned).collect()
}

/// Splits an audit line into its `time` (checked to be RFC 3339 UTC with milliseconds) and the
/// rest of the line after it, exactly as written.
fn split_time(line: &str) -> (&str, &str) {
    let value: Value = serde_json::from_str(line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
    assert!(value.is_object(), "{line}");
    let rest = line.strip_prefix(r#"{"time":""#).unwrap_or_else(|| panic!("time comes first: {line}"));
    let (time, rest) = rest.split_at(24);
    let digits: Vec<u32> = time
        .split(|char: char| "-T:.Z".contains(char))
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().unwrap_or_else(|_| panic!("{time} is not a time")))
        .collect();
    let shape: String = time.chars().map(|char| if char.is_ascii_digit() { 'd' } else { char }).collect();
    assert_eq!(shape, "dddd-dd-ddTdd:dd:dd.dddZ", "{time}");
    let [_, month, day, hour, minute, second, _] = digits[..] else { panic!("{time} has seven fields") };
    assert!((1..=12).contains(&month) && (1..=31).contains(&day), "{time}");
    assert!(hour < 24 && minute < 60 && second < 60, "{time}");
    assert_eq!(value["time"], json!(time));
    (time, rest)
}

/// A time as the stamp that starts session folder names (`20261122-061300`), to compare them.
fn as_stamp(time: &str) -> String {
    let digits: String = time.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}

fn stamp_of(session_dir: &Path) -> String {
    session_dir.file_name().and_then(|name| name.to_str()).expect("a UTF-8 name")[..15].to_owned()
}

#[test]
fn spawning_with_a_tether_dir_creates_a_private_session_folder_that_git_ignores() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let tether_dir = workspace.path().join(".tether");

    let (agent_id, session_dir) = spawn(&mut host, cat(Some(&tether_dir)));
    let session_dir = session_dir.expect("a session folder");
    assert!(session_dir.is_absolute(), "{}", session_dir.display());
    assert_eq!(session_dir.parent(), Some(tether_dir.join("sessions").as_path()));
    let name = session_dir.file_name().and_then(|name| name.to_str()).expect("a UTF-8 name");
    let shape: String = name.chars().map(|char| if char.is_ascii_digit() { 'd' } else { char }).collect();
    assert_eq!(shape, format!("dddddddd-dddddd-{}", "d".repeat(agent_id.to_string().len())), "{name}");
    assert!(name.ends_with(&format!("-{agent_id}")), "{name}");
    let mut files: Vec<_> =
        std::fs::read_dir(&session_dir).expect("a folder").flatten().map(|file| file.file_name()).collect();
    files.sort();
    assert_eq!(files, ["events.jsonl", "meta.json"], "a new session folder holds its event log and meta.json only");
    assert_eq!(std::fs::read_to_string(session_dir.join("events.jsonl")).expect("the event log"), "");

    assert_eq!(std::fs::read_to_string(tether_dir.join(".gitignore")).expect("a .gitignore"), "*\n");
    assert_eq!(mode_of(&tether_dir), 0o700);
    assert_eq!(mode_of(&tether_dir.join("sessions")), 0o700);
    assert_eq!(mode_of(&session_dir), 0o700);
    assert_eq!(mode_of(&tether_dir.join(".gitignore")), 0o600);

    // Another agent, even in the same second, gets a folder of its own.
    let (_, second) = spawn(&mut host, cat(Some(&tether_dir)));
    let second = second.expect("a second session folder");
    assert_ne!(second, session_dir);
    assert!(second.is_dir() && session_dir.is_dir());
}

#[test]
fn an_existing_tether_dir_and_its_gitignore_are_left_as_they_are() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let tether_dir = workspace.path().join(".tether");
    std::fs::create_dir(&tether_dir).expect("a .tether folder");
    std::fs::set_permissions(&tether_dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(tether_dir.join(".gitignore"), "sessions/\n!settings.json\n").expect("a .gitignore");

    let (_, session_dir) = spawn(&mut host, cat(Some(&tether_dir)));
    assert!(session_dir.expect("a session folder").is_dir());
    assert_eq!(std::fs::read_to_string(tether_dir.join(".gitignore")).expect("read"), "sessions/\n!settings.json\n");
    assert_eq!(mode_of(&tether_dir), 0o755);
}

#[test]
fn audit_records_are_appended_in_order_with_the_time_first_and_their_fields_untouched() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let (agent_id, session_dir) = spawn(&mut host, cat(Some(&workspace.path().join(".tether"))));
    let session_dir = session_dir.expect("a session folder");

    // Odd spacing, escapes and non-ASCII: the record must land as the host wrote it.
    let records = [
        r#"{"kind":"permission", "toolCallId" : "call-1","title":"caf\u00e9 é \"rm -rf\"","decision":"allowOnce","n":1.50}"#,
        r#"{"kind":"cancelled","reason":"the agent exited"}"#,
        "{}",
    ];
    for record in records {
        audit(&mut host, agent_id, record);
    }
    handled_so_far(&mut host);

    let lines = audit_lines(&session_dir);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let (first_time, first) = split_time(&lines[0]);
    let (second_time, second) = split_time(&lines[1]);
    let (_, third) = split_time(&lines[2]);
    assert_eq!(first, format!(r#"",{}"#, &records[0][1..]));
    assert_eq!(second, format!(r#"",{}"#, &records[1][1..]));
    assert_eq!(third, r#""}"#, "an empty record is the time alone");
    assert!(second_time >= first_time, "{second_time} is not before {first_time}");
    assert!(as_stamp(first_time) >= stamp_of(&session_dir), "{first_time} is not before the spawn");
    assert_eq!(mode_of(&session_dir.join("audit.jsonl")), 0o600);
}

#[test]
fn audit_records_after_the_agent_exited_still_land() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let mut params = support::sh("exit 4");
    params["tetherDir"] = json!(workspace.path().join(".tether").to_str().expect("a UTF-8 temporary path"));
    let (agent_id, session_dir) = spawn(&mut host, params);
    let session_dir = session_dir.expect("a session folder");
    let exited = host.agent_event("agent/exited", agent_id);
    assert_eq!(exited.params()["code"], json!(4));

    audit(&mut host, agent_id, r#"{"kind":"cancelled","reason":"the agent exited"}"#);
    handled_so_far(&mut host);
    let lines = audit_lines(&session_dir);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(split_time(&lines[0]).1, r#"","kind":"cancelled","reason":"the agent exited"}"#);
}

#[test]
fn records_that_cannot_be_written_are_dropped_and_tetherd_keeps_serving() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let (agent_id, session_dir) = spawn(&mut host, cat(Some(&workspace.path().join(".tether"))));
    let session_dir = session_dir.expect("a session folder");
    let (without_folder, _) = spawn(&mut host, cat(None));

    audit(&mut host, agent_id, r#"[{"kind":"permission"}]"#);
    audit(&mut host, agent_id, r#""a string""#);
    audit(&mut host, 999, r#"{"kind":"permission"}"#);
    audit(&mut host, without_folder, r#"{"kind":"permission"}"#);
    host.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"session/audit\",\"params\":{\"agentId\":\"one\"}}\n");
    audit(&mut host, agent_id, r#"{"kind":"kept"}"#);
    handled_so_far(&mut host);

    let lines = audit_lines(&session_dir);
    assert_eq!(lines.len(), 1, "only the object record lands: {lines:#?}");
    assert_eq!(split_time(&lines[0]).1, r#"","kind":"kept"}"#);
    for expected in ["not a JSON object", "no such agent", "has no session folder", "invalid params"] {
        eventually(&format!("the log to say {expected:?}"), || tetherd.stderr().contains(expected));
    }

    // The agents are still there and still talking.
    host.send_raw(format!(r#"{{"jsonrpc":"2.0","method":"agent/send","params":{{"agentId":{agent_id},"message":{{"still":"here"}}}}}}"#).as_bytes());
    host.send_raw(b"\n");
    assert_eq!(host.agent_event("agent/message", agent_id).raw_agent_message(), r#"{"still":"here"}"#);
}

#[test]
fn without_a_tether_dir_nothing_is_written() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let mut params = cat(None);
    params["cwd"] = json!(workspace.path().to_str().expect("a UTF-8 temporary path"));
    let (agent_id, session_dir) = spawn(&mut host, params);
    assert_eq!(session_dir, None);

    audit(&mut host, agent_id, r#"{"kind":"permission"}"#);
    handled_so_far(&mut host);
    let written: Vec<_> = std::fs::read_dir(workspace.path()).expect("the workspace").flatten().collect();
    assert!(written.is_empty(), "nothing in the workspace: {written:?}");
}

#[test]
fn a_tether_dir_that_cannot_be_created_still_gives_a_working_agent() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = tempfile::tempdir().expect("a temporary directory");
    let file = workspace.path().join("not-a-folder");
    std::fs::write(&file, "").expect("a file");

    let (agent_id, session_dir) = spawn(&mut host, cat(Some(&file.join(".tether"))));
    assert_eq!(session_dir, None, "no session folder, but no spawn failure either");
    eventually("the log to say why", || tetherd.stderr().contains("no session folder for this agent"));

    host.send_raw(
        format!(
            r#"{{"jsonrpc":"2.0","method":"agent/send","params":{{"agentId":{agent_id},"message":{{"hello":1}}}}}}"#
        )
        .as_bytes(),
    );
    host.send_raw(b"\n");
    assert_eq!(host.agent_event("agent/message", agent_id).raw_agent_message(), r#"{"hello":1}"#);
}
