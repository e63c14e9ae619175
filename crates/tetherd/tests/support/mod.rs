//! Test support: starts the real tetherd binary on a socket in a temporary directory, and talks
//! to it as a host would (NDJSON JSON-RPC over the Unix socket), with every wait bounded by a
//! generous timeout so that a broken tetherd fails a test instead of hanging it.

#![allow(dead_code, reason = "each test binary uses a different part of this module")]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tether_core::acp::{AcpClient, ClientInfo};
use tether_core::permissions::{Mode, PermissionPolicy};
use tether_core::session_log::{LogEvent, ReadLog};

/// How long any single wait may take before the test fails. Generous: the machine is shared.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// The token every test tetherd is started with.
pub const TOKEN: &str = "test-token-0123456789";

/// A running tetherd.
pub struct Tetherd {
    child: Child,
    pub pid: u32,
    pub socket: PathBuf,
    pub dir: tempfile::TempDir,
    stderr: Arc<Mutex<String>>,
}

impl Tetherd {
    /// Starts tetherd with `args` after `serve --socket <dir>/run/tetherd.sock`, and waits for
    /// its listening line.
    pub fn start(args: &[&str]) -> Tetherd {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let socket = dir.path().join("run/tetherd.sock");
        Self::start_at(dir, socket, args).unwrap_or_else(|stderr| panic!("tetherd did not start:\n{stderr}"))
    }

    /// Starts tetherd on `socket`; `Err` carries its stderr when it exits instead of listening.
    pub fn start_at(dir: tempfile::TempDir, socket: PathBuf, args: &[&str]) -> Result<Tetherd, String> {
        let command = tetherd_command(&socket, args);
        Self::start_command(dir, socket, command)
    }

    /// Starts tetherd on `socket` from a shell that runs `setup` first (a `ulimit`, a `trap`)
    /// and then becomes tetherd (`exec`), so that tetherd runs with what `setup` set.
    pub fn start_after(dir: tempfile::TempDir, socket: PathBuf, args: &[&str], setup: &str) -> Tetherd {
        let tetherd = tetherd_command(&socket, args);
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{setup}\nexec \"$0\" \"$@\""))
            .arg(tetherd.get_program())
            .args(tetherd.get_args())
            .env_remove("TETHER_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Self::start_command(dir, socket, command).unwrap_or_else(|stderr| panic!("tetherd did not start:\n{stderr}"))
    }

    fn start_command(
        dir: tempfile::TempDir,
        socket: PathBuf,
        mut command: std::process::Command,
    ) -> Result<Tetherd, String> {
        let mut child = command.env("TETHER_TOKEN", TOKEN).spawn().expect("the tetherd binary starts");
        let pid = child.id();
        let stderr = capture(child.stderr.take().expect("stderr is piped"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (line_sender, line_receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            // A failed read leaves the line empty, which the test reports as "did not listen".
            let _read = BufReader::new(stdout).read_line(&mut line);
            // The test stops listening only once it has given up on tetherd.
            let _gone = line_sender.send(line);
        });
        let line = line_receiver.recv_timeout(TIMEOUT).expect("tetherd prints its listening line in time");
        if line.is_empty() {
            let status = wait_for_exit(&mut child);
            return Err(format!("{status}\n{}", stderr.lock().expect("stderr lock")));
        }
        let announced: Value = serde_json::from_str(&line).expect("the listening line is JSON");
        assert_eq!(announced, json!({ "listening": socket.to_str(), "pid": pid }), "the listening line");
        Ok(Tetherd { child, pid, socket, dir, stderr })
    }

    /// Connects without saying hello.
    pub fn connect(&self) -> Client {
        Client::connect(&self.socket)
    }

    /// Connects and says hello with the right token.
    pub fn host(&self) -> Client {
        let mut client = self.connect();
        let result = client.call("hello", hello_params(TOKEN)).expect("hello is accepted");
        assert_eq!(result["pid"], json!(self.pid));
        client
    }

    /// What tetherd has logged so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Waits for tetherd to exit by itself.
    pub fn wait_for_exit(&mut self) -> ExitStatus {
        wait_for_exit(&mut self.child)
    }

    /// Sends `signal` to tetherd itself.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(pid(self.pid), signal).expect("tetherd can be signalled");
    }
}

impl Drop for Tetherd {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // SIGTERM lets tetherd kill its agents; SIGKILL only if it does not manage to.
            let _already_gone = nix::sys::signal::kill(pid(self.pid), nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + TIMEOUT;
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            // Errors here mean the process is already gone and reaped, which is the goal.
            let _already_gone = self.child.kill();
            let _reaped = self.child.wait();
        }
    }
}

