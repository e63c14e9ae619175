//! What each fuzz target does with its input, one function per target, so that a target file is a
//! one-line `fuzz_target!` and a reader finds every driver here.
//!
//! Each driver feeds bytes to one of Tether's parsers or engines the way production code does
//! (the same entry points tetherd and the WASM host call) and checks the properties that must hold
//! for any input. A panic anywhere — in the code under test or in an assertion here — is a crash
//! libFuzzer reports; `cargo xtask fuzz` keeps the inputs that crashed as regressions to run again.

// A fuzz driver asserts with panics: a panic is how libFuzzer learns of a failure.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::cell::Cell;
use std::sync::Once;

use serde_json::value::RawValue;
use tether_core::framing::LineFramer;
use tether_core::host::HostEngine;
use tether_core::host_api::{EngineConfig, FileReadReply, HostAction, HostCommand, HostEvent, ResolvedPath};
use tether_core::intent::Intent;
use tether_core::jsonrpc;
use tether_core::permissions::{path_glob, text_glob};
use tether_core::session_log::read_log;
use tether_core::webview::WebviewToHost;
use tether_diff::Budget;

/// The line framer: bytes pushed in chunks whose sizes the input chooses. Every line it yields is
/// within the limit, and what it holds back never exceeds the limit either.
pub fn framing(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let max_line_bytes = usize::from(first % 64) + 1;
    let chunk = usize::from(first / 64) + 1;
    let mut framer = LineFramer::new(max_line_bytes);
    for piece in rest.chunks(chunk) {
        framer.push(piece);
        while let Some(line) = framer.next_line() {
            if let Ok(line) = line {
                assert!(line.len() <= max_line_bytes, "a line longer than the limit was yielded");
            }
        }
        assert!(framer.buffered_bytes() <= max_line_bytes + chunk, "the framer held more than a line");
    }
    // A last line without its newline is yielded (or refused) at the end, never lost silently.
    let _last = framer.finish();
}

/// The JSON-RPC parser on any text: it answers with a message or an error it can encode, and an
/// error's response is itself valid JSON-RPC.
pub fn jsonrpc(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match jsonrpc::parse_message(&text) {
        Ok(_message) => {}
        Err(error) => {
            let line = jsonrpc::encode_error(&error.response_id(), &error.to_rpc_error());
            assert!(jsonrpc::parse_message(line.trim_end()).is_ok(), "the error response does not parse: {line}");
        }
    }
}

/// The host engine (what the WASM host runs) with a live session, fed arbitrary agent lines the
/// way tetherd forwards them: a line that is JSON as `agent/message`, any other as
/// `agent/badLine`. A line `#time` moves the clock by a minute, so deadlines expire too.
pub fn acp_engine(data: &[u8]) {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    for line in data.split(|byte| *byte == b'\n') {
        if line == b"#time" {
            now += 60_000;
            engine.handle_timeout(now);
        } else {
            let text = String::from_utf8_lossy(line);
            let envelope = match serde_json::from_str::<&RawValue>(&text) {
                Ok(message) => agent_message(message.get()),
                Err(error) => bad_line(&text, &error.to_string()),
            };
            engine.handle_sidecar_bytes(envelope.as_bytes(), now);
        }
        carry_out(&mut engine, now);
    }
    engine.handle_timeout(now + 600_000);
    carry_out(&mut engine, now);
}

