//! Tests of the host engine against a scripted tetherd: the handshake the host performs, and what
//! the webview receives while an agent streams.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use tether_core::host::{FRAME_MS, HostEngine, MAX_AUTOMATIC_SIDECAR_RESTARTS, SIDECAR_RESTART_WINDOW_MS};
use tether_core::host_api::{AgentProfile, EditorSelection, EngineConfig, HostAction, HostEvent, ResolvedPath};
use tether_core::intent::Intent;
use tether_core::thread::{ChunkKind, Entry, PermissionOutcome, Thread, ThreadPatch, TurnState};
use tether_core::webview::{HostToWebview, SessionStatus, ViewEvent, ViewSnapshot};

/// The window-level scenarios of `test_data/host/*.script`, run in the window of [`config`].
#[path = "host/scripts.rs"]
mod scripts;

fn config() -> EngineConfig {
    EngineConfig {
        token: "secret-token".to_owned(),
        client_name: "Tether".to_owned(),
        client_version: "0.1.0".to_owned(),
        workspace_root: "/ws".to_owned(),
        workspace_folders: Vec::new(),
        demo_agent_command: Some("/ext/bin/tether-test-agent".to_owned()),
        // The person's own agent, as they would write it in `tether.agents`.
        agents: serde_json::json!([{"name": "Other", "command": "other-agent", "args": ["--acp"]}]),
        // A built-in agent the host did not find on this machine.
        builtin_profiles: vec![AgentProfile {
            name: "Codex".to_owned(),
            command: "codex-acp".to_owned(),
            args: Vec::new(),
            env: Default::default(),
            cwd: None,
            protocol: Default::default(),
        }],
        missing_builtins: vec!["Codex".to_owned()],
        default_profile: None,
        tether_dir: Some("/ws/.tether".to_owned()),
        permissions: Default::default(),
        follow_agent: false,
        workspace_trusted: true,
        claude_cli: Default::default(),
        mcp_servers: serde_json::Value::Null,
    }
}

/// Everything the engine asked for, rendered one action a line.
fn drain(engine: &mut HostEngine) -> Vec<HostAction> {
    std::iter::from_fn(|| engine.poll_action()).collect()
}

/// Everything the engine asked for, with the host's part of resolving paths played as a host
/// with no symbolic links would (each path leads to itself).
fn drain_resolving(engine: &mut HostEngine, now: u64) -> Vec<HostAction> {
    let mut all = Vec::new();
    loop {
        let actions = drain(engine);
        if actions.is_empty() {
            return all;
        }
        for action in &actions {
            if let HostAction::ResolvePaths { resolve, roots, paths } = action {
                let found = |path: &String| ResolvedPath::Found { path: path.clone() };
                let command = HostEvent::PathsResolved {
                    resolve: *resolve,
                    roots: roots.iter().map(found).collect(),
                    paths: paths.iter().map(found).collect(),
                };
                engine.handle_command(command, now);
            }
        }
        all.extend(actions);
    }
}

fn sidecar_lines(actions: &[HostAction]) -> String {
    actions
        .iter()
        .filter_map(|action| match action {
            HostAction::SidecarWrite { data } => Some(data.as_str()),
            _ => None,
        })
        .collect()
}

/// tetherd accepts the hello (request 0) and lists no earlier session (request 1), so the
/// engine starts a new one.
fn hello_accepted(engine: &mut HostEngine, now: u64) {
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"tetherdVersion\":\"0.1.0\",\"pid\":9}}\n",
        now,
    );
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessions\":[]}}\n", now);
}

/// An engine that has said hello, spawned the Demo agent (id 7) and created session `s1`.
fn ready_engine(now: &mut u64) -> HostEngine {
    let mut engine = HostEngine::new(config());
    engine.handle_sidecar_connected(*now);
    hello_accepted(&mut engine, *now);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"agentId\":7,\"pid\":100}}\n", *now);
    let agent = |message: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"agent/message\",\"params\":{{\"agentId\":7,\"message\":{message}}}}}\n"
        )
    };
    engine.handle_sidecar_bytes(agent(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#).as_bytes(), *now);
    engine.handle_sidecar_bytes(agent(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#).as_bytes(), *now);
    *now += 1000;
    engine.handle_timeout(*now);
    engine
}

#[test]
fn handshake_with_tetherd_then_agent() {
    let mut engine = HostEngine::new(config());
    engine.handle_sidecar_connected(0);
    let hello = sidecar_lines(&drain(&mut engine));
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":0,"method":"hello","params":{"token":"secret-token","protocolVersion":1,"client":"Tether 0.1.0"}}
    "#]]
    .assert_eq(&hello);

    // tetherd accepts: the engine looks for the workspace's last session to reopen.
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"tetherdVersion\":\"0.1.0\",\"pid\":9}}\n",
        1,
    );
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":1,"method":"session/list","params":{"tetherDir":"/ws/.tether"}}
    "#]]
    .assert_eq(&sidecar_lines(&drain(&mut engine)));

    // There is none: the default profile (the built-in Demo) is spawned in the workspace.
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessions\":[]}}\n", 1);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":2,"method":"agent/spawn","params":{"name":"Demo","command":"/ext/bin/tether-test-agent","args":["--scenario","demo"],"env":{},"cwd":"/ws","tetherDir":"/ws/.tether"}}
    "#]]
    .assert_eq(&sidecar_lines(&drain(&mut engine)));

    // The agent is up: initialize goes to it embedded in agent/send, byte for byte.
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"agentId\":3,\"pid\":10}}\n", 2);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","method":"agent/send","params":{"agentId":3,"message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}},"auth":{"terminal":true},"_meta":{"terminal-auth":true,"terminal_output":true,"terminal_output_delta":true}},"clientInfo":{"name":"Tether","version":"0.1.0"}}}}}
    "#]]
    .assert_eq(&sidecar_lines(&drain(&mut engine)));

    // Selecting another agent kills this one and spawns the other.
    engine.handle_command(Intent::SelectAgent { name: "Other".to_owned() }, 3);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":3,"method":"agent/kill","params":{"agentId":3}}
        {"jsonrpc":"2.0","id":4,"method":"agent/spawn","params":{"name":"Other","command":"other-agent","args":["--acp"],"env":{},"cwd":"/ws","tetherDir":"/ws/.tether"}}
    "#]]
    .assert_eq(&sidecar_lines(&drain(&mut engine)));

    // Late output of the killed agent (id 3) never reaches the new session.
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"agent/exited\",\"params\":{\"agentId\":3,\"code\":null,\"signal\":15,\"killed\":true}}\n",
        4,
    );
    let actions = drain(&mut engine);
    assert!(
        !actions.iter().any(|action| matches!(action, HostAction::ShowMessage { .. })),
        "the person is not told that an agent they replaced stopped: {actions:?}"
    );
}

/// The id of the last request with `method` among the lines the engine wrote to tetherd.
fn last_request_id(actions: &[HostAction], method: &str) -> Option<u64> {
    sidecar_lines(actions)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["method"] == method)
        .filter_map(|line| line["id"].as_u64())
        .next_back()
}