/// The command line of a tetherd on `socket`, with stdout and stderr piped.
pub fn tetherd_command(socket: &Path, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tetherd"));
    command
        .arg("serve")
        .arg("--socket")
        .arg(socket)
        .args(args)
        .env_remove("TETHER_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Collects a pipe's text in the background.
fn capture(pipe: impl std::io::Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let sink = text.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut text = sink.lock().expect("capture lock");
            text.push_str(&line);
            text.push('\n');
        }
    });
    text
}

pub fn wait_for_exit(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait works") {
            return status;
        }
        assert!(Instant::now() < deadline, "tetherd did not exit within {TIMEOUT:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn hello_params(token: &str) -> Value {
    json!({ "token": token, "protocolVersion": 1, "client": "tetherd tests" })
}

/// `agent/spawn` params for `sh -c <script>` in the current directory.
pub fn sh(script: &str) -> Value {
    json!({ "name": "test agent", "command": "sh", "args": ["-c", script], "cwd": "." })
}

fn pid(pid: u32) -> nix::unistd::Pid {
    nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pids fit in i32"))
}

/// One line from tetherd, kept as received (for byte-exact checks) and parsed.
#[derive(Debug, Clone)]
pub struct Line {
    pub raw: String,
    pub value: Value,
}

impl Line {
    pub fn method(&self) -> Option<&str> {
        self.value["method"].as_str()
    }

    pub fn params(&self) -> &Value {
        &self.value["params"]
    }

    /// The embedded agent message of an `agent/message`, exactly as it appears on the wire.
    pub fn raw_agent_message(&self) -> String {
        #[derive(Deserialize)]
        struct Notification<'a> {
            #[serde(borrow)]
            params: Params<'a>,
        }
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(borrow)]
            message: &'a RawValue,
        }
        let notification: Notification<'_> = serde_json::from_str(&self.raw).expect("an agent/message notification");
        notification.params.message.get().to_owned()
    }
}

/// A host connection.
pub struct Client {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: i64,
    /// Lines read while looking for something else, not yet taken.
    unread: VecDeque<Line>,
}

impl Client {
    pub fn connect(socket: &Path) -> Client {
        let stream = UnixStream::connect(socket).expect("tetherd accepts connections");
        let reader = BufReader::new(stream.try_clone().expect("the stream can be cloned"));
        Client { stream, reader, next_id: 1, unread: VecDeque::new() }
    }