/// The host engine with a live Claude CLI session (its translator between the ACP client and the
/// CLI) and a prompt running, fed arbitrary lines as the CLI's stdout the way tetherd forwards
/// them (as [`acp_engine`] does for an ACP agent). `#time` moves the clock a minute, `#exit` ends
/// the CLI (the next prompt, `#prompt`, starts another: its spawn is answered at once). Then the
/// same lines are read back as the session's log would hold them, through the replay.
pub fn claude_cli(data: &[u8]) {
    let mut now = 0;
    let mut engine = HostEngine::new(EngineConfig {
        agents: serde_json::json!([{ "name": "Claude", "command": "claude", "protocol": "claude-cli" }]),
        default_profile: Some("Claude".to_owned()),
        ..config()
    });
    engine.handle_sidecar_connected(now);
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"result":{"tetherdVersion":"0.1.0","pid":9}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessions":[]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"agentId":7,"pid":100}}"#,
    ] {
        engine.handle_sidecar_bytes(format!("{line}\n").as_bytes(), now);
    }
    let prompt = Intent::Prompt { text: "fuzz".to_owned(), attachments: Vec::new() };
    engine.handle_webview(prompt, now);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tree\":\"t\"}}\n", now);
    carry_out(&mut engine, now);
    let mut log = String::new();
    let mut seq = 1;
    let mut record = |log: &mut String, event: tether_core::session_log::LogEvent| {
        seq += 1;
        log.push_str(&tether_core::session_log::encode_line(seq, "2026-11-25T10:00:00.000Z", &event));
        log.push('\n');
    };
    record(
        &mut log,
        tether_core::session_log::LogEvent::ToAgent(
            r#"{"type":"control_request","request_id":"tether-1","request":{"subtype":"initialize","hooks":null}}"#
                .to_owned(),
        ),
    );
    let mut agent = 7;
    for line in data.split(|byte| *byte == b'\n') {
        match line {
            b"#time" => {
                now += 60_000;
                engine.handle_timeout(now);
            }
            b"#exit" => {
                let exited = format!(
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"agent/exited\",\"params\":{{\"agentId\":{agent},\"code\":1,\"signal\":null,\"killed\":false}}}}\n"
                );
                engine.handle_sidecar_bytes(exited.as_bytes(), now);
                record(
                    &mut log,
                    tether_core::session_log::LogEvent::Exited { code: Some(1), signal: None, killed: false },
                );
            }
            b"#prompt" => {
                engine.handle_webview(Intent::Prompt { text: "again".to_owned(), attachments: Vec::new() }, now);
                // Whatever the engine asked of tetherd is answered as a started CLI would be (an
                // answer to a request that was not a spawn is refused by the engine as unknown).
                agent += 1;
                for id in 3..12 {
                    let started = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"agentId\":{agent},\"pid\":{agent}}}}}\n"
                    );
                    engine.handle_sidecar_bytes(started.as_bytes(), now);
                }
            }
            _ => {
                let text = String::from_utf8_lossy(line);
                let envelope = match serde_json::from_str::<&RawValue>(&text) {
                    Ok(message) => {
                        record(&mut log, tether_core::session_log::LogEvent::FromAgent(message.get().to_owned()));
                        agent_message_from(agent, message.get())
                    }
                    Err(error) => bad_line(&text, &error.to_string()),
                };
                engine.handle_sidecar_bytes(envelope.as_bytes(), now);
            }
        }
        carry_out(&mut engine, now);
    }
    engine.handle_timeout(now + 600_000);
    carry_out(&mut engine, now);
    let mut replay = tether_core::acp::LogReplay::new(
        tether_core::acp::ClientInfo { name: "Tether".to_owned(), version: "0.1.0".to_owned() },
        "/ws",
        1,
        tether_core::permissions::PermissionPolicy::new(tether_core::permissions::Mode::Ask, 1),
    );
    replay.feed(&read_log(&log));
    let (_client, claude, _problems) = replay.finish_with_claude();
    assert!(claude.is_some(), "a log that starts with the CLI's initialize is a Claude CLI session's");
}

/// The host carries out every action as it comes, so nothing piles up unread. It answers the
/// engine's questions about where paths lead at once (a path under `/ws/link` leads out of the
/// workspace, to `/elsewhere`; any other to itself), so that the requests waiting for the answer
/// are decided and the fuzzer reaches the decisions.
fn carry_out(engine: &mut HostEngine, now: u64) {
    while let Some(action) = engine.poll_action() {
        if let HostAction::ResolvePaths { resolve, roots, paths } = action {
            let leads_to = |path: String| ResolvedPath::Found {
                path: match path.strip_prefix("/ws/link") {
                    Some(rest) => format!("/elsewhere{rest}"),
                    None => path,
                },
            };
            let paths = paths.into_iter().map(leads_to).collect();
            let roots = roots.into_iter().map(leads_to).collect();
            engine.handle_command(HostEvent::PathsResolved { resolve, roots, paths }, now);
        }
    }
}

