//! One host connection: the `hello` handshake, then the host's requests and notifications, and
//! the lines going back to it (responses and agent events, through its [`fanout`] queue).
//!
//! Reading and writing run side by side in the connection's task; whichever ends first ends the
//! connection. Lines that were queued for the host but never written are handed back to the
//! fan-out, which keeps them for the next host when this was the last one.
//!
//! What a connection holds is bounded: a host's line is framed like an agent's, at most the agent
//! maximum plus room for the envelope (a longer one is a parse error for that line); what goes
//! back waits in the connection's [`fanout`] queue, whose budget makes writers wait. Requests that
//! take a while (snapshots, history, terminal waits) are answered from a task each: the host is
//! authenticated and its engine bounds what it asks for, so their number is the host's.

use std::io::IoSlice;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use interprocess::local_socket::tokio::Stream;
use subtle::ConstantTimeEq;
use tether_core::framing::{FrameError, LineFramer};
use tether_core::jsonrpc::{
    ErrorCode, Message, RequestId, RpcError, encode_error, encode_result, method_not_found, parse_message, parse_params,
};
use tether_core::sidecar::{
    AgentRef, AgentSend, AuditAppend, HelloParams, HelloResult, McpHelloParams, SIDECAR_PROTOCOL_VERSION,
    SessionDirRef, SessionListParams, SessionListResult, SessionReadParams, SessionRenameParams, SnapshotChangesParams,
    SnapshotTakeParams, SpawnParams, TerminalCreateParams, TerminalInput, TerminalRef, TerminalResize, error_code,
    method,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

use crate::agent::{AgentRegistry, NoSessionDir};
use crate::fanout::{self, Fanout, Inbox, Outbox, Phase};
use crate::history::{self, HistoryError};
use crate::mcp::{self, McpServer, grants::Grant};
use crate::session;
use crate::snapshot::{SnapshotError, Snapshots};
use crate::terminal::{TerminalError, TerminalRegistry};
use crate::utc::UtcTime;

/// How long a new connection has to say `hello`.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// How much is read from the socket at once.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What every connection shares.
#[derive(Debug)]
pub struct Context {
    /// The token a host must present in `hello`.
    pub token: String,
    pub registry: Arc<AgentRegistry>,
    pub terminals: Arc<TerminalRegistry>,
    pub fanout: Arc<Fanout>,
    /// The longest line accepted from a host: an agent line travels embedded in `agent/send`, so
    /// this is the agent maximum plus room for the envelope.
    pub max_host_line_bytes: usize,
    pub snapshots: Arc<Snapshots>,
    /// Tether's MCP server: the agents' tokens, and the questions waiting for VS Code.
    pub mcp: Arc<McpServer>,
    next_connection_id: AtomicU64,
}

impl Context {
    pub fn new(
        token: String,
        registry: Arc<AgentRegistry>,
        terminals: Arc<TerminalRegistry>,
        fanout: Arc<Fanout>,
        max_host_line_bytes: usize,
        mcp: Arc<McpServer>,
    ) -> Self {
        Self {
            token,
            registry,
            terminals,
            fanout,
            max_host_line_bytes,
            snapshots: Arc::new(Snapshots::default()),
            mcp,
            next_connection_id: AtomicU64::new(1),
        }
    }
}

/// Serves one connection until the host leaves, the socket fails or tetherd shuts down. The
/// connection may also be an agent's MCP bridge (`mcp/hello` instead of `hello`), which is then
/// served by [`mcp::bridge::serve_connection`].
pub async fn serve(stream: Stream, context: Arc<Context>) {
    let id = context.next_connection_id.fetch_add(1, Ordering::Relaxed);
    let mut lines = HostLines::new(&stream, context.max_host_line_bytes);

    let first = tokio::time::timeout(HELLO_TIMEOUT, lines.next()).await;
    let answer = match first {
        Err(_elapsed) => Err(refusal(RequestId::Null, "no hello within 10 seconds")),
        Ok(None) => {
            tracing::debug!(connection = id, "connection closed before hello");
            return;
        }
        Ok(Some(line)) => handshake(line, &context),
    };
    let accepted = match answer {
        Ok(Accepted::Host(accepted)) => accepted,
        Ok(Accepted::McpBridge { answer, grant }) => {
            if let Err(error) = write_line(&stream, &answer).await {
                tracing::debug!(connection = id, %error, "could not answer an MCP bridge");
                return;
            }
            let already_read = lines.into_remaining();
            mcp::bridge::serve_connection(stream, already_read, grant, context.mcp.clone()).await;
            return;
        }
        Err(refused) => {
            if let Err(error) = write_line(&stream, &refused).await {
                tracing::debug!(connection = id, %error, "could not refuse a hello");
                return;
            }
            tracing::warn!(connection = id, "refused a connection that did not present a valid hello");
            // The connection is being dropped either way; shutting the write side down first only
            // makes sure the error reaches the peer before the close.
            let mut writer = &stream;
            let _shutdown = writer.shutdown().await;
            return;
        }
    };
    let stream = &stream;
    tracing::info!(connection = id, "host connected");

    // The answer to hello is the first line of the connection's queue, and the connection is
    // attached before anything is written: an event published once the host can know it is
    // connected is in its queue behind the answer. (Written first and attached after, an event
    // published in between went to the other hosts only.)
    let (outbox, mut inbox) = fanout::queue(id);
    if outbox.send(accepted.into()).await.is_err() {
        // The inbox is held just above, so the queue cannot be closed yet.
        return;
    }
    context.fanout.attach(outbox.clone());
    let mut in_flight = Vec::new();
    let mut phase = context.fanout.watch_phase();
    tokio::select! {
        () = read_requests(&mut lines, &outbox, &context) => {
            tracing::info!(connection = id, "host disconnected");
        }
        written = write_queued(stream, &mut inbox, &mut in_flight, &mut phase) => {
            if let Err(error) = written {
                tracing::info!(connection = id, %error, "host connection lost");
            }
        }
    }
    drop(outbox);
    context.fanout.detach(id, &mut inbox, in_flight);
}

/// What the first line of an accepted connection said it is.
enum Accepted {
    /// A host: the answer to its `hello`.
    Host(String),
    /// An agent's `tetherd mcp`: the answer to its `mcp/hello`, and what its token opens.
    McpBridge { answer: String, grant: Arc<Grant> },
}

/// Checks the first line of a connection: `Ok` with what it is, or `Err` with the error response
/// that ends the connection.
fn handshake(line: Result<String, FrameError>, context: &Context) -> Result<Accepted, String> {
    let line = line.map_err(|error| refusal(RequestId::Null, &format!("expected hello: {error}")))?;
    let (id, params) = match parse_message(&line) {
        Err(error) => return Err(refusal(error.response_id(), &format!("expected hello: {error}"))),
        Ok(Message::Request { id, method, params }) if method == method::HELLO => (id, params),
        Ok(Message::Request { id, method, params }) if method == method::MCP_HELLO => {
            let hello: McpHelloParams = parse_params(params)
                .map_err(|error| refusal(id.clone(), &format!("expected mcp/hello: {}", error.message)))?;
            let grant = context.mcp.grants.check(&hello.token, |agent| context.registry.is_live(agent));
            let Some(grant) = grant else {
                return Err(refusal(id, "this MCP token opens nothing (its agent may have exited)"));
            };
            return Ok(Accepted::McpBridge { answer: encode_result(&id, &serde_json::json!({})), grant });
        }
        Ok(Message::Request { id, method, .. }) => {
            return Err(refusal(id, &format!("expected hello, got {method}")));
        }
        Ok(_) => return Err(refusal(RequestId::Null, "expected a hello request")),
    };
    let hello: HelloParams =
        parse_params(params).map_err(|error| refusal(id.clone(), &format!("expected hello: {}", error.message)))?;
    let token_matches: bool = hello.token.as_bytes().ct_eq(context.token.as_bytes()).into();
    if !token_matches {
        return Err(refusal(id, "wrong token"));
    }
    if hello.protocol_version != SIDECAR_PROTOCOL_VERSION {
        let error = RpcError::new(
            error_code::PROTOCOL_MISMATCH,
            format!(
                "this tetherd speaks sidecar protocol {SIDECAR_PROTOCOL_VERSION}, the host speaks {}",
                hello.protocol_version
            ),
        );
        return Err(encode_error(&id, &error));
    }
    tracing::info!(client = %hello.client, "hello");
    let result = HelloResult { tetherd_version: env!("CARGO_PKG_VERSION").to_owned(), pid: std::process::id() };
    Ok(Accepted::Host(encode_result(&id, &result)))
}

fn refusal(id: RequestId, message: &str) -> String {
    encode_error(&id, &RpcError::new(error_code::UNAUTHORIZED, format!("unauthorized: {message}")))
}

/// Handles the host's messages until it closes the connection.
async fn read_requests(lines: &mut HostLines<'_>, outbox: &Outbox, context: &Arc<Context>) {
    while let Some(line) = lines.next().await {
        let answer = match line {
            Err(error) => Some(encode_error(
                &RequestId::Null,
                &RpcError::new(ErrorCode::ParseError.into(), format!("Parse error: {error}")),
            )),
            Ok(line) => handle_message(&line, outbox, context),
        };
        if let Some(answer) = answer
            && outbox.send(answer.into()).await.is_err()
        {
            return;
        }
    }
}

/// Handles one message from an authenticated host; returns the response to send, if any now.
fn handle_message(line: &str, outbox: &Outbox, context: &Arc<Context>) -> Option<String> {
    let message = match parse_message(line) {
        Ok(message) => message,
        Err(error) => return Some(encode_error(&error.response_id(), &error.to_rpc_error())),
    };
    match message {
        Message::Request { id, method, params } => Some(match &*method {
            method::AGENT_SPAWN => match parse_params::<SpawnParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(params) => {
                    let mut offer = None;
                    let spawned = context.registry.spawn(params.clone(), |agent_id| {
                        offer = context.mcp.offer(agent_id, mcp_folders(&params));
                        offer.as_ref().map(mcp::agent_env).unwrap_or_default()
                    });
                    match spawned {
                        Ok(mut result) => {
                            result.mcp = offer;
                            encode_result(&id, &result)
                        }
                        Err(failed) => {
                            tracing::warn!(error = %failed.0, "agent/spawn failed");
                            encode_error(&id, &RpcError::new(error_code::SPAWN_FAILED, failed.0))
                        }
                    }
                }
            },
            method::AGENT_KILL => match parse_params::<AgentRef>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(AgentRef { agent_id }) => {
                    // A kill takes up to the kill grace; the connection keeps serving meanwhile.
                    let registry = context.registry.clone();
                    let outbox = outbox.clone();
                    tokio::spawn(async move {
                        let answer = match registry.kill(agent_id).await {
                            Ok(()) => encode_result(&id, &serde_json::json!({})),
                            Err(unknown) => encode_error(&id, &unknown_agent(unknown.0)),
                        };
                        // A host that left before the answer no longer needs it.
                        let _gone = outbox.send(answer.into()).await;
                    });
                    return None;
                }
            },
            method::SNAPSHOT_TAKE => match parse_params::<SnapshotTakeParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(params) => {
                    let snapshots = context.snapshots.clone();
                    answer_later(outbox, id, async move { snapshots.take(params).await.map_err(snapshot_failed) });
                    return None;
                }
            },
            method::SNAPSHOT_CHANGES => match parse_params::<SnapshotChangesParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(params) => {
                    let snapshots = context.snapshots.clone();
                    answer_later(outbox, id, async move { snapshots.changes(params).await.map_err(snapshot_failed) });
                    return None;
                }
            },
            method::SESSION_LIST => match parse_params::<SessionListParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(SessionListParams { tether_dir }) => {
                    let live = context.registry.live_session_dirs();
                    answer_from_disk(outbox, id, move || {
                        history::list(Path::new(&tether_dir), &live).map(|sessions| SessionListResult { sessions })
                    });
                    return None;
                }
            },
            method::SESSION_READ => match parse_params::<SessionReadParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(SessionReadParams { tether_dir, dir, offset }) => {
                    answer_from_disk(outbox, id, move || history::read(Path::new(&tether_dir), &dir, offset));
                    return None;
                }
            },
            method::SESSION_RENAME => match parse_params::<SessionRenameParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(SessionRenameParams { tether_dir, dir, title }) => {
                    answer_from_disk(outbox, id, move || {
                        history::rename(Path::new(&tether_dir), &dir, &title).map(|()| serde_json::json!({}))
                    });
                    return None;
                }
            },
            method::SESSION_DELETE => match parse_params::<SessionDirRef>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(SessionDirRef { tether_dir, dir }) => {
                    // Taken now: an agent spawned later gets a new folder, never this one.
                    let live = context.registry.live_session_dirs();
                    answer_from_disk(outbox, id, move || {
                        history::delete(Path::new(&tether_dir), &dir, &live).map(|()| serde_json::json!({}))
                    });
                    return None;
                }
            },
            method::TERMINAL_CREATE => match parse_params::<TerminalCreateParams>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(params) if !context.registry.is_live(params.agent_id) => {
                    encode_error(&id, &terminal_failed(TerminalError::UnknownAgent(params.agent_id)))
                }
                Ok(params) => match context.terminals.create(params) {
                    Ok(result) => encode_result(&id, &result),
                    Err(error) => encode_error(&id, &terminal_failed(error)),
                },
            },
            method::TERMINAL_OUTPUT => match parse_params::<TerminalRef>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(TerminalRef { terminal_id }) => match context.terminals.output(terminal_id) {
                    Ok(result) => encode_result(&id, &result),
                    Err(error) => encode_error(&id, &terminal_failed(error)),
                },
            },
            method::TERMINAL_KILL => match parse_params::<TerminalRef>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(TerminalRef { terminal_id }) => match context.terminals.kill(terminal_id) {
                    Ok(()) => encode_result(&id, &serde_json::json!({})),
                    Err(error) => encode_error(&id, &terminal_failed(error)),
                },
            },
            method::TERMINAL_WAIT_FOR_EXIT => match parse_params::<TerminalRef>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(TerminalRef { terminal_id }) => {
                    let terminals = context.terminals.clone();
                    answer_later(outbox, id, async move {
                        terminals.wait_for_exit(terminal_id).await.map_err(terminal_failed)
                    });
                    return None;
                }
            },
            method::TERMINAL_RELEASE => match parse_params::<TerminalRef>(params) {
                Err(error) => encode_error(&id, &error),
                Ok(TerminalRef { terminal_id }) => {
                    let terminals = context.terminals.clone();
                    answer_later(outbox, id, async move {
                        terminals.release(terminal_id).await.map(|()| serde_json::json!({})).map_err(terminal_failed)
                    });
                    return None;
                }
            },
            method::HELLO => encode_error(
                &id,
                &RpcError::new(ErrorCode::InvalidRequest.into(), "Invalid request: hello was already said"),
            ),
            other => encode_error(&id, &method_not_found(other)),
        }),
        Message::Notification { method, params } => {
            match &*method {
                method::AGENT_SEND => send_to_agent(params, context),
                method::AGENT_CLOSE_INPUT => match parse_params::<AgentRef>(params) {
                    Err(error) => {
                        tracing::warn!(error = %error.message, "ignoring agent/closeInput with invalid params")
                    }
                    Ok(AgentRef { agent_id }) => {
                        if let Err(unknown) = context.registry.close_input(agent_id) {
                            tracing::debug!(
                                agent_id = unknown.0,
                                "agent/closeInput: no such agent (it may have exited)"
                            );
                        }
                    }
                },
                method::SESSION_AUDIT => append_audit(params, context),
                method::TERMINAL_INPUT => match parse_params::<TerminalInput>(params) {
                    Err(error) => tracing::warn!(error = %error.message, "ignoring terminal/input with invalid params"),
                    Ok(input) => {
                        if let Err(error) = context.terminals.input(input) {
                            tracing::debug!(%error, "terminal/input dropped");
                        }
                    }
                },
                method::TERMINAL_RESIZE => match parse_params::<TerminalResize>(params) {
                    Err(error) => {
                        tracing::warn!(error = %error.message, "ignoring terminal/resize with invalid params")
                    }
                    Ok(resize) => {
                        if let Err(error) = context.terminals.resize(resize) {
                            tracing::debug!(%error, "terminal/resize dropped");
                        }
                    }
                },
                // Notifications get no response, by JSON-RPC's rules; the log is all there is.
                other => tracing::warn!(method = other, "ignoring an unknown notification from the host"),
            }
            None
        }
        Message::Response { id, result } => {
            if !context.mcp.editor.answer(&id, result) {
                tracing::debug!(%id, "ignoring a response to no question of tetherd's (answered already, or late)");
            }
            None
        }
    }
}