fn shown_messages(actions: &[HostAction]) -> Vec<&str> {
    actions
        .iter()
        .filter_map(|action| match action {
            HostAction::ShowMessage { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A tetherd that was running and is lost (killed, crashed) is started again by the engine
/// itself, and the session reopened from its log: the person chose to run this session, and
/// asking them to press Restart after every loss only adds a step between them and their work.
/// A tetherd lost again and again is a crash that a restart does not cure, so after a few losses
/// within a few minutes the person is asked instead.
#[test]
fn tetherd_is_started_by_the_engine_and_restarted_after_a_loss() {
    let mut now = 0;
    let mut engine = HostEngine::new(config());
    assert_eq!(drain(&mut engine), [HostAction::StartSidecar], "the engine asks for tetherd once, at start");
    // A new session while tetherd is still starting does not start a second one.
    engine.handle_command(Intent::NewSession, now);
    assert!(!drain(&mut engine).contains(&HostAction::StartSidecar));

    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    for loss in 1..=MAX_AUTOMATIC_SIDECAR_RESTARTS {
        now += 1000;
        engine.handle_sidecar_closed("tetherd exited (signal SIGKILL)", now);
        let actions = drain(&mut engine);
        assert!(actions.contains(&HostAction::StartSidecar), "loss {loss}: tetherd is started again: {actions:?}");
        assert_eq!(shown_messages(&actions), Vec::<&str>::new(), "loss {loss}: nothing to do for the person");
        // The new tetherd says hello back; the engine looks for the session to go on with.
        engine.handle_sidecar_connected(now);
        let hello = last_request_id(&drain(&mut engine), "hello").unwrap();
        engine.handle_sidecar_bytes(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{hello},\"result\":{{\"tetherdVersion\":\"0.1.0\",\"pid\":9}}}}\n")
                .as_bytes(),
            now,
        );
        assert!(last_request_id(&drain(&mut engine), "session/list").is_some(), "loss {loss}: the session is reopened");
    }

    // One loss more within the window: the person is asked, with why.
    now += 1000;
    engine.handle_sidecar_closed("tetherd exited (signal SIGKILL)", now);
    let actions = drain(&mut engine);
    assert!(!actions.contains(&HostAction::StartSidecar), "a crash loop is not restarted for ever");
    assert_eq!(
        shown_messages(&actions),
        [
            "Tether lost the connection to tetherd (tetherd exited (signal SIGKILL)). tetherd was lost 4 times within 5 minutes, so Tether does not start it again by itself. Restart to go on with the session."
        ]
    );
    engine.handle_command(Intent::NewSession, now);
    assert!(drain(&mut engine).contains(&HostAction::StartSidecar), "the person can start it");

    // A tetherd that never accepted the hello (it failed to start) is not started again by
    // itself either: that is no loss of a running session, and would only fail again.
    engine.handle_sidecar_closed("tetherd did not start: no such file", now);
    let actions = drain(&mut engine);
    assert!(!actions.contains(&HostAction::StartSidecar));
    assert_eq!(
        shown_messages(&actions),
        [
            "Tether lost the connection to tetherd (tetherd did not start: no such file). Restart to go on with the session."
        ]
    );

    // Once the losses are older than the window, a loss is restarted by itself again.
    engine.handle_command(Intent::NewSession, now);
    drain(&mut engine);
    engine.handle_sidecar_connected(now);
    let hello = last_request_id(&drain(&mut engine), "hello").unwrap();
    engine.handle_sidecar_bytes(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{hello},\"result\":{{\"tetherdVersion\":\"0.1.0\",\"pid\":9}}}}\n")
            .as_bytes(),
        now,
    );
    now += SIDECAR_RESTART_WINDOW_MS;
    engine.handle_sidecar_closed("tetherd exited (signal SIGKILL)", now);
    assert!(drain(&mut engine).contains(&HostAction::StartSidecar));

    // A tetherd stopped on purpose (SIGTERM) says so before it goes: that is no loss, and it is
    // not started again behind whoever stopped it.
    engine.handle_sidecar_connected(now);
    let hello = last_request_id(&drain(&mut engine), "hello").unwrap();
    engine.handle_sidecar_bytes(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{hello},\"result\":{{\"tetherdVersion\":\"0.1.0\",\"pid\":9}}}}\n")
            .as_bytes(),
        now,
    );
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"tetherd/stopping\",\"params\":{\"reason\":\"SIGTERM\"}}\n",
        now,
    );
    engine.handle_sidecar_closed("tetherd closed the connection", now);
    let actions = drain(&mut engine);
    assert!(!actions.contains(&HostAction::StartSidecar));
    assert_eq!(
        shown_messages(&actions),
        [
            "Tether lost the connection to tetherd (tetherd closed the connection): tetherd was stopped (SIGTERM). Restart to go on with the session."
        ]
    );
}

#[test]
fn tetherd_refusing_the_token_is_shown() {
    let mut engine = HostEngine::new(config());
    engine.handle_webview(ViewEvent::Ready, 0);
    engine.handle_sidecar_connected(0);
    drain(&mut engine);
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32001,\"message\":\"wrong token\"}}\n",
        20,
    );
    let actions = drain(&mut engine);
    let shown: Vec<&String> = actions
        .iter()
        .filter_map(|action| match action {
            HostAction::ShowMessage { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(shown, ["Tether: tetherd refused the connection: wrong token."]);
    let header = actions.iter().find_map(|action| match action {
        HostAction::PostWebview { message } => match &**message {
            HostToWebview::Patch { session: Some(session), .. } => Some(session.status.clone()),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(
        header,
        Some(SessionStatus::Failed { message: "Tetherd refused the connection: wrong token".to_owned() })
    );
}

/// Streams `chunks` agent chunks one millisecond apart, in socket reads that split lines
/// anywhere, and returns what the webview was posted, with the time of each post.
fn stream_to_webview(chunks: usize) -> (Vec<(u64, HostToWebview)>, String) {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    engine.handle_webview(ViewEvent::Ready, now);
    engine.handle_webview(Intent::Prompt { text: "stream".to_owned(), attachments: Vec::new() }, now);
    // The prompt leaves once tetherd has snapshotted the workspace.
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tree\":\"t0\"}}\n", now);

    let mut stream = Vec::new();
    let mut expected = String::new();
    for n in 0..chunks {
        let text = format!("chunk {n} é ");
        expected.push_str(&text);
        let update = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
        );
        stream.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"agent/message\",\"params\":{{\"agentId\":7,\"message\":{update}}}}}\n").as_bytes(),
        );
    }
    stream.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"agent/message\",\"params\":{\"agentId\":7,\"message\":{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}}}\n");

    let mut posts = Vec::new();
    let collect = |engine: &mut HostEngine, now: u64, posts: &mut Vec<(u64, HostToWebview)>| {
        for action in drain(engine) {
            if let HostAction::PostWebview { message } = action {
                posts.push((now, *message));
            }
        }
    };
    collect(&mut engine, now, &mut posts);
    // Socket reads of 97 bytes: lines are cut at arbitrary places, including inside "é".
    for piece in stream.chunks(97) {
        now += 1;
        if engine.poll_timeout().is_some_and(|at| at <= now) {
            engine.handle_timeout(now);
        }
        engine.handle_sidecar_bytes(piece, now);
        collect(&mut engine, now, &mut posts);
    }
    // Let the last held-back patches go out.
    while let Some(at) = engine.poll_timeout() {
        now = now.max(at);
        engine.handle_timeout(now);
        collect(&mut engine, now, &mut posts);
        if engine.poll_timeout().is_none_or(|next| next <= now) {
            break;
        }
    }
    (posts, expected)
}