/// Every entry point of the WASM facade (`crates/tether-wasm`), on a live session, in any order:
/// the property is that no input of any kind makes the engine panic, since a panic in the host
/// traps the whole WASM engine (the host then has to start a new one). Each line of the input is
/// one call, chosen by its first byte:
///
/// - `A` agent line: the rest as tetherd forwards an agent's stdout line (as [`acp_engine`]);
/// - `S` socket bytes: the rest, newline included, as raw bytes from tetherd;
/// - `W` webview message, `C` host command, `F` file read reply (its data after a NUL): the rest as
///   JSON of that type; JSON that does not fit the type is refused by the facade with an error
///   before the engine sees it, so it is skipped here;
/// - `T` the clock moves a minute and the timer fires; `X` the socket closes (the rest is the
///   reason) and opens again; `G` the chat view goes away.
///
/// After each call the actions are drained and serialized as the facade converts them for the
/// host, and the next deadline is polled. A panic is a crash libFuzzer reports; the hook installed
/// here first prints which kind of input was being handled, as the host's log would.
pub fn host_inputs(data: &[u8]) {
    name_the_input_on_panic();
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    for line in data.split(|byte| *byte == b'\n') {
        let Some((&tag, rest)) = line.split_first() else { continue };
        let text = String::from_utf8_lossy(rest);
        match tag {
            b'A' => handling("an agent line", || {
                let envelope = match serde_json::from_str::<&RawValue>(&text) {
                    Ok(message) => agent_message(message.get()),
                    Err(error) => bad_line(&text, &error.to_string()),
                };
                engine.handle_sidecar_bytes(envelope.as_bytes(), now);
            }),
            b'S' => handling("bytes from the sidecar", || {
                engine.handle_sidecar_bytes(rest, now);
                engine.handle_sidecar_bytes(b"\n", now);
            }),
            b'W' => {
                if let Ok(message) = serde_json::from_str::<WebviewToHost>(&text) {
                    handling("a webview message", || engine.handle_webview(message, now));
                }
            }
            b'C' => {
                if let Ok(command) = serde_json::from_str::<HostCommand>(&text) {
                    handling("a host command", || engine.handle_command(command, now));
                }
            }
            b'F' => {
                let (reply, bytes) = text.split_once('\0').unwrap_or((&text, ""));
                if let Ok(reply) = serde_json::from_str::<FileReadReply>(reply) {
                    handling("a file read reply", || engine.handle_file_read(reply, bytes.as_bytes(), now));
                }
            }
            b'T' => {
                now += 60_000;
                handling("the timer", || engine.handle_timeout(now));
            }
            b'X' => handling("the sidecar closing and reconnecting", || {
                engine.handle_sidecar_closed(&text, now);
                engine.handle_sidecar_connected(now);
            }),
            b'G' => handling("the chat view closing", || engine.handle_webview_gone()),
            _ => continue,
        }
        handling("the poll for actions", || drain_as_the_facade_does(&mut engine));
    }
    handling("the last timer", || engine.handle_timeout(now + 600_000));
    handling("the poll for actions", || drain_as_the_facade_does(&mut engine));
}

thread_local! {
    /// The kind of input [`host_inputs`] is handing to the engine, for the panic message.
    static HANDLING: Cell<&'static str> = const { Cell::new("nothing") };
}

/// Runs one call into the engine, remembering what kind of input it handles.
fn handling<T>(what: &'static str, call: impl FnOnce() -> T) -> T {
    HANDLING.with(|handling| handling.set(what));
    call()
}

/// Chains a hook before libFuzzer's (which aborts), naming the kind of input that panicked.
fn name_the_input_on_panic() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            eprintln!("the engine panicked while handling {}", HANDLING.with(Cell::get));
            previous(info);
        }));
    });
}