/// The folders an agent's MCP tools may read: the workspace's, or its working directory.
fn mcp_folders(params: &SpawnParams) -> Vec<PathBuf> {
    if params.workspace_folders.is_empty() {
        vec![PathBuf::from(&params.cwd)]
    } else {
        params.workspace_folders.iter().map(PathBuf::from).collect()
    }
}

fn send_to_agent(params: Option<&serde_json::value::RawValue>, context: &Context) {
    let Some(params) = params else {
        tracing::warn!("ignoring agent/send without params");
        return;
    };
    match serde_json::from_str::<AgentSend<'_>>(params.get()) {
        Err(error) => tracing::warn!(%error, "ignoring agent/send with invalid params"),
        Ok(send) => {
            if let Err(unknown) = context.registry.send(send.agent_id, send.message.get()) {
                tracing::warn!(agent_id = unknown.0, "message dropped: no such agent (it may have exited)");
            }
        }
    }
}

/// Appends an audit record to the agent's session folder: to its audit log and, once there, to
/// its event log too, so that the two logs hold the same records.
///
/// This runs in the connection's task, not on a blocking thread, on purpose: the host's messages
/// are handled in order, so the records of a connection land in the order it sent them, and
/// one small append to a local file is quick.
fn append_audit(params: Option<&serde_json::value::RawValue>, context: &Context) {
    let Some(params) = params else {
        tracing::warn!("ignoring session/audit without params");
        return;
    };
    let audit = match serde_json::from_str::<AuditAppend<'_>>(params.get()) {
        Ok(audit) => audit,
        Err(error) => {
            tracing::warn!(%error, "ignoring session/audit with invalid params");
            return;
        }
    };
    let agent_id = audit.agent_id;
    let session = match context.registry.session_folder(agent_id) {
        Ok(session) => session,
        Err(NoSessionDir::UnknownAgent) => {
            tracing::warn!(agent_id, "audit record dropped: no such agent");
            return;
        }
        Err(NoSessionDir::NotCreated) => {
            tracing::warn!(agent_id, "audit record dropped: the agent has no session folder");
            return;
        }
    };
    let now = UtcTime::from_system_time(std::time::SystemTime::now());
    match session::append_audit(&session.dir, audit.record, now) {
        Ok(()) => session.events.host_record(audit.record.get()),
        Err(error) => tracing::warn!(agent_id, error = format!("{error:#}"), "audit record dropped"),
    }
}