#[test]
fn webview_gets_every_chunk_at_most_once_per_frame() {
    let (posts, expected) = stream_to_webview(2000);

    // Fold what the webview received, as the webview does.
    let mut thread = Thread::default();
    for (_, post) in &posts {
        match post {
            HostToWebview::Snapshot { snapshot } => {
                assert_eq!(snapshot.earlier, 0, "a short thread's snapshot holds all of it");
                thread = Thread::default();
                for (index, entry) in snapshot.entries.iter().enumerate() {
                    thread.apply(&ThreadPatch::Push { index: index as u32, entry: entry.clone() });
                }
            }
            HostToWebview::Patch { thread: patches, .. } => patches.iter().for_each(|patch| thread.apply(patch)),
            HostToWebview::EarlierEntries { .. } => panic!("a short thread has no earlier entries to send"),
            HostToWebview::Mentions { .. }
            | HostToWebview::AddMention { .. }
            | HostToWebview::PromptReturned { .. } => {}
        }
    }
    let received: String = thread
        .entries()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Agent(message) => Some(
                message
                    .chunks
                    .iter()
                    .filter(|c| c.kind == ChunkKind::Text)
                    .map(|c| c.text.as_str())
                    .collect::<String>(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(received, expected, "every streamed character reaches the webview, in order");
    assert_eq!(thread.turn(), &tether_core::thread::TurnState::Ended { stop_reason: "end_turn".to_owned() });

    // Patches are batched: never two posts within one frame, so 2,000 chunks cost the webview
    // a few hundred updates at most instead of 2,000.
    let patch_times: Vec<u64> =
        posts.iter().filter(|(_, post)| matches!(post, HostToWebview::Patch { .. })).map(|(at, _)| *at).collect();
    for pair in patch_times.windows(2) {
        assert!(pair[1] >= pair[0] + FRAME_MS, "two posts within one frame: {pair:?}");
    }
    assert!(patch_times.len() < 2000 / 4, "{} posts for 2000 chunks", patch_times.len());
}

/// A reloaded webview sees a long thread's end first: the snapshot carries the last entries, and
/// the earlier ones follow a batch a frame, the most recent first, until the webview has the
/// whole thread, in place, as the engine has it.
#[test]
fn a_long_threads_snapshot_carries_its_end_and_the_rest_follows_a_batch_a_frame() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    engine.handle_webview(ViewEvent::Ready, now);
    engine.handle_webview(Intent::Prompt { text: "work".to_owned(), attachments: Vec::new() }, now);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tree\":\"t0\"}}\n", now);
    // 1,000 tool calls: 1,001 entries with the prompt.
    for n in 0..1000 {
        let call = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"tool_call","toolCallId":"c{n}","title":"Step {n}","kind":"read","status":"completed"}}}}}}"#
        );
        engine.handle_sidecar_bytes(&from_agent(7, &call), now);
    }
    // What the first webview was shown, folded as the webview folds it.
    let mut before = Thread::default();
    let post_all = |engine: &mut HostEngine, before: &mut Thread| {
        for action in drain(engine) {
            let HostAction::PostWebview { message } = action else { continue };
            match *message {
                HostToWebview::Snapshot { snapshot } => {
                    *before = Thread::default();
                    for (index, entry) in snapshot.entries.into_iter().enumerate() {
                        before.apply(&ThreadPatch::Push { index: index as u32, entry });
                    }
                }
                HostToWebview::Patch { thread: patches, .. } => patches.iter().for_each(|patch| before.apply(patch)),
                _ => {}
            }
        }
    };
    post_all(&mut engine, &mut before);
    while let Some(at) = engine.poll_timeout() {
        if at > now + 100 {
            break;
        }
        now = now.max(at);
        engine.handle_timeout(now);
        post_all(&mut engine, &mut before);
    }
    assert_eq!(before.entries().len(), 1001);

    // The window reloads: its new webview asks for the state.
    now += 1000;
    engine.handle_webview(ViewEvent::Ready, now);
    let mut thread: Vec<Option<Entry>> = Vec::new();
    let mut earlier_posts = Vec::new();
    let fold = |engine: &mut HostEngine, thread: &mut Vec<Option<Entry>>, earlier_posts: &mut Vec<u32>| {
        for action in drain(engine) {
            let HostAction::PostWebview { message } = action else { continue };
            match *message {
                HostToWebview::Snapshot { snapshot } => {
                    assert_eq!(snapshot.earlier, 801, "the snapshot leaves out all but the last 200 entries");
                    *thread = vec![None; snapshot.earlier as usize];
                    thread.extend(snapshot.entries.into_iter().map(Some));
                }
                HostToWebview::EarlierEntries { from, entries } => {
                    earlier_posts.push(from);
                    for (offset, entry) in entries.into_iter().enumerate() {
                        let slot = &mut thread[from as usize + offset];
                        assert!(slot.is_none(), "entry {} sent twice", from as usize + offset);
                        *slot = Some(entry);
                    }
                }
                _ => {}
            }
        }
    };
    fold(&mut engine, &mut thread, &mut earlier_posts);
    assert_eq!(thread.len(), 1001);
    assert!(earlier_posts.is_empty(), "nothing earlier goes with the snapshot");
    let mut frames = 0;
    while let Some(at) = engine.poll_timeout() {
        now = now.max(at);
        engine.handle_timeout(now);
        fold(&mut engine, &mut thread, &mut earlier_posts);
        frames += 1;
        assert!(frames < 10, "the earlier entries never stop coming");
    }
    assert_eq!(earlier_posts, [301, 0], "the most recent first, 500 a frame");
    let received: Vec<Entry> = thread.into_iter().map(|entry| entry.expect("every entry arrives")).collect();
    assert_eq!(received, before.entries(), "the reloaded webview has the thread the first one showed");
}

/// A line from the agent, as tetherd forwards it.
fn from_agent(agent_id: u64, message: &str) -> Vec<u8> {
    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"agent/message\",\"params\":{{\"agentId\":{agent_id},\"message\":{message}}}}}\n")
        .into_bytes()
}

fn permission_request(id: u64, tool_call: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{tool_call},"options":[{{"optionId":"once","name":"Allow","kind":"allow_once"}},{{"optionId":"always","name":"Always allow","kind":"allow_always"}},{{"optionId":"no","name":"Reject","kind":"reject_once"}}]}}}}"#
    )
}

fn saved_rules(actions: &[HostAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            HostAction::SaveWorkspaceRules { rules } => Some(serde_json::to_string(rules).unwrap()),
            _ => None,
        })
        .collect()
}