/// What the facade's `pollAction` and `pollTimeout` do after every input: every action, converted
/// for the host (here to JSON, as the facade's JSON-compatible conversion sees the same serde
/// shape), then the next deadline.
fn drain_as_the_facade_does(engine: &mut HostEngine) {
    while let Some(action) = engine.poll_action() {
        let _json = serde_json::to_value(&action).unwrap();
    }
    let _deadline = engine.poll_timeout();
}

/// The event-log reader and the replay that folds a log into a thread, on any text.
pub fn replay(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let info = tether_core::acp::ClientInfo { name: "fuzz".to_owned(), version: "0".to_owned() };
    let policy = tether_core::permissions::PermissionPolicy::new(Default::default(), 1);
    let mut replay = tether_core::acp::LogReplay::new(info, "/ws", 1, policy);
    // In two pieces cut at a line's end, as tetherd hands a long log over.
    let middle = text.as_bytes()[..text.len() / 2].iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
    let (first, second) = text.split_at(middle);
    for piece in [first, second] {
        replay.feed(&read_log(piece));
    }
    let (_client, _problems) = replay.finish();
}

/// The rule globs: the input is a pattern and a text, split at the first NUL byte. The engine's
/// linear matcher must agree with [`reference_glob`], a plain backtracking reading of the syntax
/// (kept to short inputs, where backtracking is quick), on free text and on paths.
pub fn glob(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (pattern, subject) = text.split_once('\0').unwrap_or((&text, ""));
    let on_text = text_glob(pattern, subject);
    let on_path = path_glob(pattern, subject);
    if pattern.chars().count() <= 64 && subject.chars().count() <= 256 {
        assert_eq!(on_text, reference_glob(pattern, subject, false), "text glob {pattern:?} on {subject:?}");
        let target = if pattern.contains('/') || pattern == "**" {
            subject
        } else {
            subject.rsplit('/').next().unwrap_or(subject)
        };
        assert_eq!(on_path, reference_glob(pattern, target, true), "path glob {pattern:?} on {subject:?}");
    }
    // A pattern with no special characters matches exactly itself.
    if !pattern.contains(['*', '?', '\\']) {
        assert!(text_glob(pattern, pattern), "{pattern:?} does not match itself");
    }
}

/// The rule glob syntax read directly, by backtracking (with each (pattern, text) position
/// answered once, so that many stars stay quick): `\x` is `x` (a `\` at the end is itself), `?`
/// one character, `*` any run; on a path (`segments`) `?` and `*` stay within a segment, `**` is
/// any run across segments and `**/` any number of whole folders, none included.
fn reference_glob(pattern: &str, text: &str, segments: bool) -> bool {
    struct Reading {
        pattern: Vec<char>,
        text: Vec<char>,
        segments: bool,
        known: std::collections::HashMap<(usize, usize), bool>,
    }
    impl Reading {
        /// Whether the pattern from `p` matches the text from `t`.
        fn matches(&mut self, p: usize, t: usize) -> bool {
            if let Some(&known) = self.known.get(&(p, t)) {
                return known;
            }
            let answer = self.read(p, t);
            self.known.insert((p, t), answer);
            answer
        }

        fn read(&mut self, p: usize, t: usize) -> bool {
            let segments = self.segments;
            let in_segment = |c: char| !segments || c != '/';
            let next = self.text.get(t).copied();
            match self.pattern[p..] {
                [] => next.is_none(),
                ['\\', escaped, ..] => next == Some(escaped) && self.matches(p + 2, t + 1),
                ['*', '*', '/', ..] if segments => {
                    self.matches(p + 3, t)
                        || (t + 1..=self.text.len()).any(|at| self.text[at - 1] == '/' && self.matches(p + 3, at))
                }
                ['*', '*', ..] if segments => (t..=self.text.len()).any(|at| self.matches(p + 2, at)),
                ['*', ..] => {
                    let end = (t..self.text.len()).find(|&at| !in_segment(self.text[at])).unwrap_or(self.text.len());
                    (t..=end).any(|at| self.matches(p + 1, at))
                }
                ['?', ..] => next.is_some_and(in_segment) && self.matches(p + 1, t + 1),
                [literal, ..] => next == Some(literal) && self.matches(p + 1, t + 1),
            }
        }
    }
    let mut reading = Reading {
        pattern: pattern.chars().collect(),
        text: text.chars().collect(),
        segments,
        known: std::collections::HashMap::new(),
    };
    reading.matches(0, 0)
}