    /// Writes raw bytes (one or more lines, or garbage).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("writing to tetherd");
    }

    pub fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_raw(format!("{line}\n").as_bytes());
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let line = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_raw(format!("{line}\n").as_bytes());
    }

    /// Sends a request and waits for its response: `Ok(result)` or `Err(error)`.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.request(method, params);
        self.response(id)
    }

    pub fn response(&mut self, id: i64) -> Result<Value, Value> {
        let line = self.wait_for(&format!("the response to request {id}"), |line| {
            line.method().is_none() && line.value["id"] == json!(id)
        });
        match line.value.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(line.value["result"].clone()),
        }
    }

    /// Spawns an agent; returns `(agentId, pid)`.
    pub fn spawn(&mut self, params: Value) -> (u64, u32) {
        let (agent_id, pid, _) = self.spawn_with_session(params);
        (agent_id, pid)
    }

    /// Spawns an agent; returns `(agentId, pid, sessionDir)`.
    pub fn spawn_with_session(&mut self, params: Value) -> (u64, u32, Option<PathBuf>) {
        let result = self.call("agent/spawn", params).expect("agent/spawn succeeds");
        let agent_id = result["agentId"].as_u64().expect("agentId");
        let pid = result["pid"].as_u64().and_then(|pid| u32::try_from(pid).ok()).expect("pid");
        let session_dir = match &result["sessionDir"] {
            Value::Null => None,
            Value::String(dir) => Some(PathBuf::from(dir)),
            other => panic!("sessionDir is a string or null, not {other}"),
        };
        (agent_id, pid, session_dir)
    }

    /// Sends a notification whose params are `params` exactly as written (not re-serialised).
    pub fn notify_raw(&mut self, method: &str, params: &str) {
        self.send_raw(format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#).as_bytes());
        self.send_raw(b"\n");
    }

    /// Sends `message` to the agent exactly as written.
    pub fn send_to_agent(&mut self, agent_id: u64, message: &str) {
        self.notify_raw("agent/send", &format!(r#"{{"agentId":{agent_id},"message":{message}}}"#));
    }

    /// Sends a `session/audit` whose record is `record` exactly as written.
    pub fn audit(&mut self, agent_id: u64, record: &str) {
        self.notify_raw("session/audit", &format!(r#"{{"agentId":{agent_id},"record":{record}}}"#));
    }

    /// Returns once tetherd has handled everything this host sent before. A connection's
    /// messages are handled in order and an unknown method is answered at once, so its answer
    /// means the notifications before it (which get no answer of their own) are done.
    pub fn handled_so_far(&mut self) {
        let error = self.call("tests/barrier", json!({})).expect_err("an unknown method");
        assert_eq!(error["code"], json!(-32601));
    }

    /// Waits for a notification `method` about `agent_id`.
    pub fn agent_event(&mut self, method: &str, agent_id: u64) -> Line {
        self.wait_for(&format!("{method} from agent {agent_id}"), |line| {
            line.method() == Some(method) && line.params()["agentId"] == json!(agent_id)
        })
    }

    /// Every notification about `agent_id` up to and including its `agent/exited`, in order.
    pub fn agent_events_until_exit(&mut self, agent_id: u64) -> Vec<Line> {
        let mut events = Vec::new();
        loop {
            let line = self.wait_for(&format!("events from agent {agent_id}"), |line| {
                line.method().is_some() && line.params()["agentId"] == json!(agent_id)
            });
            let exited = line.method() == Some("agent/exited");
            events.push(line);
            if exited {
                return events;
            }
        }
    }

    /// The first line (unread ones first) that `wanted` accepts; the others stay unread.
    pub fn wait_for(&mut self, what: &str, wanted: impl Fn(&Line) -> bool) -> Line {
        if let Some(index) = self.unread.iter().position(&wanted) {
            return self.unread.remove(index).expect("the index was just found");
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let Some(line) = self.read_line_before(deadline) else {
                panic!("connection closed while waiting for {what}; unread: {:#?}", self.unread);
            };
            if wanted(&line) {
                return line;
            }
            self.unread.push_back(line);
        }
    }

    /// The next line from tetherd; `None` when it closes the connection.
    pub fn next_line(&mut self) -> Option<Line> {
        if let Some(line) = self.unread.pop_front() {
            return Some(line);
        }
        self.read_line_before(Instant::now() + TIMEOUT)
    }

    fn read_line_before(&mut self, deadline: Instant) -> Option<Line> {
        let remaining = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        self.reader.get_ref().set_read_timeout(Some(remaining)).expect("set_read_timeout");
        let mut raw = String::new();
        match self.reader.read_line(&mut raw) {
            Ok(0) => None,
            Ok(_) => {
                let raw = raw.trim_end_matches('\n').to_owned();
                let value = serde_json::from_str(&raw)
                    .unwrap_or_else(|error| panic!("tetherd sent a line that is not JSON ({error}): {raw}"));
                Some(Line { raw, value })
            }
            // The peer resetting the connection is a close too.
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(error) => panic!("no line from tetherd within {TIMEOUT:?} ({error}); unread: {:#?}", self.unread),
        }
    }
}

/// What `/proc/<pid>/stat` says about a process: (state, parent pid, process group).
pub fn proc_stat(pid: u32) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, parent, group))
}

/// Every process on the machine with its `/proc/<pid>/stat` facts.
pub fn all_processes() -> Vec<(u32, char, u32, u32)> {
    std::fs::read_dir("/proc")
        .expect("/proc is readable")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| proc_stat(pid).map(|(state, parent, group)| (pid, state, parent, group)))
        .collect()
}

/// Processes of group `pgid` that are alive (zombies are dead, merely not yet reaped by whoever
/// inherited them).
pub fn live_group_members(pgid: u32) -> Vec<u32> {
    all_processes()
        .into_iter()
        .filter(|&(_, state, _, group)| group == pgid && state != 'Z' && state != 'X')
        .map(|(pid, ..)| pid)
        .collect()
}

/// Children of `parent` that are zombies: exited, and never reaped by it.
pub fn zombie_children(parent: u32) -> Vec<u32> {
    all_processes()
        .into_iter()
        .filter(|&(_, state, ppid, _)| ppid == parent && state == 'Z')
        .map(|(pid, ..)| pid)
        .collect()
}

/// Waits until `condition` holds, failing the test after [`TIMEOUT`].
pub fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The peak resident memory of process `pid` so far (VmHWM in /proc), in KiB: a figure that does
/// not depend on when it is read, unlike the current RSS.
pub fn peak_rss_kib(pid: u32) -> u64 {
    proc_status_kib(pid, "VmHWM")
}