fn last_session(actions: &[HostAction]) -> Option<tether_core::webview::SessionView> {
    actions.iter().rev().find_map(|action| match action {
        HostAction::PostWebview { message } => match &**message {
            HostToWebview::Patch { session, .. } => session.clone(),
            HostToWebview::Snapshot { snapshot } => Some(snapshot.session.clone()),
            HostToWebview::EarlierEntries { .. }
            | HostToWebview::Mentions { .. }
            | HostToWebview::AddMention { .. }
            | HostToWebview::PromptReturned { .. } => None,
        },
        _ => None,
    })
}

/// Workspace rules live in the settings: the engine asks the host to write them when the person
/// changes them, keeps a rule it cannot use exactly as written (a click in the panel must not
/// delete the person's typo), and reading back what it asked to save changes nothing.
#[test]
fn workspace_rules_are_saved_without_losing_unusable_ones() {
    use tether_core::host_api::PermissionSettings;
    use tether_core::permissions::{RuleDecision, RuleScope, RuleSpec};

    let typo = serde_json::json!({ "decision": "allow", "kinds": ["exec"] });
    let fetch = serde_json::json!({ "decision": "allow", "kinds": ["fetch"] });
    let mut config = config();
    config.permissions = PermissionSettings { rules: vec![fetch.clone(), typo.clone()], ..Default::default() };
    let mut engine = HostEngine::new(config);
    engine.handle_webview(ViewEvent::Ready, 0);
    let actions = drain(&mut engine);
    let session = last_session(&actions).unwrap();
    assert_eq!(
        session.permissions.rules.iter().map(|rule| rule.description.as_str()).collect::<Vec<_>>(),
        ["Allow fetch"]
    );
    assert_eq!(
        session.permissions.rule_problems,
        [
            r#"Rule 2 in tether.permissions.rules: unknown tool kind "exec"; the kinds are read, edit, delete, move, search, execute, think, fetch, switch_mode, other"#
        ]
    );

    let mut now = 0;
    let mut engine = {
        let mut config = self::config();
        config.permissions = PermissionSettings { rules: vec![fetch.clone(), typo.clone()], ..Default::default() };
        let mut engine = HostEngine::new(config);
        engine.handle_sidecar_connected(now);
        hello_accepted(&mut engine, now);
        engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"agentId\":7,\"pid\":10}}\n", now);
        engine
    };
    now += 1;
    let spec = RuleSpec { decision: RuleDecision::Deny, kinds: vec![], pattern: None, path: Some(".env".to_owned()) };
    engine.handle_webview(Intent::AddRule { spec, scope: RuleScope::Workspace }, now);
    let saved = saved_rules(&drain(&mut engine));
    expect_test::expect![[r#"
        [
            "[{\"decision\":\"allow\",\"kinds\":[\"fetch\"]},{\"decision\":\"deny\",\"path\":\".env\"},{\"decision\":\"allow\",\"kinds\":[\"exec\"]}]",
        ]
    "#]]
    .assert_debug_eq(&saved);

    // The host writes the settings and reports them back: nothing to save again, same rule ids.
    let ids_before: Vec<u64> = engine_rules(&mut engine).iter().map(|rule| rule.id).collect();
    let rules: Vec<serde_json::Value> = serde_json::from_str(&saved[0]).unwrap();
    engine.handle_command(
        HostEvent::Configure {
            agents: serde_json::Value::Null,
            builtin_profiles: vec![],
            missing_builtins: vec![],
            default_profile: None,
            permissions: PermissionSettings { rules, ..Default::default() },
            claude_cli: Default::default(),
            mcp_servers: serde_json::Value::Null,
        },
        now,
    );
    let actions = drain(&mut engine);
    assert!(saved_rules(&actions).is_empty(), "reading back the saved rules saves nothing: {actions:?}");
    let ids_after: Vec<u64> = engine_rules(&mut engine).iter().map(|rule| rule.id).collect();
    assert_eq!(ids_before, ids_after);

    // Removing the fetch rule saves the rest, the unusable one still as written.
    engine.handle_webview(Intent::RemoveRule { id: ids_after[0] }, now);
    expect_test::expect![[r#"
        [
            "[{\"decision\":\"deny\",\"path\":\".env\"},{\"decision\":\"allow\",\"kinds\":[\"exec\"]}]",
        ]
    "#]]
    .assert_debug_eq(&saved_rules(&drain(&mut engine)));
}

/// The rules as the webview would show them now (a fresh `ready` gets a snapshot).
fn engine_rules(engine: &mut HostEngine) -> Vec<tether_core::permissions::RuleView> {
    engine.handle_webview(ViewEvent::Ready, 0);
    last_session(&drain(engine)).unwrap().permissions.rules
}

/// Every decision is sent to tetherd for the session's audit log, tagged with the agent, and the
/// log can be opened from the rules panel once tetherd has created the session folder.
/// Agent 7 asks permission for `tool_call`; the audit records tetherd is sent about it, a line each.
fn audited_request(engine: &mut HostEngine, tool_call: &str, now: u64) -> String {
    engine.handle_sidecar_bytes(&from_agent(7, &permission_request(5, tool_call)), now);
    sidecar_lines(&drain_resolving(engine, now))
        .lines()
        .filter(|line| line.contains("session/audit"))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn decisions_are_audited_through_tetherd() {
    let mut now = 0;
    let mut engine = HostEngine::new(config());
    engine.handle_sidecar_connected(now);
    hello_accepted(&mut engine, now);
    // The person picks Plan before the agent exists: recorded once tetherd says which agent it is.
    engine.handle_webview(Intent::SetMode { mode: tether_core::permissions::Mode::Plan }, now);
    drain(&mut engine);
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"agentId\":7,\"pid\":10,\"sessionDir\":\"/ws/.tether/sessions/20261122-061300-7\"}}\n",
        now,
    );
    engine.handle_sidecar_bytes(&from_agent(7, r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#), now);
    engine.handle_sidecar_bytes(&from_agent(7, r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#), now);
    engine.handle_webview(Intent::Prompt { text: "edit".to_owned(), attachments: Vec::new() }, now);
    drain(&mut engine);
    now += 1;
    let edit = r#"{"toolCallId":"t1","title":"Edit notes.md","kind":"edit","locations":[{"path":"/ws/notes.md"}]}"#;
    let audit = audited_request(&mut engine, edit, now);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","method":"session/audit","params":{"agentId":7,"record":{"event":"decided","toolCall":{"id":"t1","kind":"edit","title":"Edit notes.md","paths":[{"inside":"notes.md"}]},"option":{"id":"no","name":"Reject","kind":"reject_once"},"allowed":false,"by":{"type":"mode","mode":"plan"},"reason":"Plan mode is read only: edit tools are not allowed until the mode is switched","mode":"plan"}}}
    "#]]
    .assert_eq(&audit);

    engine.handle_webview(Intent::OpenAuditLog, now);
    assert!(drain(&mut engine).contains(&HostAction::OpenFile {
        path: "/ws/.tether/sessions/20261122-061300-7/audit.jsonl".to_owned(),
        line: None
    }));
}

/// In a multi-root workspace every folder is inside for the sessions the engine starts: Accept
/// edits approves an edit in the second folder (without the host's folders it would be outside,
/// and asked), the audit names the file with its folder first, and so does the `@` list.
#[test]
fn every_folder_of_a_multi_root_workspace_is_inside_for_its_sessions() {
    let mut now = 0;
    let folders = ["/ws", "/lib"].map(str::to_owned).to_vec();
    let mut engine = HostEngine::new(EngineConfig { workspace_folders: folders, ..config() });
    engine.handle_sidecar_connected(now);
    hello_accepted(&mut engine, now);
    engine.handle_webview(Intent::SetMode { mode: tether_core::permissions::Mode::AcceptEdits }, now);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"agentId\":7,\"pid\":10}}\n", now);
    engine.handle_sidecar_bytes(&from_agent(7, r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#), now);
    engine.handle_sidecar_bytes(&from_agent(7, r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#), now);
    engine.handle_webview(Intent::Prompt { text: "edit".to_owned(), attachments: Vec::new() }, now);
    drain(&mut engine);
    now += 1;
    let edit = r#"{"toolCallId":"t1","title":"Edit a.rs","kind":"edit","locations":[{"path":"/lib/src/a.rs"}]}"#;
    let audit = audited_request(&mut engine, edit, now);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","method":"session/audit","params":{"agentId":7,"record":{"event":"decided","toolCall":{"id":"t1","kind":"edit","title":"Edit a.rs","paths":[{"inside":"lib/src/a.rs"}]},"option":{"id":"once","name":"Allow","kind":"allow_once"},"allowed":true,"by":{"type":"mode","mode":"acceptEdits"},"mode":"acceptEdits"}}}
    "#]].assert_eq(&audit);

    engine.handle_webview(ViewEvent::Ready, now);
    engine.handle_webview(ViewEvent::FindMentions { query: String::new(), fresh: true }, now);
    drain(&mut engine);
    let files = ["/ws/README.md", "/lib/src/a.rs"].map(str::to_owned).to_vec();
    engine.handle_command(HostEvent::WorkspaceFiles { files, selection: None }, now);
    // Each workspace folder is a folder to mention too, by its name.
    assert_eq!(
        mention_posts(&drain(&mut engine)),
        [r#"mentions for "": ws/, lib/, lib/src/, lib/src/a.rs, ws/README.md"#]
    );
}

/// A path on a card opens the file at its line: a path the agent named relative to the workspace
/// is opened there, an absolute one (inside or outside the workspace) as it is.
#[test]
fn a_path_on_a_card_opens_its_file_at_the_line() {
    let mut engine = HostEngine::new(config());
    drain(&mut engine);
    let open = |engine: &mut HostEngine, path: &str, line: Option<u32>| {
        engine.handle_webview(Intent::OpenLocation { path: path.to_owned(), line }, 0);
        drain(engine).into_iter().filter(|action| matches!(action, HostAction::OpenFile { .. })).collect::<Vec<_>>()
    };
    assert_eq!(
        open(&mut engine, "/ws/src/main.rs", Some(12)),
        [HostAction::OpenFile { path: "/ws/src/main.rs".to_owned(), line: Some(12) }]
    );
    assert_eq!(
        open(&mut engine, "docs/../README.md", None),
        [HostAction::OpenFile { path: "/ws/README.md".to_owned(), line: None }]
    );
    assert_eq!(
        open(&mut engine, "/etc/hosts", Some(1)),
        [HostAction::OpenFile { path: "/etc/hosts".to_owned(), line: Some(1) }]
    );
}

/// The mode and the workspace rules (with how often they fired) carry over to a new session in
/// the same window; the session's own rules end with it.
#[test]
fn a_new_session_keeps_the_mode_and_workspace_rules() {
    use tether_core::permissions::{Mode, RuleDecision, RuleScope, RuleSpec};
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    let allow = |kinds: &[&str]| RuleSpec {
        decision: RuleDecision::Allow,
        kinds: kinds.iter().map(|kind| kind.to_string()).collect(),
        pattern: None,
        path: None,
    };
    engine.handle_webview(Intent::AddRule { spec: allow(&["fetch"]), scope: RuleScope::Workspace }, now);
    engine.handle_webview(Intent::AddRule { spec: allow(&["search"]), scope: RuleScope::Session }, now);
    engine.handle_webview(Intent::SetMode { mode: Mode::AcceptEdits }, now);
    engine.handle_webview(Intent::Prompt { text: "go".to_owned(), attachments: Vec::new() }, now);
    engine.handle_sidecar_bytes(
        &from_agent(7, &permission_request(5, r#"{"toolCallId":"t1","title":"Fetch","kind":"fetch"}"#)),
        now,
    );
    engine.handle_sidecar_bytes(
        &from_agent(7, &permission_request(6, r#"{"toolCallId":"t2","title":"Other","kind":"other"}"#)),
        now,
    );
    drain(&mut engine);

    engine.handle_webview(Intent::NewSession, now);
    // The first session goes on beside the new one: its agent runs and its question still waits.
    let lines = sidecar_lines(&drain(&mut engine));
    assert!(!lines.contains("agent/kill") && !lines.contains(r#""event":"cancelled""#), "{lines}");
    assert!(lines.contains("agent/spawn"), "{lines}");
    engine.handle_webview(ViewEvent::Ready, now);
    let session = last_session(&drain(&mut engine)).unwrap();
    assert_eq!(session.permissions.mode, Mode::AcceptEdits);
    let rules: Vec<(String, RuleScope, u32)> =
        session.permissions.rules.iter().map(|rule| (rule.description.clone(), rule.scope, rule.fired)).collect();
    assert_eq!(rules, [("Allow fetch".to_owned(), RuleScope::Workspace, 1)]);
}

/// A terminal the agent asked for, created through tetherd, with its output streaming in: the
/// agent's request reaches tetherd with the agent named, the agent gets the terminal's id, the
/// mirrored VS Code terminal gets every byte in order at most once per frame, and the card sees
/// the exit.
#[test]
fn terminal_output_reaches_the_mirror_whole_and_at_most_once_per_frame() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    engine.handle_webview(ViewEvent::Ready, now);
    // The person's Bypass mode approves the command the agent runs without asking.
    engine.handle_webview(Intent::SetMode { mode: tether_core::permissions::Mode::Bypass }, now);
    let create =
        r#"{"jsonrpc":"2.0","id":40,"method":"terminal/create","params":{"sessionId":"s1","command":"cargo test"}}"#;
    engine.handle_sidecar_bytes(&from_agent(7, create), now);
    let sent = sidecar_lines(&drain(&mut engine));
    assert!(
        sent.contains(
            r#""method":"terminal/create","params":{"agentId":7,"command":"cargo test","args":[],"shell":true"#
        ),
        "{sent}"
    );
    let request_id: u64 = {
        let line = sent.lines().find(|line| line.contains("terminal/create")).unwrap();
        serde_json::from_str::<serde_json::Value>(line).unwrap()["id"].as_u64().unwrap()
    };
    engine.handle_sidecar_bytes(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{request_id},\"result\":{{\"terminalId\":5,\"pid\":321}}}}\n").as_bytes(),
        now,
    );
    let actions = drain(&mut engine);
    assert!(
        sidecar_lines(&actions).contains(r#""message":{"jsonrpc":"2.0","id":40,"result":{"terminalId":"term-5"}}"#)
    );
    assert!(
        actions
            .iter()
            .any(|action| matches!(action, HostAction::OpenTerminal { terminal, .. } if terminal == "term-5"))
    );

    let mut expected = String::new();
    let mut writes: Vec<(u64, String)> = Vec::new();
    let mut collect = |engine: &mut HostEngine, now: u64| {
        for action in drain(engine) {
            if let HostAction::TerminalWrite { terminal, data } = action {
                assert_eq!(terminal, "term-5");
                writes.push((now, data));
            }
        }
    };
    for n in 0..3000 {
        let text = format!("test {n} ... ok ✓\r\n");
        expected.push_str(&text);
        let notification = serde_json::json!({
            "jsonrpc": "2.0", "method": "terminal/data", "params": {"terminalId": 5, "data": text}
        });
        now += 1;
        if engine.poll_timeout().is_some_and(|at| at <= now) {
            engine.handle_timeout(now);
        }
        engine.handle_sidecar_bytes(format!("{notification}\n").as_bytes(), now);
        collect(&mut engine, now);
    }
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"terminal/exited\",\"params\":{\"terminalId\":5,\"status\":{\"exitCode\":101,\"signal\":null},\"killed\":false}}\n",
        now,
    );
    collect(&mut engine, now);
    while let Some(at) = engine.poll_timeout() {
        now = now.max(at);
        engine.handle_timeout(now);
        collect(&mut engine, now);
        if engine.poll_timeout().is_none_or(|next| next <= now) {
            break;
        }
    }

    let mirrored: String = writes.iter().map(|(_, data)| data.as_str()).collect();
    assert_eq!(mirrored.strip_suffix("\r\n\u{1b}[90m[exited with code 101]\u{1b}[0m\r\n"), Some(expected.as_str()));
    for pair in writes.windows(2) {
        assert!(pair[1].0 >= pair[0].0 + FRAME_MS, "two writes within one frame: {:?} and {:?}", pair[0].0, pair[1].0);
    }
    assert!(writes.len() < 3000 / 4, "{} writes for 3000 pieces of output", writes.len());
}

/// A command printing faster than a terminal can show: each frame's write is bounded, and the
/// mirror says what it skipped instead of falling ever further behind.
#[test]
fn a_flood_of_output_is_skipped_in_the_mirror_and_said_so() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    // The person's Bypass mode approves the command the agent runs without asking.
    engine.handle_webview(Intent::SetMode { mode: tether_core::permissions::Mode::Bypass }, now);
    let create = r#"{"jsonrpc":"2.0","id":40,"method":"terminal/create","params":{"sessionId":"s1","command":"yes"}}"#;
    engine.handle_sidecar_bytes(&from_agent(7, create), now);
    let sent = sidecar_lines(&drain(&mut engine));
    let line = sent.lines().find(|line| line.contains("terminal/create")).unwrap();
    let request_id = serde_json::from_str::<serde_json::Value>(line).unwrap()["id"].as_u64().unwrap();
    engine.handle_sidecar_bytes(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{request_id},\"result\":{{\"terminalId\":6,\"pid\":1}}}}\n").as_bytes(),
        now,
    );
    drain(&mut engine);
    // 3 MB within one frame.
    let piece = "y\r\n".repeat(100_000);
    for _ in 0..10 {
        let notification = serde_json::json!({
            "jsonrpc": "2.0", "method": "terminal/data", "params": {"terminalId": 6, "data": piece}
        });
        engine.handle_sidecar_bytes(format!("{notification}\n").as_bytes(), now);
    }
    now += FRAME_MS;
    engine.handle_timeout(now);
    let writes: Vec<String> = drain(&mut engine)
        .into_iter()
        .filter_map(|action| match action {
            HostAction::TerminalWrite { data, .. } => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(writes.len(), 1);
    let write = &writes[0];
    assert!(write.len() <= 1024 * 1024 + 200, "the frame's write is bounded: {} bytes", write.len());
    assert!(write.contains("[Tether skipped 1.9 MB of output here to keep up]"), "{}", &write[..200]);
    assert!(write.ends_with("y\r\n"), "the newest output is what is shown");
}

#[test]
fn following_the_agent_opens_each_new_place_its_tool_calls_point_at_inside_the_workspace() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    let tool_call = |id: &str, path: &str, line: u32| {
        from_agent(
            7,
            &format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"tool_call","toolCallId":"{id}","title":"Read","kind":"read","status":"pending","locations":[{{"path":"{path}","line":{line}}}]}}}}}}"#
            ),
        )
    };
    let reveals = |actions: Vec<HostAction>| -> Vec<String> {
        actions
            .into_iter()
            .filter_map(|action| match action {
                HostAction::RevealLocation { path, line } => Some(format!("{path}:{line:?}")),
                _ => None,
            })
            .collect()
    };
    drain(&mut engine);
    // Off (the default): the editor is left alone.
    engine.handle_sidecar_bytes(&tool_call("t1", "/ws/src/main.rs", 10), now);
    assert_eq!(reveals(drain(&mut engine)), Vec::<String>::new());

    engine.handle_webview(Intent::SetFollowAgent { on: true }, now);
    engine.handle_sidecar_bytes(&tool_call("t2", "/ws/src/lib.rs", 3), now);
    // A place outside the workspace is not opened: the agent does not get to show just any file.
    engine.handle_sidecar_bytes(&tool_call("t3", "/etc/passwd", 1), now);
    assert_eq!(reveals(drain(&mut engine)), ["/ws/src/lib.rs:Some(3)"]);

    engine.handle_command(Intent::ToggleFollowAgent, now);
    engine.handle_sidecar_bytes(&tool_call("t4", "/ws/src/lib.rs", 9), now);
    assert_eq!(reveals(drain(&mut engine)), Vec::<String>::new(), "toggled off again");
}

/// The `@` list and "Tether: Mention Selection" as the webview receives them.
fn mention_posts(actions: &[HostAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            HostAction::ListWorkspaceFiles => Some("host: list the workspace's files".to_owned()),
            HostAction::PostWebview { message } => match &**message {
                HostToWebview::Mentions { query, items } => Some(format!(
                    "mentions for {query:?}: {}",
                    items.iter().map(|item| item.label.as_str()).collect::<Vec<_>>().join(", ")
                )),
                HostToWebview::AddMention { mention } => Some(format!("add mention {}", mention.label)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn the_at_list_asks_the_host_once_per_mention_and_ranks_each_keystroke_itself() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    engine.handle_webview(ViewEvent::Ready, now);
    drain(&mut engine);

    engine.handle_webview(ViewEvent::FindMentions { query: String::new(), fresh: true }, now);
    assert_eq!(mention_posts(&drain(&mut engine)), ["host: list the workspace's files"]);
    let selection = EditorSelection {
        path: "/ws/src/lib.rs".to_owned(),
        start_line: 3,
        end_line: 4,
        text: "fn a() {}\nfn b() {}".to_owned(),
    };
    let files = ["/ws/README.md", "/ws/src/lib.rs", "/ws/src/main.rs"].map(str::to_owned).to_vec();
    engine.handle_command(HostEvent::WorkspaceFiles { files, selection: Some(selection.clone()) }, now);
    assert_eq!(
        mention_posts(&drain(&mut engine)),
        [r#"mentions for "": src/lib.rs#L3-4, src/, README.md, src/lib.rs, src/main.rs"#]
    );
    // The next keystroke is answered at once, from the same list.
    engine.handle_webview(ViewEvent::FindMentions { query: "mai".to_owned(), fresh: false }, now);
    assert_eq!(mention_posts(&drain(&mut engine)), [r#"mentions for "mai": src/main.rs"#]);

    // "Tether: Mention Selection" while the chat view is closed: the mention waits for it.
    engine.handle_webview_gone();
    engine.handle_command(Intent::MentionSelection { selection }, now);
    assert_eq!(mention_posts(&drain(&mut engine)), Vec::<String>::new());
    engine.handle_webview(ViewEvent::Ready, now);
    assert_eq!(mention_posts(&drain(&mut engine)), ["add mention src/lib.rs#L3-4"]);
}

/// The header's status as the last snapshot or patch among `actions` had it.
fn last_status(actions: &[HostAction]) -> Option<SessionStatus> {
    actions.iter().rev().find_map(|action| match action {
        HostAction::PostWebview { message } => match &**message {
            HostToWebview::Snapshot { snapshot } => Some(snapshot.session.status.clone()),
            HostToWebview::Patch { session: Some(session), .. } => Some(session.status.clone()),
            _ => None,
        },
        _ => None,
    })
}

#[test]
fn an_untrusted_workspace_starts_nothing_until_the_person_trusts_it() {
    let mut engine = HostEngine::new(EngineConfig { workspace_trusted: false, ..config() });
    engine.handle_webview(ViewEvent::Ready, 0);
    let actions = drain(&mut engine);
    assert!(!actions.contains(&HostAction::StartSidecar), "no tetherd in an untrusted workspace: {actions:?}");
    expect_test::expect![[r#"
        Some(
            Untrusted {
                message: "This workspace is not trusted, so Tether starts nothing in it: no tetherd, no agent. Trust the workspace to start the session.",
            },
        )
    "#]]
    .assert_debug_eq(&last_status(&actions));

    // Whatever the person asks for meanwhile starts nothing either.
    engine.handle_webview(Intent::NewSession, 1);
    engine.handle_webview(Intent::SelectAgent { name: "Other".to_owned() }, 2);
    engine.handle_webview(Intent::Restart, 3);
    engine.handle_command(Intent::NewSession, 4);
    engine.handle_command(Intent::Restart, 5);
    let actions = drain(&mut engine);
    assert!(
        !actions.iter().any(|action| matches!(action, HostAction::StartSidecar | HostAction::SidecarWrite { .. })),
        "{actions:?}"
    );

    // The history is kept by tetherd, so it waits for trust too, and says so.
    engine.handle_command(Intent::ShowHistory, 6);
    assert!(drain(&mut engine).iter().any(|action| matches!(action,
        HostAction::ShowMessage { text, .. } if text == "Tether shows the history once the workspace is trusted.")));

    // The chat's button opens VS Code's trust editor.
    engine.handle_webview(Intent::ManageTrust, 6);
    assert!(drain(&mut engine).contains(&HostAction::ManageWorkspaceTrust));

    // Trusting the workspace starts tetherd without a reload, and then the session, with the
    // profile the person chose last.
    engine.handle_command(HostEvent::WorkspaceTrusted, 7);
    assert!(drain(&mut engine).contains(&HostAction::StartSidecar));
    engine.handle_sidecar_connected(8);
    hello_accepted(&mut engine, 8);
    let spawn = sidecar_lines(&drain(&mut engine));
    assert!(spawn.contains(r#""method":"agent/spawn","params":{"name":"Other","command":"other-agent""#), "{spawn}");
}

/// The messages the engine sent to agent `agent_id` through tetherd, in order.
fn sent_to_agent(actions: &[HostAction], agent_id: u64) -> Vec<serde_json::Value> {
    sidecar_lines(actions)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["method"] == "agent/send" && line["params"]["agentId"] == agent_id)
        .map(|line| line["params"]["message"].clone())
        .collect()
}

#[test]
fn a_prompt_after_the_agent_exited_starts_it_again_and_goes_once_its_session_is_ready() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    engine.handle_webview(ViewEvent::Ready, now);
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"agent/exited\",\"params\":{\"agentId\":7,\"code\":null,\"signal\":9,\"killed\":false}}\n",
        now,
    );
    drain(&mut engine);

    engine.handle_webview(Intent::Prompt { text: "Go on".to_owned(), attachments: Vec::new() }, now);
    let actions = drain(&mut engine);
    assert_eq!(shown_messages(&actions), Vec::<&str>::new(), "the prompt is not refused");
    let spawn = last_request_id(&actions, "agent/spawn").expect("the agent is started again");
    engine.handle_sidecar_bytes(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{spawn},\"result\":{{\"agentId\":8,\"pid\":101}}}}\n").as_bytes(),
        now,
    );
    let handshake = sent_to_agent(&drain(&mut engine), 8);
    assert_eq!(handshake.iter().map(|message| message["method"].clone()).collect::<Vec<_>>(), ["initialize"]);
    let initialize = handshake[0]["id"].clone();
    engine.handle_sidecar_bytes(
        &from_agent(
            8,
            &format!(r#"{{"jsonrpc":"2.0","id":{initialize},"result":{{"protocolVersion":1,"agentCapabilities":{{"loadSession":true}}}}}}"#),
        ),
        now,
    );
    let resume = sent_to_agent(&drain(&mut engine), 8);
    assert_eq!(resume[0]["method"], "session/load", "the agent's session is resumed: {resume:?}");
    assert_eq!(resume[0]["params"]["sessionId"], "s1");
    let prompts = |actions: &[HostAction]| {
        sent_to_agent(actions, 8).into_iter().filter(|message| message["method"] == "session/prompt").count()
    };
    assert_eq!(prompts(&drain(&mut engine)), 0, "the prompt waits for the session");

    let load = resume[0]["id"].clone();
    engine.handle_sidecar_bytes(&from_agent(8, &format!(r#"{{"jsonrpc":"2.0","id":{load},"result":{{}}}}"#)), now);
    // The prompt leaves once tetherd has snapshotted the workspace.
    let actions = drain(&mut engine);
    if let Some(snapshot) = last_request_id(&actions, "snapshot/take") {
        engine.handle_sidecar_bytes(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{snapshot},\"result\":{{\"tree\":\"t1\"}}}}\n").as_bytes(),
            now,
        );
    }
    let actions = [actions, drain(&mut engine)].concat();
    let prompt: Vec<serde_json::Value> =
        sent_to_agent(&actions, 8).into_iter().filter(|message| message["method"] == "session/prompt").collect();
    assert_eq!(prompt.len(), 1, "the prompt goes once: {actions:?}");
    assert_eq!(prompt[0]["params"]["prompt"][0]["text"], "Go on");
}

#[test]
fn a_session_log_tetherd_cannot_write_ends_the_turn_and_says_which_log_and_why() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    engine.handle_webview(ViewEvent::Ready, now);
    engine.handle_webview(Intent::Prompt { text: "Edit it".to_owned(), attachments: Vec::new() }, now);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tree\":\"t0\"}}\n", now);
    engine.handle_sidecar_bytes(
        &from_agent(7, &permission_request(40, r#"{"toolCallId":"edit-1","title":"Edit a.txt","kind":"edit"}"#)),
        now,
    );
    drain(&mut engine);

    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"agent/logFailed\",\"params\":{\"agentId\":7,\"path\":\"/ws/.tether/sessions/s/events.jsonl\",\"error\":\"cannot append to it: File too large (os error 27)\"}}\n",
        now,
    );
    // tetherd ends the agent after saying so; its exit adds nothing.
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"agent/exited\",\"params\":{\"agentId\":7,\"code\":null,\"signal\":15,\"killed\":false}}\n",
        now,
    );
    now += 1000;
    engine.handle_timeout(now);
    let actions = drain(&mut engine);
    let text = "Tether cannot write this session's log /ws/.tether/sessions/s/events.jsonl (cannot append to it: File too large (os error 27)), so it stopped the agent: the session does not go on unrecorded. Make room on the disk (or fix the file), then Restart or send a prompt to go on.";
    assert_eq!(shown_messages(&actions), [text], "the person is told once, with the log and the cause");
    assert_eq!(
        last_status(&actions),
        Some(SessionStatus::Exited {
            message: "The agent was stopped: the session's log cannot be written".to_owned()
        })
    );
    // The card can no longer be answered, the turn has ended, and the thread says why.
    let snapshot = webview_snapshot(&mut engine, now);
    let card = snapshot.entries.iter().find_map(|entry| match entry {
        Entry::ToolCall(call) => call.permission.clone(),
        _ => None,
    });
    assert_eq!(card.unwrap().outcome, Some(PermissionOutcome::Cancelled));
    assert_eq!(
        snapshot.turn,
        TurnState::Failed { message: "the session's log could not be written, so Tether stopped the agent".to_owned() }
    );
    let notices: Vec<&str> = snapshot
        .entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Notice(notice) => Some(notice.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices, [text]);
    assert!(snapshot.session.can_restart, "Restart is offered");
}

/// What a webview that (re)loads now is sent.
fn webview_snapshot(engine: &mut HostEngine, now: u64) -> ViewSnapshot {
    engine.handle_webview(ViewEvent::Ready, now);
    drain(engine)
        .into_iter()
        .find_map(|action| match action {
            HostAction::PostWebview { message } => match *message {
                HostToWebview::Snapshot { snapshot } => Some(snapshot),
                _ => None,
            },
            _ => None,
        })
        .expect("a snapshot for the webview")
}

#[test]
fn a_code_blocks_copy_insert_and_open_are_carried_out_by_the_host() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    engine.handle_webview(Intent::CopyText { text: "cargo test\n".to_owned() }, now + 1);
    engine.handle_webview(Intent::InsertAtCursor { text: "let x = 1;\n".to_owned() }, now + 2);
    engine.handle_webview(
        Intent::OpenInNewFile { text: "fn main() {}\n".to_owned(), language: Some("rust".to_owned()) },
        now + 3,
    );
    let actions = drain(&mut engine);
    let wanted = [
        HostAction::WriteClipboard { text: "cargo test\n".to_owned() },
        HostAction::InsertAtCursor { text: "let x = 1;\n".to_owned() },
        HostAction::OpenUntitled { content: "fn main() {}\n".to_owned(), language: Some("rust".to_owned()) },
    ];
    for action in wanted {
        assert!(actions.contains(&action), "{action:?} in {actions:?}");
    }
    // The webview's JSON, as generated TypeScript writes it.
    let open: tether_core::webview::WebviewToHost =
        serde_json::from_str(r#"{"type":"openInNewFile","text":"x","language":null}"#).unwrap();
    assert_eq!(open, Intent::OpenInNewFile { text: "x".to_owned(), language: None }.into());
}

#[test]
fn agent_settings_from_the_chat_open_vs_codes_settings_at_the_agent_profiles() {
    let mut now = 0;
    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    let intent: tether_core::webview::WebviewToHost = serde_json::from_str(r#"{"type":"openAgentSettings"}"#).unwrap();
    assert_eq!(intent, Intent::OpenAgentSettings.into());
    engine.handle_webview(Intent::OpenAgentSettings, now + 1);
    let actions = drain(&mut engine);
    assert!(
        actions.contains(&HostAction::OpenSettings { query: "tether.agents".to_owned() }),
        "settings opened at the profiles: {actions:?}"
    );
}

/// The agent picker's list as a fresh chat view would get it: each agent a line.
fn agent_picker(engine: &mut HostEngine, now: u64) -> String {
    let snapshot = webview_snapshot(engine, now);
    snapshot
        .session
        .profiles
        .iter()
        .map(|profile| format!("{} [{:?}] {}\n", profile.name, profile.state, profile.description))
        .collect()
}

/// The agent picker tells, for each agent, whether it can run on this machine, how it stands in
/// the window, and, once it has started, its name and version and what it said it can do; an
/// agent that stopped keeps what it said.
#[test]
fn the_agent_picker_says_how_each_agent_stands_and_what_it_can_do() {
    let mut engine = HostEngine::new(config());
    engine.handle_sidecar_connected(0);
    hello_accepted(&mut engine, 0);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"agentId\":7,\"pid\":100}}\n", 1);
    expect_test::expect![[r#"
        Demo [Starting] Starting
        Codex [NotInstalled] Not installed: choosing it offers to install it
        Other [NotRunning] Not running
    "#]]
    .assert_eq(&agent_picker(&mut engine, 1));

    let initialized = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,
        "agentInfo":{"name":"demo-agent","title":"Demo Agent","version":"2.0"},
        "agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true},"mcpCapabilities":{"http":true}}}}"#;
    engine.handle_sidecar_bytes(&from_agent(7, &initialized.replace('\n', "")), 2);
    engine.handle_sidecar_bytes(&from_agent(7, r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#), 2);
    expect_test::expect![[r#"
        Demo [Running] Running · Demo Agent 2.0 · images, resumes sessions, MCP over HTTP
        Codex [NotInstalled] Not installed: choosing it offers to install it
        Other [NotRunning] Not running
    "#]]
    .assert_eq(&agent_picker(&mut engine, 3));

    // Another agent whose program cannot be started: the Demo is stopped, and keeps what it said.
    engine.handle_command(Intent::SelectAgent { name: "Other".to_owned() }, 4);
    let spawn = last_request_id(&drain(&mut engine), "agent/spawn").expect("the other agent is spawned");
    let refused = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{spawn},\"error\":{{\"code\":-32010,\"message\":\"cannot start \\\"other-agent\\\": No such file or directory (os error 2)\"}}}}\n"
    );
    engine.handle_sidecar_bytes(refused.as_bytes(), 5);
    expect_test::expect![[r#"
        Demo [NotRunning] Not running · Demo Agent 2.0 · images, resumes sessions, MCP over HTTP
        Codex [NotInstalled] Not installed: choosing it offers to install it
        Other [Failed] Could not start the agent "Other": cannot start "other-agent": No such file or directory (os error 2)
    "#]]
    .assert_eq(&agent_picker(&mut engine, 6));
}
