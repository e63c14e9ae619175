//! Data-driven tests of permission rules and modes: `test_data/permissions/matching.txt` lists
//! cases (rules, a mode, requests as an agent sends them), and the verdict on each request is
//! written beside it in `matching.out` (`UPDATE_EXPECT=1` accepts a change). How requests waiting
//! in a live session are answered is covered by `tests/acp.rs` (rules.script, modes.script).

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::fmt::Write;
use std::path::Path;

use agent_client_protocol_schema::v1 as acp;
use tether_core::acp::tool_call_view;
use tether_core::permissions::{
    Mode, PermissionPolicy, RequestFacts, RuleDecision, RuleOrigin, RuleScope, RuleSpec, Verdict,
};
use tether_core::workspace_path::{PathStyle, resolve_path};

/// The workspace of every case but those after a `workspace` line.
const WORKSPACE: &str = "/ws";

fn facts(json: &str) -> RequestFacts {
    facts_in(WORKSPACE, json)
}

/// The facts of the tool call `json` in the workspace at `root`.
fn facts_in(root: &str, json: &str) -> RequestFacts {
    let mut value: serde_json::Value = serde_json::from_str(json).unwrap();
    value["toolCallId"] = serde_json::Value::String("t".to_owned());
    let call: acp::ToolCall = serde_json::from_value(value).unwrap();
    RequestFacts::of_tool_call(&tool_call_view(call), |path| resolve_path(root, path))
}

fn run(cases: &str) -> String {
    let mut out = String::new();
    let mut policy = PermissionPolicy::new(Mode::Ask, 1);
    let mut root = WORKSPACE.to_owned();
    for line in cases.lines() {
        if let Some(title) = line.strip_prefix("== ") {
            policy = PermissionPolicy::new(Mode::Ask, 1);
            root = WORKSPACE.to_owned();
            writeln!(out, "\n== {title}").unwrap();
            continue;
        }
        let Some((verb, rest)) = line.split_once(' ') else { continue };
        match verb {
            // The session's workspace, as `AcpClient::new` sets its policy up for it.
            "workspace" => {
                root = rest.to_owned();
                policy = policy.fold_case(PathStyle::of(&root).folds_case());
                writeln!(out, "workspace {rest}").unwrap();
            }
            "mode" => {
                policy.set_mode(serde_json::from_value(serde_json::Value::String(rest.to_owned())).unwrap());
                writeln!(out, "mode {rest}").unwrap();
            }
            "rule" => {
                let (scope, spec) = rest.split_once(' ').unwrap();
                let scope = if scope == "session" { RuleScope::Session } else { RuleScope::Workspace };
                let rule = policy.add_rule(serde_json::from_str(spec).unwrap(), scope, RuleOrigin::Added).unwrap();
                writeln!(out, "rule #{} {} ({scope:?})", rule.id, rule.description).unwrap();
            }
            "request" => {
                let verdict = match policy.decide(&facts_in(&root, rest)) {
                    Verdict::Ask => "ask".to_owned(),
                    Verdict::Allow { by } => format!("allow, by {by}"),
                    Verdict::Reject { by, reason } => format!("reject, by {by}: {reason}"),
                };
                writeln!(out, "{rest}\n  => {verdict}").unwrap();
            }
            "always" => {
                let (decision, request) = rest.split_once(' ').unwrap();
                let decision = if decision == "allow" { RuleDecision::Allow } else { RuleDecision::Deny };
                let spec = RuleSpec::from_choice(decision, &facts(request));
                writeln!(out, "{request}\n  => {} {}", spec.describe(), serde_json::to_string(&spec).unwrap()).unwrap();
            }
            _ => {}
        }
    }
    out
}

#[test]
fn rule_matching_and_modes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/permissions");
    let cases = std::fs::read_to_string(dir.join("matching.txt")).unwrap();
    expect_test::expect_file![dir.join("matching.out")].assert_eq(&run(&cases));
}

