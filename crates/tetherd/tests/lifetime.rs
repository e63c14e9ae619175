//! tetherd's own life: its socket and directory, the grace period without a host, the backlog
//! across a reconnect, and shutdown on a signal.

#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;
use support::{TOKEN, Tetherd, eventually, proc_stat, sh, tetherd_command};

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).expect("the path exists").permissions().mode() & 0o777
}

/// Runs a tetherd that is expected to refuse to start; returns its stderr.
fn refused_start(socket: &Path, token: Option<&str>) -> String {
    let mut command = tetherd_command(socket, &[]);
    command.env_remove("TETHER_TOKEN");
    if let Some(token) = token {
        command.env("TETHER_TOKEN", token);
    }
    let output = command.output().expect("tetherd runs");
    assert!(!output.status.success(), "tetherd must refuse to start");
    assert!(output.stdout.is_empty(), "no listening line when refusing");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_socket_directory_is_created_private_and_the_socket_removed_on_exit() {
    let mut tetherd = Tetherd::start(&[]);
    let dir = tetherd.socket.parent().expect("the socket has a directory").to_owned();
    assert_eq!(mode_of(&dir), 0o700);
    assert!(tetherd.socket.exists());
    tetherd.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(tetherd.wait_for_exit().success());
    assert!(!tetherd.socket.exists(), "the socket file is removed on exit");
}

#[test]
fn a_socket_directory_others_can_reach_is_refused() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let dir = temp.path().join("shared");
    std::fs::create_dir(&dir).expect("create");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let stderr = refused_start(&dir.join("tetherd.sock"), Some(TOKEN));
    assert!(stderr.contains("has mode 755"), "{stderr}");
}

#[test]
fn a_missing_token_is_refused() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let socket = temp.path().join("run/tetherd.sock");
    assert!(refused_start(&socket, None).contains("TETHER_TOKEN must be set"));
    assert!(refused_start(&socket, Some("")).contains("TETHER_TOKEN must be set"));
}

#[test]
fn a_live_socket_is_refused_and_a_stale_one_replaced() {
    let tetherd = Tetherd::start(&[]);
    let stderr = refused_start(&tetherd.socket, Some(TOKEN));
    assert!(stderr.contains("another tetherd is listening on"), "{stderr}");
    // The first tetherd is unharmed.
    tetherd.host();

    let temp = tempfile::tempdir().expect("a temporary directory");
    let dir = temp.path().join("run");
    std::fs::create_dir(&dir).expect("create");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let socket = dir.join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&socket).expect("bind"));
    assert!(socket.exists(), "a dead listener leaves its socket file behind");
    let replacement = Tetherd::start_at(temp, socket, &[]).expect("a stale socket is replaced");
    replacement.host();
}

#[test]
fn version_is_printed() {
    let output =
        std::process::Command::new(env!("CARGO_BIN_EXE_tetherd")).arg("--version").output().expect("tetherd runs");
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), format!("tetherd {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn without_a_host_tetherd_exits_after_the_grace_and_takes_its_agents_along() {
    let mut tetherd = Tetherd::start(&["--grace-seconds", "1"]);
    let mut host = tetherd.host();
    let (_, agent_pid) = host.spawn(sh("sleep 1000"));
    drop(host);
    assert!(tetherd.wait_for_exit().success(), "tetherd exits cleanly:\n{}", tetherd.stderr());
    assert_eq!(proc_stat(agent_pid), None, "the agent was killed and reaped");
    assert!(!tetherd.socket.exists(), "the socket file is removed");
}

#[test]
fn sigterm_kills_the_agents_and_exits_cleanly() {
    let mut tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let (agent_id, agent_pid) = host.spawn(sh("sleep 1000"));
    tetherd.signal(nix::sys::signal::Signal::SIGTERM);
    // The host hears first that this is a stop on purpose (it does not start tetherd again).
    let stopping = host.next_line().expect("a line before the connection closes");
    assert_eq!(
        stopping.value,
        json!({ "jsonrpc": "2.0", "method": "tetherd/stopping", "params": { "reason": "SIGTERM" } })
    );
    let exited = host.agent_event("agent/exited", agent_id);
    assert_eq!(exited.params()["killed"], json!(true), "the host hears about the kill");
    assert!(tetherd.wait_for_exit().success());
    assert_eq!(proc_stat(agent_pid), None, "the agent was killed and reaped");
    assert!(!tetherd.socket.exists());
}