/// Answers a request once its work is done (git runs for a while, a command for as long as it
/// likes); the connection keeps serving meanwhile.
fn answer_later<T: serde::Serialize>(
    outbox: &Outbox,
    id: RequestId,
    work: impl Future<Output = Result<T, RpcError>> + Send + 'static,
) {
    let outbox = outbox.clone();
    tokio::spawn(async move {
        let answer = match work.await {
            Ok(result) => encode_result(&id, &result),
            Err(error) => encode_error(&id, &error),
        };
        // A host that left before the answer no longer needs it.
        let _gone = outbox.send(answer.into()).await;
    });
}

/// Answers a history request once its file work is done, on a blocking thread so that a large
/// log or a slow disk holds up no other connection.
fn answer_from_disk<T: serde::Serialize + Send + 'static>(
    outbox: &Outbox,
    id: RequestId,
    work: impl FnOnce() -> Result<T, HistoryError> + Send + 'static,
) {
    answer_later(outbox, id, async move {
        match tokio::task::spawn_blocking(work).await {
            Ok(answer) => answer.map_err(|error| {
                tracing::info!(%error, "a session history request failed");
                error.to_rpc_error()
            }),
            Err(error) => {
                Err(RpcError::new(error_code::SESSION_FAILED, format!("the request did not finish: {error}")))
            }
        }
    });
}