/// The resident memory of process `pid` now (VmRSS in /proc), in KiB.
///
/// Read before a load, it is what the process takes before the load adds anything, in this build
/// on this machine. Most of it is the executable's code that has been paged in, which is no
/// figure a test can write down: the unoptimised test build's code is about 17 MiB resident, a
/// release tetherd's a third of that. What a flood may add to it is what a test can bound, from
/// tetherd's buffer sizes.
pub fn resident_kib(pid: u32) -> u64 {
    proc_status_kib(pid, "VmRSS")
}

/// A figure in KiB from `/proc/<pid>/status`, such as `VmHWM`.
fn proc_status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process is still there");
    let line = status
        .lines()
        .find(|line| line.strip_prefix(field).is_some_and(|rest| rest.starts_with(':')))
        .unwrap_or_else(|| panic!("/proc/<pid>/status has {field}"));
    line.split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("{field} is a number of KiB"))
}

/// The scripted test agent, built by cargo (it is another crate's binary, so cargo does not
/// build it for this crate's tests by itself).
///
/// It is built as the workspace's test build builds it (`--workspace --tests`, what `cargo test`
/// and `cargo nextest run` over the workspace compile), so that after such a run this is a no-op:
/// built alone, the agent's dependencies resolve to other features, and building them again cost
/// the first test to ask over a minute (every other one waiting on cargo's lock meanwhile). The
/// target is the run's too: `cargo xtask test` names it in `CARGO_BUILD_TARGET`, which this cargo
/// inherits.
pub fn tether_test_agent() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = std::process::Command::new(cargo)
        .args(["build", "--quiet", "--workspace", "--tests", "--message-format=json"])
        .current_dir(root)
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "building tether-test-agent failed:\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|message| {
            let is_the_agent = message.pointer("/target/name").and_then(Value::as_str) == Some("tether-test-agent")
                && message.pointer("/target/kind/0").and_then(Value::as_str) == Some("bin")
                // Not the binary's own unit tests, which `--tests` builds as well.
                && message.pointer("/profile/test").and_then(Value::as_bool) == Some(false);
            let executable = message.get("executable").and_then(Value::as_str)?;
            is_the_agent.then(|| PathBuf::from(executable))
        })
        .expect("cargo names the tether-test-agent executable")
}

/// The thread a person would see after folding `log`, as JSON lines.
pub fn fold(log: &ReadLog) -> String {
    let info = ClientInfo { name: "tether-test".to_owned(), version: "0.0.0".to_owned() };
    let (client, problems) = AcpClient::replay(info, "/workspace", 1, PermissionPolicy::new(Mode::Ask, 1), log);
    assert!(problems.is_empty(), "the log folds without problems: {problems:?}");
    let mut thread: Vec<String> = client.thread().entries().iter().map(|entry| json!(entry).to_string()).collect();
    thread.push(format!("turn: {}", json!(client.thread().turn())));
    thread.join("\n")
}

/// The JSON messages among the lines the agent recorded writing (`--record-stdout`), in order;
/// lines longer than `max_line_bytes` are left out, as tetherd does not take them as messages.
pub fn recorded_messages(record: &Path, max_line_bytes: u64) -> Vec<String> {
    let bytes = std::fs::read(record).expect("the agent's record exists");
    bytes
        .split(|&byte| byte == b'\n')
        .filter(|line| line.len() as u64 <= max_line_bytes)
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter(|line| serde_json::from_str::<&RawValue>(line).is_ok())
        .map(str::to_owned)
        .collect()
}

/// The agent's messages in a session log, in order.
pub fn messages_from_agent(log: &ReadLog) -> Vec<&str> {
    log.entries
        .iter()
        .filter_map(|entry| match &entry.event {
            LogEvent::FromAgent(message) => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

/// Checks that the session log lost nothing the agent sent: its messages from the agent are the
/// agent's record, in order, and the log folds to the same thread as the log with the agent's
/// record in their place.
pub fn assert_log_matches_record(log: &ReadLog, record: &[String]) {
    assert_eq!(
        messages_from_agent(log),
        record,
        "the log has every message the agent sent, in order, and nothing else"
    );
    let mut from_record = log.clone();
    let mut recorded = record.iter();
    for entry in &mut from_record.entries {
        if let LogEvent::FromAgent(message) = &mut entry.event {
            *message = recorded.next().expect("as many recorded messages as logged ones").clone();
        }
    }
    assert_eq!(fold(log), fold(&from_record), "the log folds to the thread the agent sent");
}