#[test]
fn output_produced_while_no_host_is_connected_reaches_the_next_host() {
    let tetherd = Tetherd::start(&["--grace-seconds", "60"]);
    let go = tetherd.dir.path().join("go");
    let printed = tetherd.dir.path().join("printed");
    let script = format!(
        r#"while [ ! -e '{go}' ]; do sleep 0.02; done
           i=0; while [ $i -lt 500 ]; do echo "{{\"n\":$i}}"; i=$((i+1)); done
           echo 'and a warning' >&2
           touch '{printed}'; exec sleep 1000"#,
        go = go.display(),
        printed = printed.display(),
    );
    let mut first = tetherd.host();
    let (agent_id, _) = first.spawn(sh(&script));
    drop(first);

    // The "reload": nobody is connected while the agent talks.
    std::fs::write(&go, "").expect("create the go file");
    eventually("the agent to print everything", || printed.exists());
    let mut second = tetherd.host();
    for n in 0..500 {
        let message = second.agent_event("agent/message", agent_id);
        assert_eq!(message.params()["message"], json!({ "n": n }));
    }
    let warning = second.agent_event("agent/stderr", agent_id);
    assert_eq!(warning.params()["line"], json!("and a warning"));
    // The agent kept running through the reload and can still be controlled.
    second.call("agent/kill", json!({ "agentId": agent_id })).expect("kill after the reconnect");
}

#[test]
fn the_log_can_go_to_a_file_too() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let log = temp.path().join("tetherd.log");
    std::fs::write(&log, "earlier run\n").expect("write");
    let log_arg = log.to_str().expect("UTF-8 temp path").to_owned();
    let tetherd = Tetherd::start(&["--log-file", &log_arg]);
    tetherd.host();
    eventually("the hello to be logged", || {
        std::fs::read_to_string(&log).is_ok_and(|text| text.starts_with("earlier run\n") && text.contains("hello"))
    });
}

#[test]
fn a_tetherd_killed_with_sigkill_leaves_no_orphans_after_the_next_start() {
    use std::os::unix::process::CommandExt;
    use support::live_group_members;

    let mut first = Tetherd::start(&[]);
    let mut host = first.host();
    let (agent_id, agent_pid) = host.spawn(sh("sleep 1000"));
    let terminal = host
        .call(
            "terminal/create",
            json!({ "agentId": agent_id, "cwd": first.dir.path(), "command": "sh", "args": ["-c", "trap '' HUP; sleep 1000"] }),
        )
        .expect("terminal/create succeeds");
    // The command ignores the hangup its PTY gives it when tetherd dies, as a daemon would.
    let terminal_pid = terminal["pid"].as_u64().and_then(|pid| u32::try_from(pid).ok()).expect("pid");
    // A process tetherd never started, listed under its real pid with another start time: what a
    // pid reused after the recorded process ended looks like. It must survive the cleanup.
    let mut bystander = std::process::Command::new("sleep").arg("1000").process_group(0).spawn().expect("sleep");
    let state_file = first.socket.with_file_name("tetherd.sock.children");
    let mut recorded = std::fs::read_to_string(&state_file).expect("tetherd records its process groups");
    recorded.push_str(&format!("{} 1\n", bystander.id()));
    std::fs::write(&state_file, recorded).expect("write the state file");

    // Another tetherd starting beside a live one leaves the live one's children alone (it reads
    // the state files before it announces itself, so its log already says what it killed).
    let neighbour = Tetherd::start_at(
        tempfile::tempdir().expect("a temporary directory"),
        first.socket.with_file_name("neighbour.sock"),
        &[],
    )
    .expect("a neighbouring tetherd starts");
    assert!(!neighbour.stderr().contains("killing a process group"), "{}", neighbour.stderr());
    drop(neighbour);
    assert!(!live_group_members(agent_pid).is_empty(), "a live tetherd's agent is left running");

    first.signal(nix::sys::signal::Signal::SIGKILL);
    first.wait_for_exit();
    assert!(!live_group_members(agent_pid).is_empty(), "SIGKILL leaves the agent running");
    assert!(!live_group_members(terminal_pid).is_empty(), "SIGKILL leaves the terminal command running");

    // The host names each tetherd's socket afresh; the next one only shares the directory.
    let dir = std::mem::replace(&mut first.dir, tempfile::tempdir().expect("a temporary directory"));
    let _second =
        Tetherd::start_at(dir, first.socket.with_file_name("another.sock"), &[]).expect("a second tetherd starts");
    eventually("the orphaned agent is killed", || live_group_members(agent_pid).is_empty());
    eventually("the orphaned terminal command is killed", || live_group_members(terminal_pid).is_empty());
    assert!(matches!(bystander.try_wait(), Ok(None)), "a process whose start time does not match is left alone");
    bystander.kill().expect("kill the bystander");
    bystander.wait().expect("reap the bystander");
}