/// An "always" rule made from a command matches that command again and nothing longer, even when
/// the command contains glob characters.
#[test]
fn a_rule_from_a_choice_matches_the_request_it_came_from() {
    for request in [
        r#"{"title":"Run","kind":"execute","rawInput":{"command":"ls *.rs [a]? \\x"}}"#,
        r#"{"title":"Edit","kind":"edit","locations":[{"path":"/ws/a/b.rs"}]}"#,
        r#"{"title":"Weird * title ?","kind":"other"}"#,
    ] {
        let facts = facts(request);
        let spec = RuleSpec::from_choice(RuleDecision::Allow, &facts);
        assert!(spec.matches(&facts, false), "{spec:?} does not match {request}");
    }
    let spec = RuleSpec::from_choice(
        RuleDecision::Allow,
        &facts(r#"{"title":"Run","kind":"execute","rawInput":{"command":"ls *"}}"#),
    );
    assert!(!spec.matches(&facts(r#"{"title":"Run","kind":"execute","rawInput":{"command":"ls x"}}"#), false));
}

/// Rules in the settings are checked with a message a person can act on.
#[test]
fn settings_rules_are_validated() {
    let problems: Vec<String> = [
        r#"{"decision":"allow"}"#,
        r#"{"decision":"allow","kinds":["exec"]}"#,
        r#"{"decision":"maybe","kinds":["read"]}"#,
        r#"{"decision":"allow","path":"../outside/**"}"#,
        r#"{"decision":"allow","pattern":"  "}"#,
        r#"{"decision":"allow","kinds":["read"],"scope":"session"}"#,
        r#"["allow"]"#,
    ]
    .iter()
    .map(|json| match RuleSpec::from_setting(&serde_json::from_str(json).unwrap()) {
        Ok(spec) => format!("ok: {}", spec.describe()),
        Err(error) => error.to_string(),
    })
    .collect();
    expect_test::expect![[r#"
        [
            "a rule needs at least one condition (kinds, pattern or path)",
            "unknown tool kind \"exec\"; the kinds are read, edit, delete, move, search, execute, think, fetch, switch_mode, other",
            "unknown variant `maybe`, expected `allow` or `deny`",
            "the path \"../outside/**\" is not a workspace-relative glob",
            "the pattern is empty",
            "unknown field `scope`, expected one of `decision`, `kinds`, `pattern`, `path`",
            "a rule is an object such as {\"decision\": \"allow\", \"kinds\": [\"read\"]}",
        ]
    "#]].assert_debug_eq(&problems);
}

/// The command line the card shows and rule patterns match, read from the agent's raw input the
/// ways real agents send it.
#[test]
fn the_command_line_is_read_from_raw_input() {
    let cases = [
        r#"{"command":"npm test"}"#,
        r#"{"command":["npm","run","build"]}"#,
        r#"{"command":["bash","-lc","npm test && npm run lint"]}"#,
        r#"{"command":["/bin/zsh","-c","make"]}"#,
        r#"{"command":["python","-c","print(1)"]}"#,
        r#"{"cmd":"cargo test"}"#,
        r#"{"commandLine":"ls -la"}"#,
        r#"{"command":["npm",42],"cmd":"fallback"}"#,
        r#"{"command":[]}"#,
        r#"{"path":"notes.md"}"#,
        r#""npm test""#,
    ];
    let read: Vec<String> = cases
        .iter()
        .map(|json| {
            format!("{json} => {:?}", tether_core::permissions::command_of(&serde_json::from_str(json).unwrap()))
        })
        .collect();
    expect_test::expect![[r#"
        [
            "{\"command\":\"npm test\"} => Some(\"npm test\")",
            "{\"command\":[\"npm\",\"run\",\"build\"]} => Some(\"npm run build\")",
            "{\"command\":[\"bash\",\"-lc\",\"npm test && npm run lint\"]} => Some(\"npm test && npm run lint\")",
            "{\"command\":[\"/bin/zsh\",\"-c\",\"make\"]} => Some(\"make\")",
            "{\"command\":[\"python\",\"-c\",\"print(1)\"]} => Some(\"python -c print(1)\")",
            "{\"cmd\":\"cargo test\"} => Some(\"cargo test\")",
            "{\"commandLine\":\"ls -la\"} => Some(\"ls -la\")",
            "{\"command\":[\"npm\",42],\"cmd\":\"fallback\"} => Some(\"fallback\")",
            "{\"command\":[]} => None",
            "{\"path\":\"notes.md\"} => None",
            "\"npm test\" => None",
        ]
    "#]]
    .assert_debug_eq(&read);
}

/// Matching takes time proportional to the text times the pattern, whatever the stars: a command
/// line comes from the agent and a workspace rule from the repository, and a matcher that
/// backtracks would take longer than the age of the universe here (the fuzzer found a pattern of
/// eleven stars that stalled it). This test asserts the answers; before, it never finished.
#[test]
fn thirty_stars_against_a_100_kb_command_line_finish_with_the_right_answer() {
    let command = "a".repeat(100 * 1024);
    let stars = "*a".repeat(30);
    assert!(!tether_core::permissions::text_glob(&format!("{stars}b"), &command));
    assert!(tether_core::permissions::text_glob(&stars, &command));
    let path = format!("{}x", "ab/".repeat(30_000));
    assert!(!tether_core::permissions::path_glob(&format!("{}c", "**/*a*".repeat(30)), &path));
    assert!(tether_core::permissions::path_glob("**/*b/x", &path));
}
