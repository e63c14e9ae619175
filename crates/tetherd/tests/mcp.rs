//! Tether's built-in MCP server through the real tetherd, driven as an agent drives it: rmcp's
//! client over the stdio bridge (`tetherd mcp`, started from the offer in `agent/spawn`'s
//! answer) and over Streamable HTTP with the bearer token; the test itself is the VS Code host
//! that answers the editor's questions.

#![cfg(unix)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::expect;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use support::{Client, Tetherd};

/// A tetherd, a host connection, a workspace with a few files in a git repository, and an agent
/// (`cat`, which waits for ever) whose MCP offer the tests use.
struct Setup {
    tetherd: Tetherd,
    host: Client,
    agent_id: u64,
    offer: Value,
    workspace: PathBuf,
    session_dir: PathBuf,
}

fn git(workspace: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(workspace)
        .output()
        .expect("git runs");
    assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

fn setup() -> Setup {
    let tetherd = Tetherd::start(&[]);
    let workspace = tetherd.dir.path().join("workspace");
    let write = |path: &str, text: &str| {
        let path = workspace.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write("src/greet.ts", "export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n");
    write("src/main.ts", "import { greet } from './greet';\n\nconsole.log(greet('world'));\n");
    write("README.md", "# Greeter\n\nSays hello to the world.\n");
    write(".gitignore", "dist/\n.tether/\n");
    git(&workspace, &["init", "-q"]);
    git(&workspace, &["add", "."]);
    git(&workspace, &["commit", "-q", "-m", "first"]);
    // Built output, ignored: no tool should ever show it.
    write("dist/greet.js", "function greet(name) { return 'Hello, ' + name; }\n");
    write(
        "src/main.ts",
        "import { greet } from './greet';\n\nconsole.log(greet('world'));\nconsole.log(greet('you'));\n",
    );
    write("NOTES.txt", "greet everyone\n");

    let mut host = tetherd.host();
    let params = json!({
        "name": "cat",
        "command": "cat",
        "cwd": workspace,
        "tetherDir": workspace.join(".tether"),
        "workspaceFolders": [workspace],
    });
    let result = host.call("agent/spawn", params).expect("agent/spawn succeeds");
    let agent_id = result["agentId"].as_u64().expect("agentId");
    let offer = result["mcp"].clone();
    let session_dir = PathBuf::from(result["sessionDir"].as_str().expect("a session folder"));
    Setup { tetherd, host, agent_id, offer, workspace, session_dir }
}

/// `tetherd mcp` as the agent would start it from the offer, with `token` instead of the
/// offered one when given.
fn bridge_command(offer: &Value, token: Option<&str>) -> tokio::process::Command {
    let stdio = &offer["stdio"];
    let mut command = tokio::process::Command::new(stdio["command"].as_str().expect("a command"));
    for arg in stdio["args"].as_array().expect("args") {
        command.arg(arg.as_str().expect("a string"));
    }
    for (name, value) in stdio["env"].as_object().expect("env") {
        command.env(name, value.as_str().expect("a string"));
    }
    if let Some(token) = token {
        command.env("TETHER_MCP_TOKEN", token);
    }
    command
}

async fn connect_stdio(offer: &Value) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(bridge_command(offer, None)).expect("the bridge starts");
    ().serve(transport).await.expect("the MCP handshake succeeds over the bridge")
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().expect("arguments are an object").clone();
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|error| panic!("{tool} could not be called: {error}"))
}

/// The text of a tool result, and whether it is an error.
fn text_of(result: &CallToolResult) -> (String, bool) {
    let text = result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.clone()).collect();
    (text, result.is_error == Some(true))
}