fn snapshot_failed(error: SnapshotError) -> RpcError {
    tracing::warn!(%error, "a snapshot request failed");
    error.to_rpc_error()
}

/// The error a terminal request answers with. Unknown ids are the host's business (a terminal
/// it released, an agent that just exited); a command that does not start is worth a warning.
fn terminal_failed(error: TerminalError) -> RpcError {
    match error {
        TerminalError::UnknownTerminal(_) => RpcError::new(error_code::UNKNOWN_TERMINAL, error.to_string()),
        TerminalError::UnknownAgent(agent_id) => unknown_agent(agent_id),
        TerminalError::InvalidParams(message) => {
            RpcError::new(ErrorCode::InvalidParams.into(), format!("Invalid params: {message}"))
        }
        TerminalError::Failed(message) => {
            tracing::warn!(error = %message, "terminal/create failed");
            RpcError::new(error_code::TERMINAL_FAILED, message)
        }
    }
}

fn unknown_agent(agent_id: u64) -> RpcError {
    RpcError::new(error_code::UNKNOWN_AGENT, format!("no agent with id {agent_id} (never spawned, or already exited)"))
}

/// How many bytes of queued lines one write takes at most (more only for one long line). An
/// agent streaming a reply queues lines faster than a system call each would write them; taken
/// together they cost tetherd one write, and the host one read, per batch.
const WRITE_BATCH_BYTES: usize = 64 * 1024;