/// Diffing two texts (split at the first NUL byte) and applying any subset of the hunks (chosen
/// by the bits of the first byte): every hunk applied gives the new text, none the old, and keeping
/// some hunks of a proposed change lands on the same text as reverting the others after the
/// whole change was written.
pub fn patch(data: &[u8]) {
    let Some((&choice, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let (old, new) = text.split_once('\0').unwrap_or((&text, ""));
    let diff = tether_diff::diff_lines(old, new, &Budget { max_steps: 10_000 });
    let all: Vec<usize> = (0..diff.hunks.len()).collect();
    assert_eq!(tether_diff::apply(old, &diff.hunks, &all).unwrap(), new, "applying every hunk");
    assert_eq!(tether_diff::apply(old, &diff.hunks, &[]).unwrap(), old, "applying no hunk");
    assert_eq!(tether_diff::revert(new, &diff.hunks, &all).unwrap(), old, "reverting every hunk");
    let (chosen, others): (Vec<usize>, Vec<usize>) = all.iter().partition(|index| choice & (1 << (*index % 8)) != 0);
    let kept = tether_diff::apply(old, &diff.hunks, &chosen).unwrap();
    let reverted = tether_diff::revert(new, &diff.hunks, &others).unwrap();
    assert_eq!(kept, reverted, "keeping {chosen:?} differs from reverting {others:?}");
}

fn config() -> EngineConfig {
    EngineConfig {
        token: "token".to_owned(),
        client_name: "Tether".to_owned(),
        client_version: "0.1.0".to_owned(),
        workspace_root: "/ws".to_owned(),
        workspace_folders: Vec::new(),
        demo_agent_command: Some("/ext/bin/tether-test-agent".to_owned()),
        agents: serde_json::Value::Null,
        builtin_profiles: Vec::new(),
        missing_builtins: Vec::new(),
        default_profile: None,
        tether_dir: Some("/ws/.tether".to_owned()),
        permissions: Default::default(),
        follow_agent: false,
        workspace_trusted: true,
        claude_cli: Default::default(),
        mcp_servers: serde_json::Value::Null,
    }
}

/// An engine that has said hello, spawned the Demo agent (id 7) and created session `s1`, as
/// tetherd and the agent answer it.
fn ready_engine(now: &mut u64) -> HostEngine {
    let mut engine = HostEngine::new(config());
    engine.handle_sidecar_connected(*now);
    let tetherd = [
        r#"{"jsonrpc":"2.0","id":0,"result":{"tetherdVersion":"0.1.0","pid":9}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessions":[]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"agentId":7,"pid":100}}"#,
    ];
    for line in tetherd {
        engine.handle_sidecar_bytes(format!("{line}\n").as_bytes(), *now);
    }
    engine.handle_sidecar_bytes(
        agent_message(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#).as_bytes(),
        *now,
    );
    engine.handle_sidecar_bytes(
        agent_message(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#).as_bytes(),
        *now,
    );
    *now += 1000;
    engine.handle_timeout(*now);
    // A prompt is running, so the agent's updates land in a live turn.
    let prompt = Intent::Prompt { text: "fuzz".to_owned(), attachments: Vec::new() };
    engine.handle_webview(prompt, *now);
    while engine.poll_action().is_some() {}
    engine
}

fn agent_message(message: &str) -> String {
    agent_message_from(7, message)
}

fn agent_message_from(agent: u64, message: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"agent/message\",\"params\":{{\"agentId\":{agent},\"message\":{message}}}}}\n"
    )
}

fn bad_line(text: &str, error: &str) -> String {
    let preview: String = text.chars().take(200).collect();
    let params = serde_json::json!({
        "agentId": 7, "kind": "invalidJson", "len": text.len(), "preview": preview, "error": error,
    });
    format!("{}\n", serde_json::json!({ "jsonrpc": "2.0", "method": "agent/badLine", "params": params }))
}
