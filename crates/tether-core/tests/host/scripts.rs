//! Data-driven tests of the host engine (one VS Code window), like `tests/acp.rs` is for the ACP
//! client.
//!
//! Each `test_data/host/*.script` is a window-level scenario: lines starting with `>` are inputs
//! (what tetherd or an agent sent, what the chat view or VS Code did, the time), the rest are
//! comments. The test runs the script through a [`HostEngine`] and writes, after each input,
//! every line the engine wrote to tetherd (`tetherd<`), every message it posted to the chat view
//! (`webview`), and every other action (`host`), into `<name>.out` (checked with `expect_file!`;
//! run with `UPDATE_EXPECT=1` to accept a change). A reader can follow the whole window in one file.
//!
//! Inputs:
//! - `> connected` / `> closed <reason>`: the socket to tetherd opened / closed
//! - `> tetherd <json line>`: a line from tetherd (an answer, or a notification)
//! - `> agent <agent id>[@<seq>] <json line>`: a line an agent wrote, as tetherd forwards it
//!   (`agent/message`, numbered `seq` in its session's log when given)
//! - `| <json line>`: a line of a session's `events.jsonl`; `> read <request id>` answers that
//!   `session/read` request with the lines given since the last `read`, to the end of the log
//! - `> file <read id> <json string>`: the host read the whole of a file (`readFile`)
//! - `> webview <json WebviewToHost>`: the chat view posted this
//! - `> command <json HostCommand>`: a VS Code command or event
//! - `> time <ms>`: the clock moves to `ms` (or to a UTC time written as a log writes it, which
//!   the engine's clock is on the scale of); deadlines and the frame's posts are due
//! - `> folders <path> ...`: the workspace's other folders, beside `/ws` (wherever it is written)
//! - `> default-agent <name>`: the agent the window starts with, `tether.defaultAgent` (wherever
//!   it is written)
//!
//! The host's part of resolving paths (`resolvePaths`) is played at once, as a host with no
//! symbolic links would (each path leads to itself), and written as `resolved` lines.

use std::fmt::Write;
use std::path::Path;

use tether_core::host::HostEngine;
use tether_core::host_api::{
    EngineConfig, FileReadOutcome, FileReadReply, HostAction, HostCommand, HostEvent, ResolvedPath,
};
use tether_core::webview::WebviewToHost;

// Every script runs in this window: workspace `/ws`, the Demo agent built in, and one agent of
// the person's own, "Other".
use super::config;

