//! Data-driven tests of the fold that rebuilds a session's thread from its event log.
//!
//! Each `test_data/replay/<name>.log` is an event log as tetherd writes it (see
//! `tether_core::session_log`); the test folds it with `AcpClient::replay` and writes the thread
//! the person would see again into `<name>.out`: one line per entry, then the turn, the
//! permission requests still waiting and what could not be read (checked with `expect_file!`;
//! `UPDATE_EXPECT=1` accepts a change).

// Test helpers unwrap freely: a panic here is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::fmt::Write;
use std::path::Path;

use tether_core::acp::{AcpClient, ClientInfo};
use tether_core::permissions::{Mode, PermissionPolicy};
use tether_core::session_log::read_log;

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/replay");
    let log = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap();
    let read = read_log(&log);
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let (client, problems) = AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), &read);
    let mut out = String::new();
    for entry in client.thread().entries() {
        writeln!(out, "{}", serde_json::to_string(entry).unwrap()).unwrap();
    }
    for terminal in client.thread().terminals() {
        writeln!(out, "terminal: {}", serde_json::to_string(terminal).unwrap()).unwrap();
    }
    writeln!(out, "turn: {}", serde_json::to_string(client.thread().turn()).unwrap()).unwrap();
    writeln!(out, "permissions waiting: {}", client.permissions_waiting()).unwrap();
    writeln!(out, "session: {:?}", client.session_id()).unwrap();
    writeln!(out, "cut tail: {}", read.cut_tail).unwrap();
    for problem in problems {
        writeln!(out, "problem: {problem}").unwrap();
    }
    expect_test::expect_file![dir.join(format!("{name}.out"))].assert_eq(&out);
}

#[test]
fn a_whole_session_replays_to_the_thread_the_person_saw() {
    check("turn");
}

#[test]
fn a_log_cut_in_the_middle_of_a_line_replays_up_to_the_last_whole_line() {
    check("cut-mid-line");
}

#[test]
fn a_permission_request_pending_when_the_log_ended_is_still_waiting() {
    check("pending-permission");
}

#[test]
fn an_agent_that_died_mid_turn_shows_the_failed_turn_and_its_stderr() {
    check("crash");
}

#[test]
fn a_cancelled_turn_shows_the_cancelled_request_and_the_stop_reason() {
    check("cancelled");
}

#[test]
fn an_agent_restarted_in_the_same_session_continues_the_thread_without_repeating_its_replay() {
    // The second agent's `session/load` replays the conversation; the thread has it already.
    check("restarted");
}

#[test]
fn an_agent_that_could_not_resume_leaves_the_notice_that_says_so() {
    check("resume-fallback");
}

#[test]
fn a_line_the_agent_printed_that_was_skipped_is_said_again_with_its_start() {
    // tetherd logs no such line, only Tether's notice of it: read back, the notice keeps what
    // the line began with and why it was skipped, as the live one folded it away.
    check("skipped-line");
}

#[test]
fn a_turn_cut_off_by_a_lost_tetherd_reads_back_as_the_live_thread_said_it() {
    // tetherd went with the agent and logged no exit; the engine recorded why before the next
    // agent started. Without the record the replay could only guess ("no longer running when
    // Tether came back"), so the thread read differently after a reload than before it.
    check("tetherd-lost");
}

#[test]
fn commands_tether_ran_are_rebuilt_from_what_the_agent_read_of_them() {
    // term-3 ran and the agent read its output and exit; term-4 was still running when the log
    // ended; toolu_1 is a command the agent ran itself. Each card keeps the time its command
    // took by the log's clock (3 s from tetherd's answer to the exit the agent was told, 4.5 s
    // for the agent's own); before, a reopened card said 0.0 s.
    check("terminal");
}

#[test]
fn an_agent_stopped_by_tether_is_said_to_have_stopped_without_its_signal() {
    // tetherd's grace ran out with VS Code closed mid-turn (or a new session replaced the agent):
    // the turn was stopped, not failed (before, it read "Failed"), the notice is information, not
    // an error, and the signal that did it is not news.
    check("stopped");
}

#[test]
fn an_agent_stopped_by_tether_while_idle_leaves_no_notice() {
    // Its tab was closed between turns: nothing was interrupted. Before, each close left a
    // "The agent was stopped." notice, and a session reopened again and again gathered them.
    check("stopped-idle");
}

#[test]
fn a_conversation_restored_from_a_checkpoint_replays_with_its_copied_turns_and_a_forked_session() {
    // The copied turns come from their audit record, the notice once, and the person's message
    // without the block only the agent reads.
    check("restored-fork");
}

#[test]
fn a_restore_to_a_checkpoint_replays_as_it_ended_and_can_no_longer_be_undone() {
    // Its card and its changes come from its records, the last one winning; its changes are not
    // tracked after a reload, so Undo is not offered.
    check("restore");
}