fn json_of(result: &CallToolResult) -> Value {
    let (text, is_error) = text_of(result);
    assert!(!is_error, "the tool failed: {text}");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("the result is JSON ({error}): {text}"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime")
}

#[test]
fn the_stdio_bridge_serves_the_workspace_tools_confined_and_audited() {
    let mut setup = setup();
    let runtime = runtime();
    let client = runtime.block_on(connect_stdio(&setup.offer));

    let mut tools: Vec<String> = runtime
        .block_on(client.list_all_tools())
        .expect("tools/list")
        .into_iter()
        .map(|tool| tool.name.into())
        .collect();
    tools.sort();
    expect![[r#"
        get_diagnostics get_open_editors get_selection git_status list_files lsp_definition lsp_document_symbols lsp_hover lsp_references lsp_workspace_symbols open_file search_text"#]]
    .assert_eq(&tools.join(" "));

    // Search: the source files and the notes, never the ignored build output.
    let found = json_of(&runtime.block_on(call(&client, "search_text", json!({ "pattern": "greet\\(" }))));
    let places: Vec<String> = found["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|found| {
            format!(
                "{}:{} {}",
                found["path"].as_str().unwrap_or("?"),
                found["line"],
                found["text"].as_str().unwrap_or("?")
            )
        })
        .collect();
    expect![[r#"
        src/greet.ts:1 export function greet(name: string): string {
        src/main.ts:3 console.log(greet('world'));
        src/main.ts:4 console.log(greet('you'));"#]]
    .assert_eq(&places.join("\n"));

    // Hidden files are skipped as ripgrep skips them (and `.git` and `.tether` always are).
    let listed = json_of(&runtime.block_on(call(&client, "list_files", json!({}))));
    expect![[r#"["NOTES.txt","README.md","src/greet.ts","src/main.ts"]"#]].assert_eq(&listed["files"].to_string());

    let status = json_of(&runtime.block_on(call(&client, "git_status", json!({}))));
    assert_eq!(status["branch"], json!("main"), "{status}");
    assert_eq!(status["unstaged"][0]["path"], json!("src/main.ts"), "{status}");
    assert_eq!(status["untracked"], json!(["NOTES.txt"]), "{status}");

    // Confinement: a path outside the workspace is refused, in words the model can act on.
    let outside = runtime.block_on(call(&client, "search_text", json!({ "pattern": "root", "path": "/etc" })));
    let (text, is_error) = text_of(&outside);
    assert!(is_error, "searching /etc must fail: {text}");
    assert!(text.contains("outside the workspace"), "{text}");
    let escape = runtime.block_on(call(&client, "list_files", json!({ "path": "../" })));
    assert!(text_of(&escape).1, "listing the parent folder must fail: {}", text_of(&escape).0);

    runtime.block_on(client.cancel()).expect("the client closes");

    // Every call reached the hosts for the chat, and the session's audit log, in order.
    let mut reported = Vec::new();
    for _ in 0..5 {
        let line = setup.host.wait_for("mcp/toolCalled", |line| line.method() == Some("mcp/toolCalled"));
        let params = line.params();
        assert_eq!(params["agentId"], json!(setup.agent_id));
        reported.push(format!(
            "{} ok={} {}",
            params["tool"].as_str().unwrap_or("?"),
            params["ok"],
            params["summary"].as_str().unwrap_or("?")
        ));
    }
    expect![[r#"
        search_text ok=true 3 matches in 2 of 4 files searched
        list_files ok=true 4 files
        git_status ok=true main: 0 staged, 1 unstaged, 1 untracked
        search_text ok=false `/etc` is outside the workspace folders; only files under `WORKSPACE` can be searched
        list_files ok=false `../` is outside the workspace folders; only files under `WORKSPACE` can be searched"#]]
    .assert_eq(&reported.join("\n").replace(&setup.workspace.to_string_lossy().into_owned(), "WORKSPACE"));
    let audit = std::fs::read_to_string(setup.session_dir.join("audit.jsonl")).expect("the audit log");
    let audited: Vec<Value> = audit.lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    assert_eq!(audited.len(), 5, "{audit}");
    assert!(audited.iter().all(|record| record["event"] == json!("mcpToolCalled") && record["durationMs"].is_u64()));
    assert_eq!(audited[0]["arguments"]["pattern"], json!("greet\\("));
    assert_eq!(audited[3]["ok"], json!(false));
}

#[test]
fn editor_tools_ask_the_window_and_answer_in_the_agents_terms() {
    let setup = setup();
    let Setup { tetherd: _tetherd, mut host, agent_id, offer, workspace, .. } = setup;
    let runtime = runtime();
    let client = runtime.block_on(connect_stdio(&offer));

    // The test is the window: it answers the one question the tool asks.
    let greet = workspace.join("src/greet.ts").canonicalize().expect("the file exists");
    let window = std::thread::spawn(move || {
        let question = host.wait_for("editor/query", |line| line.method() == Some("editor/query"));
        let answer = json!({
            "kind": "locations",
            "locations": [
                { "path": greet, "range": { "start": { "line": 0, "character": 16 }, "end": { "line": 0, "character": 21 } } },
                { "path": "/usr/lib/node_modules/typescript/lib/lib.d.ts", "range": { "start": { "line": 9, "character": 0 }, "end": { "line": 9, "character": 5 } } },
            ],
        });
        let id = question.value["id"].clone();
        host.send_raw(format!("{}\n", json!({ "jsonrpc": "2.0", "id": id, "result": answer })).as_bytes());
        (question.params().clone(), host)
    });
    let result = runtime.block_on(call(
        &client,
        "lsp_definition",
        json!({ "path": "src/main.ts", "line": 3, "symbol": "greet" }),
    ));
    let (question, _host) = window.join().expect("the window thread");

    // VS Code got its own terms: an absolute path, 0-based line, UTF-16 character of `greet`.
    assert_eq!(question["agentId"], json!(agent_id));
    let main = workspace.join("src/main.ts").canonicalize().expect("the file exists");
    assert_eq!(
        question["query"],
        json!({ "kind": "definition", "path": main, "position": { "line": 2, "character": 12 } })
    );
    // The agent gets its own: a relative path, 1-based positions and the line's text; a place
    // outside the workspace by its path alone.
    let definitions = json_of(&result);
    expect![[r#"[{"start":{"line":1,"column":17},"end":{"line":1,"column":22},"path":"src/greet.ts","text":"export function greet(name: string): string {"},{"start":{"line":10,"column":1},"end":{"line":10,"column":6},"path":"/usr/lib/node_modules/typescript/lib/lib.d.ts","outsideWorkspace":true}]"#]]
    .assert_eq(&definitions["definitions"].to_string());

    // A symbol that is not on the line is the agent's mistake, said plainly, with the line.
    let wrong =
        runtime.block_on(call(&client, "lsp_hover", json!({ "path": "src/main.ts", "line": 1, "symbol": "nothere" })));
    let (text, is_error) = text_of(&wrong);
    assert!(is_error);
    expect!["`nothere` is not on line 1 of src/main.ts, which reads: import { greet } from './greet';"]
        .assert_eq(&text);
}

#[test]
fn a_token_opens_nothing_once_its_agent_is_gone_and_a_wrong_one_never() {
    let mut setup = setup();
    let runtime = runtime();

    let refused = runtime
        .block_on(async { bridge_command(&setup.offer, Some("not-the-token")).output().await })
        .expect("the bridge runs");
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("tetherd refused the MCP bridge: unauthorized"), "{stderr}");

    setup.host.call("agent/kill", json!({ "agentId": setup.agent_id })).expect("the agent is killed");
    let late = runtime.block_on(async { bridge_command(&setup.offer, None).output().await }).expect("the bridge runs");
    assert!(!late.status.success());
    let stderr = String::from_utf8_lossy(&late.stderr);
    assert!(stderr.contains("its agent may have exited"), "{stderr}");

    let url = setup.offer["http"]["url"].as_str().expect("an HTTP offer").to_owned();
    let authorization = setup.offer["http"]["headers"]["Authorization"].as_str().expect("a header").to_owned();
    let status = runtime.block_on(async {
        reqwest::Client::new()
            .post(&url)
            .header("Authorization", authorization)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(initialize_body())
            .send()
            .await
            .expect("the request is answered")
            .status()
    });
    assert_eq!(status.as_u16(), 401);
}

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } },
    })
    .to_string()
}

#[test]
fn streamable_http_serves_the_bearer_of_the_token_from_loopback_only() {
    let setup = setup();
    let runtime = runtime();
    let url = setup.offer["http"]["url"].as_str().expect("an HTTP offer").to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let authorization = setup.offer["http"]["headers"]["Authorization"].as_str().expect("a header").to_owned();
    let token = authorization.strip_prefix("Bearer ").expect("a bearer token").to_owned();

    let client = runtime.block_on(async {
        let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(token.clone());
        ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("the MCP handshake over HTTP")
    });
    let tools = runtime.block_on(client.list_all_tools()).expect("tools/list over HTTP");
    assert_eq!(tools.len(), 12, "the same tools as over stdio");
    let listed = json_of(&runtime.block_on(call(&client, "list_files", json!({ "globs": ["*.md"] }))));
    assert_eq!(listed["files"], json!(["README.md"]));
    runtime.block_on(client.cancel()).expect("the client closes");

    let post = |headers: Vec<(&'static str, String)>| {
        let url = url.clone();
        runtime.block_on(async move {
            let mut request = reqwest::Client::new()
                .post(&url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .body(initialize_body());
            for (name, value) in headers {
                request = request.header(name, value);
            }
            let response = request.send().await.expect("the request is answered");
            (response.status().as_u16(), response.text().await.unwrap_or_default())
        })
    };
    let (status, body) = post(vec![]);
    assert_eq!((status, body.as_str()), (401, "unauthorized: a bearer token is required"));
    let (status, _) = post(vec![("Authorization", "Bearer 0000".to_owned())]);
    assert_eq!(status, 401);
    // A web page the person has open cannot use the token even if it learnt it: browsers send
    // an Origin, and a DNS-rebound name arrives as a foreign Host.
    let (status, body) =
        post(vec![("Authorization", authorization.clone()), ("Origin", "http://evil.example".to_owned())]);
    assert_eq!(status, 403, "{body}");
    let (status, body) = post(vec![("Authorization", authorization.clone()), ("Host", "evil.example".to_owned())]);
    assert_eq!(status, 403, "{body}");
    // The same request with none of that is served.
    let (status, body) = post(vec![("Authorization", authorization)]);
    assert_eq!(status, 200, "{body}");
}

/// The whole way, as in the product: a real agent process (the scripted test agent) is given
/// Tether's server in `session/new`, starts `tetherd mcp` itself, calls a tool, and says what it
/// got.
#[test]
fn an_agent_given_the_offer_in_session_new_reaches_the_tools_itself() {
    let tetherd = Tetherd::start(&[]);
    let workspace = tetherd.dir.path().join("workspace");
    std::fs::create_dir_all(workspace.join("src")).expect("mkdir");
    std::fs::write(workspace.join("src/lib.rs"), "pub fn answer() -> u32 {\n    42\n}\n").expect("write");
    let scenario = tetherd.dir.path().join("mcp.toml");
    std::fs::write(
        &scenario,
        r#"
description = "Calls Tether's MCP server"
[[prompt]]
steps = [
  { report_mcp_servers = true },
  { mcp_call = { server = "tether", tool = "search_text", arguments = { pattern = "42" } } },
  { mcp_call = { server = "tether", tool = "list_files", arguments = { path = "/" } } },
  { stop = "end_turn" },
]
"#,
    )
    .expect("write the scenario");
    let mut host = tetherd.host();
    let agent = support::tether_test_agent();
    let params = json!({
        "name": "test agent",
        "command": agent,
        "args": ["--scenario", scenario],
        "cwd": workspace,
        "tetherDir": workspace.join(".tether"),
    });
    let result = host.call("agent/spawn", params).expect("agent/spawn succeeds");
    let agent_id = result["agentId"].as_u64().expect("agentId");
    let stdio = &result["mcp"]["stdio"];
    let env: Vec<Value> = stdio["env"]
        .as_object()
        .expect("env")
        .iter()
        .map(|(name, value)| json!({ "name": name, "value": value }))
        .collect();
    let tether = json!({ "name": "tether", "command": stdio["command"], "args": stdio["args"], "env": env });

    let send = |host: &mut Client, message: Value| host.send_to_agent(agent_id, &message.to_string());
    send(&mut host, json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": 1 } }));
    send(
        &mut host,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "session/new", "params": { "cwd": workspace, "mcpServers": [tether] } }),
    );
    let created = host.wait_for("session/new's answer", |line| {
        line.method() == Some("agent/message") && line.params()["message"]["id"] == json!(1)
    });
    let session_id = created.params()["message"]["result"]["sessionId"].clone();
    let prompt = json!({ "sessionId": session_id, "prompt": [{ "type": "text", "text": "go" }] });
    send(&mut host, json!({ "jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt }));

    let mut said = String::new();
    loop {
        let line = host.wait_for("the agent's turn", |line| line.method() == Some("agent/message"));
        let message = &line.params()["message"];
        if message["id"] == json!(2) {
            break;
        }
        if let Some(text) = message.pointer("/params/update/content/text").and_then(Value::as_str) {
            said.push_str(text);
        }
    }
    let said = said.replace(&stdio["command"].as_str().unwrap_or("?").to_owned(), "TETHERD");
    expect![[r#"
        MCP servers: tether (stdio: TETHERD).

        MCP search_text answered:

        ```json
        {"matches":[{"path":"src/lib.rs","line":2,"text":"    42"}],"filesSearched":1}
        ```

        MCP list_files failed: `/` is outside the workspace folders; only files under `WORKSPACE` can be searched

    "#]]
    .assert_eq(&said.replace(&workspace.canonicalize().expect("exists").to_string_lossy().into_owned(), "WORKSPACE"));
}

/// Every editor tool, answered by the test as the window: what VS Code is asked (absolute paths,
/// 0-based positions), and what the agent reads back (workspace-relative paths, 1-based lines,
/// nothing of what lies outside the workspace, lists cut where asked).
#[test]
fn each_editor_tool_asks_vs_code_its_own_question_and_trims_the_answer() {
    let setup = setup();
    let Setup { tetherd: _tetherd, mut host, offer, workspace, .. } = setup;
    let runtime = runtime();
    let client = runtime.block_on(connect_stdio(&offer));
    let root = workspace.canonicalize().expect("the workspace exists");
    let inside = |relative: &str| root.join(relative).to_string_lossy().into_owned();
    let range = |line: u32, start: u32, end: u32| json!({ "start": { "line": line, "character": start }, "end": { "line": line, "character": end } });
    let cases = vec![
        (
            "get_open_editors",
            json!({}),
            json!({ "kind": "openEditors", "editors": [
                { "path": inside("src/main.ts"), "languageId": "typescript", "dirty": true, "active": true },
                { "path": "/home/someone/.bashrc", "languageId": "shellscript", "dirty": false, "active": false },
            ] }),
        ),
        (
            "get_diagnostics",
            json!({ "maxResults": 1 }),
            json!({ "kind": "diagnostics", "diagnostics": [
                { "path": inside("src/main.ts"), "range": range(3, 6, 11), "severity": "warning", "message": "unused", "source": "ts", "code": "6133" },
                { "path": inside("src/greet.ts"), "range": range(0, 0, 6), "severity": "error", "message": "broken", "source": "ts", "code": null },
                { "path": "/usr/lib/x.d.ts", "range": range(0, 0, 1), "severity": "error", "message": "elsewhere", "source": null, "code": null },
            ] }),
        ),
        (
            "lsp_references",
            json!({ "path": "src/greet.ts", "line": 1, "symbol": "greet" }),
            json!({ "kind": "locations", "locations": [
                { "path": inside("src/main.ts"), "range": range(2, 12, 17) },
                { "path": inside("src/main.ts"), "range": range(3, 12, 17) },
            ] }),
        ),
        (
            "lsp_hover",
            json!({ "path": "src/greet.ts", "line": 1, "column": 17 }),
            json!({ "kind": "hover", "contents": ["```typescript\nfunction greet(name: string): string\n```", ""] }),
        ),
        (
            "lsp_document_symbols",
            json!({ "path": "src/greet.ts" }),
            json!({ "kind": "symbols", "symbols": [
                { "name": "greet", "kind": "Function", "path": inside("src/greet.ts"), "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 2, "character": 1 } }, "container": null },
            ] }),
        ),
        (
            "lsp_workspace_symbols",
            json!({ "query": "gre" }),
            json!({ "kind": "symbols", "symbols": [
                { "name": "greet", "kind": "Function", "path": inside("src/greet.ts"), "range": range(0, 16, 21), "container": null },
                { "name": "greetAll", "kind": "Function", "path": "/usr/lib/node_modules/x/index.d.ts", "range": range(4, 0, 8), "container": null },
            ] }),
        ),
        (
            "open_file",
            json!({ "path": "README.md", "line": 3 }),
            json!({ "kind": "opened", "path": inside("README.md") }),
        ),
    ];
    let mut transcript = String::new();
    for (tool, arguments, answer) in cases {
        let window = std::thread::spawn(move || {
            let question = host.wait_for("editor/query", |line| line.method() == Some("editor/query"));
            let id = question.value["id"].clone();
            host.send_raw(format!("{}\n", json!({ "jsonrpc": "2.0", "id": id, "result": answer })).as_bytes());
            (question.params().clone(), host)
        });
        let result = runtime.block_on(call(&client, tool, arguments));
        let (question, returned) = window.join().expect("the window thread");
        host = returned;
        let asked = serde_json::to_string(&question["query"])
            .expect("JSON")
            .replace(&root.to_string_lossy().into_owned(), "WS");
        let (text, is_error) = text_of(&result);
        assert!(!is_error, "{tool}: {text}");
        transcript.push_str(&format!("{tool}\n  asked {asked} (max {})\n  got   {text}\n", question["maxResults"]));
    }
    expect![[r#"
        get_open_editors
          asked {"kind":"openEditors"} (max 500)
          got   {"editors":[{"path":"src/main.ts","language":"typescript","unsaved":true,"active":true}],"outsideWorkspace":1}
        get_diagnostics
          asked {"kind":"diagnostics","path":null} (max 1)
          got   {"problems":[{"path":"src/greet.ts","start":{"line":1,"column":1},"end":{"line":1,"column":7},"severity":"error","message":"broken","source":"ts","code":null}],"truncated":"only the first 1 problems are listed"}
        lsp_references
          asked {"kind":"references","path":"WS/src/greet.ts","position":{"line":0,"character":16}} (max 100)
          got   {"references":[{"start":{"line":3,"column":13},"end":{"line":3,"column":18},"path":"src/main.ts","text":"console.log(greet('world'));"},{"start":{"line":4,"column":13},"end":{"line":4,"column":18},"path":"src/main.ts","text":"console.log(greet('you'));"}]}
        lsp_hover
          asked {"kind":"hover","path":"WS/src/greet.ts","position":{"line":0,"character":16}} (max 20)
          got   {"hover":["```typescript\nfunction greet(name: string): string\n```"]}
        lsp_document_symbols
          asked {"kind":"documentSymbols","path":"WS/src/greet.ts"} (max 500)
          got   {"symbols":[{"name":"greet","kind":"Function","startLine":1,"endLine":3,"container":null}]}
        lsp_workspace_symbols
          asked {"kind":"workspaceSymbols","query":"gre"} (max 100)
          got   {"symbols":[{"name":"greet","kind":"Function","path":"src/greet.ts","line":1,"container":null}]}
        open_file
          asked {"kind":"openFile","path":"WS/README.md","line":2,"focus":false} (max 1)
          got   {"opened":"README.md","line":3}
    "#]].assert_eq(&transcript);
}

/// The limits as an agent meets them: a list cut at the count it asked for says so, and a window
/// that never answers costs the agent the editor timeout, then an error it can read (tetherd is
/// started with a short one; the default is 15 s).
#[test]
fn a_result_is_cut_where_asked_and_a_silent_window_times_out_with_a_sentence() {
    let tetherd = Tetherd::start(&["--editor-timeout-ms", "300"]);
    let workspace = tetherd.dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    std::fs::write(workspace.join("a.txt"), "one\ntwo\nthree\n").expect("write");
    let mut host = tetherd.host();
    let params = json!({ "name": "cat", "command": "cat", "cwd": workspace });
    let offer = host.call("agent/spawn", params).expect("agent/spawn succeeds")["mcp"].clone();
    let runtime = runtime();
    let client = runtime.block_on(connect_stdio(&offer));

    let cut = json_of(&runtime.block_on(call(&client, "search_text", json!({ "pattern": "o", "maxResults": 1 }))));
    assert_eq!(cut["matches"].as_array().map(Vec::len), Some(1), "{cut}");
    assert_eq!(cut["truncated"], json!({ "reason": "results", "limit": 1 }));

    // The host reads the question and never answers it.
    let silent = runtime.block_on(call(&client, "get_selection", json!({})));
    let (text, is_error) = text_of(&silent);
    assert!(is_error);
    expect!["VS Code did not answer within 0.3 seconds (is the window open?)"].assert_eq(&text);
    host.wait_for("the question the window did not answer", |line| line.method() == Some("editor/query"));
}