fn run_script(script: &str) -> String {
    // `> folders` names the workspace's other folders; the engine is made with them.
    let folders = script
        .lines()
        .find_map(|line| line.strip_prefix("> folders "))
        .map_or_else(Vec::new, |folders| std::iter::once("/ws").chain(folders.split(' ')).map(str::to_owned).collect());
    // `> default-agent` names the agent the window starts with (`tether.defaultAgent`).
    let default_profile = script.lines().find_map(|line| line.strip_prefix("> default-agent ")).map(str::to_owned);
    let mut engine = HostEngine::new(EngineConfig { workspace_folders: folders, default_profile, ..config() });
    let mut now = 0;
    let mut out = String::new();
    let mut log = String::new();
    // What the engine asked for when it was created (tetherd, before anything else).
    write_actions(&mut engine, &mut out, now);
    for line in script.lines() {
        if let Some(log_line) = line.strip_prefix("| ") {
            log.push_str(log_line);
            log.push('\n');
            continue;
        }
        let Some(input) = line.strip_prefix("> ") else {
            continue;
        };
        writeln!(out, "> {input}").unwrap();
        let (verb, rest) = input.split_once(' ').unwrap_or((input, ""));
        match verb {
            "folders" | "default-agent" => {}
            "connected" => engine.handle_sidecar_connected(now),
            "closed" => engine.handle_sidecar_closed(rest, now),
            "tetherd" => engine.handle_sidecar_bytes(format!("{rest}\n").as_bytes(), now),
            "agent" => {
                let (agent, message) = rest.split_once(' ').expect("agent <agent id>[@<seq>] <json line>");
                let params = match agent.split_once('@') {
                    Some((agent_id, seq)) => serde_json::json!({
                        "agentId": agent_id.parse::<u64>().unwrap(),
                        "seq": seq.parse::<u64>().unwrap(),
                        "message": serde_json::from_str::<serde_json::Value>(message).unwrap(),
                    }),
                    None => serde_json::json!({
                        "agentId": agent.parse::<u64>().unwrap(),
                        "message": serde_json::from_str::<serde_json::Value>(message).unwrap(),
                    }),
                };
                let line = serde_json::json!({"jsonrpc": "2.0", "method": "agent/message", "params": params});
                engine.handle_sidecar_bytes(format!("{line}\n").as_bytes(), now);
            }
            "read" => {
                let id: u64 = rest.parse().expect("read <request id>");
                let text = std::mem::take(&mut log);
                let next = text.len();
                let line = serde_json::json!({
                    "jsonrpc": "2.0", "id": id, "result": {"text": text, "next": next, "eof": true},
                });
                engine.handle_sidecar_bytes(format!("{line}\n").as_bytes(), now);
            }
            "file" => {
                let (read, text) = rest.split_once(' ').expect("file <read id> <json string>");
                let text: String = serde_json::from_str(text).unwrap();
                let outcome = FileReadOutcome::Data { eof: true, from_editor: false };
                engine.handle_file_read(FileReadReply { read: read.parse().unwrap(), outcome }, text.as_bytes(), now);
            }
            "webview" => engine.handle_webview(serde_json::from_str::<WebviewToHost>(rest).unwrap(), now),
            "command" => engine.handle_command(serde_json::from_str::<HostCommand>(rest).unwrap(), now),
            "time" => {
                now = rest
                    .parse()
                    .ok()
                    .or_else(|| tether_core::session_log::time_ms(rest))
                    .expect("time <ms> or time <UTC time>");
                engine.handle_timeout(now);
            }
            other => panic!("unknown input {other:?}"),
        }
        write_actions(&mut engine, &mut out, now);
    }
    out
}

/// Writes every action the engine has for the host, one a line, answering `resolvePaths` as it
/// goes.
fn write_actions(engine: &mut HostEngine, out: &mut String, now: u64) {
    while let Some(action) = engine.poll_action() {
        match action {
            HostAction::SidecarWrite { data } => {
                for line in data.lines() {
                    writeln!(out, "  tetherd< {line}").unwrap();
                }
            }
            HostAction::PostWebview { message } => {
                writeln!(out, "  webview {}", serde_json::to_string(&message).unwrap()).unwrap();
            }
            HostAction::ResolvePaths { resolve, roots, paths } => {
                writeln!(
                    out,
                    "  host {}",
                    serde_json::to_string(&HostAction::ResolvePaths {
                        resolve,
                        roots: roots.clone(),
                        paths: paths.clone()
                    })
                    .unwrap()
                )
                .unwrap();
                let found = |path: String| ResolvedPath::Found { path };
                let paths: Vec<ResolvedPath> = paths.into_iter().map(found).collect();
                writeln!(out, "  resolved {resolve}: {}", serde_json::to_string(&paths).unwrap()).unwrap();
                let roots = roots.into_iter().map(found).collect();
                engine.handle_command(HostEvent::PathsResolved { resolve, roots, paths }, now);
            }
            action => writeln!(out, "  host {}", serde_json::to_string(&action).unwrap()).unwrap(),
        }
    }
}

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/host");
    let script = std::fs::read_to_string(dir.join(format!("{name}.script"))).unwrap();
    expect_test::expect_file![dir.join(format!("{name}.out"))].assert_eq(&run_script(&script));
}

#[test]
fn switching_agents_stops_the_first_and_starts_the_other_in_a_new_session() {
    check("agent-switch");
}

