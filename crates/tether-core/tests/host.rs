//! Tests of the host engine against a scripted tetherd: the handshake the host performs, and what
//! the webview receives while an agent streams.

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use tether_core::host::{FRAME_MS, HostEngine};
use tether_core::host_api::{AgentProfile, EngineConfig, HostAction, HostCommand};
use tether_core::thread::{ChunkKind, Entry, Thread, ThreadPatch};
use tether_core::webview::{HostToWebview, SessionStatus, WebviewToHost};

fn config() -> EngineConfig {
    EngineConfig {
        token: "secret-token".to_owned(),
        client_name: "Tether".to_owned(),
        client_version: "0.1.0".to_owned(),
        workspace_root: "/ws".to_owned(),
        demo_agent_command: Some("/ext/bin/tether-test-agent".to_owned()),
        profiles: vec![AgentProfile {
            name: "Other".to_owned(),
            command: "other-agent".to_owned(),
            args: vec!["--acp".to_owned()],
            env: Default::default(),
            cwd: None,
        }],
        default_profile: None,
    }
}

/// Everything the engine asked for, rendered one action a line.
fn drain(engine: &mut HostEngine) -> Vec<HostAction> {
    std::iter::from_fn(|| engine.poll_action()).collect()
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

/// An engine that has said hello, spawned the Demo agent (id 7) and created session `s1`.
fn ready_engine(now: &mut u64) -> HostEngine {
    let mut engine = HostEngine::new(config());
    engine.handle_sidecar_connected(*now);
    engine.handle_sidecar_bytes(br#"{"jsonrpc":"2.0","id":0,"result":{"tetherdVersion":"0.1.0","pid":99}}"#, *now);
    engine.handle_sidecar_bytes(b"\n", *now);
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"agentId\":7,\"pid\":100}}\n", *now);
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

    // tetherd accepts: the default profile (the built-in Demo) is spawned in the workspace.
    engine.handle_sidecar_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"tetherdVersion\":\"0.1.0\",\"pid\":9}}\n",
        1,
    );
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":1,"method":"agent/spawn","params":{"name":"Demo","command":"/ext/bin/tether-test-agent","args":["--scenario","demo"],"env":{},"cwd":"/ws"}}
    "#]]
    .assert_eq(&sidecar_lines(&drain(&mut engine)));

    // The agent is up: initialize goes to it embedded in agent/send, byte for byte.
    engine.handle_sidecar_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"agentId\":3,\"pid\":10}}\n", 2);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","method":"agent/send","params":{"agentId":3,"message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}},"clientInfo":{"name":"Tether","version":"0.1.0"}}}}}
    "#]]
    .assert_eq(&sidecar_lines(&drain(&mut engine)));

    // Selecting another agent kills this one and spawns the other.
    engine.handle_command(HostCommand::SelectAgent { name: "Other".to_owned() }, 3);
    expect_test::expect![[r#"
        {"jsonrpc":"2.0","id":2,"method":"agent/kill","params":{"agentId":3}}
        {"jsonrpc":"2.0","id":3,"method":"agent/spawn","params":{"name":"Other","command":"other-agent","args":["--acp"],"env":{},"cwd":"/ws"}}
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

#[test]
fn tetherd_is_started_by_the_engine_and_restarted_after_a_loss() {
    let mut now = 0;
    let mut engine = HostEngine::new(config());
    assert_eq!(drain(&mut engine), [HostAction::StartSidecar], "the engine asks for tetherd once, at start");
    // A new session while tetherd is still starting does not start a second one.
    engine.handle_command(HostCommand::NewSession, now);
    assert!(!drain(&mut engine).contains(&HostAction::StartSidecar));

    let mut engine = ready_engine(&mut now);
    drain(&mut engine);
    engine.handle_sidecar_closed("tetherd was killed", now);
    let actions = drain(&mut engine);
    assert!(!actions.contains(&HostAction::StartSidecar), "not restarted behind the person's back");
    assert!(actions.iter().any(|action| matches!(action,
        HostAction::ShowMessage { text, .. } if text == "Tether lost the connection to tetherd (tetherd was killed). Start a new session to start it again.")));
    engine.handle_command(HostCommand::NewSession, now);
    assert!(drain(&mut engine).contains(&HostAction::StartSidecar));
}

#[test]
fn tetherd_refusing_the_token_is_shown() {
    let mut engine = HostEngine::new(config());
    engine.handle_webview(WebviewToHost::Ready, 0);
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
        HostAction::PostWebview { message: HostToWebview::Patch { session: Some(session), .. } } => {
            Some(session.status.clone())
        }
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
    engine.handle_webview(WebviewToHost::Ready, now);
    engine.handle_webview(WebviewToHost::Prompt { text: "stream".to_owned() }, now);

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
                posts.push((now, message));
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
                thread = Thread::default();
                for (index, entry) in snapshot.entries.iter().enumerate() {
                    thread.apply(&ThreadPatch::Push { index: index as u32, entry: entry.clone() });
                }
            }
            HostToWebview::Patch { thread: patches, .. } => patches.iter().for_each(|patch| thread.apply(patch)),
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