/// The least time between two writes to a host while small batches keep coming. An agent
/// streaming at a few thousand lines a second writes each on its own; without a pause every line
/// would cost the host a read and a pass of its engine (its chat view is drawn at most once a
/// frame anyway). A line that comes after a quiet moment goes at once, and a full batch
/// ([`WRITE_BATCH_BYTES`]: a flood, a busy terminal) does not wait.
const MIN_WRITE_INTERVAL: Duration = Duration::from_millis(4);

/// Writes the connection's queue to the socket until it fails, the queue ends, or tetherd
/// shuts down (then what is queued is written first). Every write takes the lines queued by
/// then, in order, up to [`WRITE_BATCH_BYTES`]; a write that would follow a batch that was not
/// full within [`MIN_WRITE_INTERVAL`] waits for the rest of it first, gathering what comes
/// meanwhile.
/// `in_flight` holds the lines being written, so that the caller can hand them back if the write
/// never completes.
async fn write_queued(
    stream: &Stream,
    inbox: &mut Inbox,
    in_flight: &mut Vec<Arc<str>>,
    phase: &mut watch::Receiver<Phase>,
) -> std::io::Result<()> {
    let mut closing = false;
    // The lines of one write, holding their share of the queue's budget until it is done, and
    // the bytes they are copied into (kept between writes).
    let mut batch = Vec::new();
    let mut buffer = Vec::new();
    // When the last batch was written, if it was not full.
    let mut last_small_write: Option<tokio::time::Instant> = None;
    loop {
        let queued = if closing {
            inbox.recv().await
        } else {
            tokio::select! {
                queued = inbox.recv() => queued,
                _ = phase.wait_for(|phase| *phase == Phase::Closed) => {
                    inbox.close();
                    closing = true;
                    continue;
                }
            }
        };
        let Some(queued) = queued else {
            return Ok(());
        };
        if let Some(last_write) = last_small_write
            && !closing
        {
            tokio::time::sleep_until(last_write + MIN_WRITE_INTERVAL).await;
        }
        let mut bytes = queued.line.len() + 1;
        batch.push(queued);
        while bytes < WRITE_BATCH_BYTES
            && let Some(next) = inbox.try_recv()
        {
            bytes += next.line.len() + 1;
            batch.push(next);
        }
        in_flight.extend(batch.iter().map(|queued| queued.line.clone()));
        write_batch(stream, &batch, &mut buffer).await?;
        last_small_write = (bytes < WRITE_BATCH_BYTES).then(tokio::time::Instant::now);
        in_flight.clear();
        batch.clear();
    }
}