#[test]
fn a_window_reload_takes_the_running_agent_over_and_shows_its_thread_again() {
    check("reload");
}

#[test]
fn an_agent_that_needs_a_sign_in_asks_the_person_and_goes_on_once_signed_in() {
    check("sign-in");
}

#[test]
fn a_claude_cli_session_runs_one_cli_per_turn_and_resumes_it() {
    check("claude-cli");
}

#[test]
fn tethers_mcp_server_is_offered_and_the_editors_answers_go_back_to_tetherd() {
    check("mcp");
}

#[test]
fn after_a_window_reload_the_header_has_the_agents_model_picker_and_options_again() {
    check("reload-model");
}

#[test]
fn two_sessions_run_at_once_and_each_input_reaches_its_own() {
    check("two-sessions");
}

#[test]
fn an_agent_that_cannot_be_started_offers_restart_with_the_command_as_mended() {
    check("start-failed");
}

#[test]
fn a_built_in_agent_that_is_not_installed_is_offered_for_install_not_restart() {
    check("not-installed");
}

#[test]
fn new_session_starts_one_with_the_agent_of_the_session_shown() {
    check("new-session-agent");
}

#[test]
fn after_a_window_reload_the_agent_waiting_for_a_command_gets_its_exit() {
    check("reload-command");
}

#[test]
fn a_file_mentioned_by_hand_is_attached_as_a_picked_one_is() {
    check("mention-typed");
}

#[test]
fn tetherd_lost_too_often_is_left_to_the_person_and_the_header_says_why() {
    check("tetherd-lost-often");
}

#[test]
fn a_prompt_tetherd_took_with_it_goes_back_to_the_text_box() {
    check("prompt-lost-with-tetherd");
}

#[test]
fn a_prompt_that_reached_the_log_before_tetherd_went_stays_in_the_thread() {
    check("prompt-logged-before-tetherd-lost");
}

#[test]
fn a_write_left_waiting_by_an_agent_that_is_gone_ends_its_turn_after_a_reload() {
    check("reload-write-agent-gone");
}

#[test]
fn after_a_window_reload_a_command_the_agent_runs_itself_gets_its_terminal_back() {
    check("reload-agent-command");
}

#[test]
fn after_a_window_reload_a_question_still_waiting_is_counted_on_the_badge_and_tab() {
    check("reload-waiting");
}

#[test]
fn a_window_reload_gives_the_tabs_back_in_their_order_and_shows_the_one_last_used() {
    check("reload-order");
}

#[test]
fn a_window_reload_reopens_every_session_whose_agent_runs() {
    check("reload-two");
}

#[test]
fn a_conversation_restored_to_a_checkpoint_forks_the_agents_session_or_seeds_a_new_one() {
    check("restore-conversation");
}

#[test]
fn two_sessions_writing_one_file_review_the_second_against_the_first_ones_result() {
    check("two-writers");
}

#[test]
fn a_change_another_session_made_is_not_listed_as_this_ones_agents() {
    check("other-session-edit");
}

#[test]
fn the_agents_own_edits_are_found_in_every_folder_of_a_multi_root_workspace() {
    check("multi-root");
}

#[test]
fn folders_added_or_removed_while_the_window_is_open_count_at_once() {
    check("folders-changed");
}

#[test]
fn a_prompt_sent_while_the_session_starts_waits_for_it_and_one_that_cannot_go_comes_back() {
    check("prompt-while-starting");
}

#[test]
fn a_session_renamed_in_the_history_is_named_so_on_its_tab_and_an_open_one_is_not_deleted() {
    check("rename-open");
}

#[test]
fn a_prompt_sent_while_tetherds_sessions_are_reopened_waits_for_its_own_session() {
    check("prompt-while-reopening");
}

#[test]
fn a_chat_drawn_afresh_counts_a_silent_commands_time_from_its_start() {
    check("terminal-time-snapshot");
}

#[test]
fn a_slow_start_carries_what_the_agent_said_last_and_show_log_opens_the_log() {
    check("slow-start");
}