/// Writes the lines of `batch`, each with its newline, in one write through `buffer`; a single
/// line too long for the batch (a terminal's output) is written as it is rather than copied.
async fn write_batch(stream: &Stream, batch: &[fanout::Queued], buffer: &mut Vec<u8>) -> std::io::Result<()> {
    if let [only] = batch
        && only.line.len() >= WRITE_BATCH_BYTES
    {
        return write_line(stream, &only.line).await;
    }
    buffer.clear();
    for queued in batch {
        buffer.extend_from_slice(queued.line.as_bytes());
        buffer.push(b'\n');
    }
    let mut writer = stream;
    writer.write_all(buffer).await
}

/// Writes one line and its newline, gathered by the system call rather than copied together
/// (a line can be a terminal's output of a quarter of a megabyte).
async fn write_line(stream: &Stream, line: &str) -> std::io::Result<()> {
    let mut writer = stream;
    let mut pieces = [IoSlice::new(line.as_bytes()), IoSlice::new(b"\n")];
    let mut pieces = &mut pieces[..];
    while !pieces.is_empty() {
        let written = writer.write_vectored(pieces).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut pieces, written);
    }
    Ok(())
}

/// The host's lines, framed like an agent's (bounded, and a bad line costs only itself).
struct HostLines<'s> {
    stream: &'s Stream,
    framer: LineFramer,
    buffer: Vec<u8>,
    at_end: bool,
}

impl<'s> HostLines<'s> {
    fn new(stream: &'s Stream, max_line_bytes: usize) -> Self {
        Self { stream, framer: LineFramer::new(max_line_bytes), buffer: vec![0; READ_CHUNK_BYTES], at_end: false }
    }

    /// What was read past the lines taken, for the protocol the connection carries next.
    fn into_remaining(self) -> Vec<u8> {
        self.framer.into_remaining()
    }

    /// The next line; `None` once the host has closed the connection.
    async fn next(&mut self) -> Option<Result<String, FrameError>> {
        loop {
            if let Some(line) = self.framer.next_line() {
                return Some(line);
            }
            if self.at_end {
                return self.framer.finish();
            }
            let mut reader = self.stream;
            match reader.read(&mut self.buffer).await {
                Ok(0) => self.at_end = true,
                Ok(read) => self.framer.push(&self.buffer[..read]),
                Err(error) => {
                    tracing::debug!(%error, "reading from the host failed");
                    self.at_end = true;
                }
            }
        }
    }
}
