//! The listener and tetherd's lifetime: accept hosts, exit after a grace period with no host, and
//! shut down cleanly on SIGTERM/SIGINT.
//!
//! tetherd outlives window reloads on purpose, but must not outlive the host for good: when no
//! host has been connected for the grace period, it kills its agents, removes its socket and
//! exits. Every path out goes through the same shutdown, which first tells the hosts that this is
//! a stop (`tetherd/stopping`, so that they do not start tetherd again as after a crash), then
//! reaps every agent and every terminal command.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use interprocess::local_socket::tokio::Listener;
use interprocess::local_socket::traits::tokio::Listener as _;
use interprocess::local_socket::{GenericFilePath, ListenerOptions, ToFsName};
use tether_core::jsonrpc::encode_notification;
use tether_core::sidecar::{TetherdStopping, method};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agent::AgentRegistry;
use crate::connection::{self, Context};
use crate::fanout::{Fanout, Phase};
use crate::mcp::{self, McpServer};
#[cfg(unix)]
use crate::orphans;
use crate::socket_dir;
use crate::terminal::TerminalRegistry;

/// How long connections get at shutdown to write out what is queued for them (the agents'
/// `agent/exited` notifications, mostly).
const FLUSH_AT_SHUTDOWN: Duration = Duration::from_secs(2);

/// Room for the JSON-RPC envelope around an agent line in `agent/send`.
const HOST_LINE_ENVELOPE_BYTES: usize = 1024 * 1024;

/// What `tetherd serve` was asked to do.
#[derive(Debug, Clone)]
pub struct Config {
    pub socket: PathBuf,
    pub token: String,
    /// How long tetherd waits for a host when none is connected.
    pub grace: Duration,
    pub max_line_bytes: usize,
    /// How long a killed agent or terminal command has between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// How long an MCP tool waits for VS Code's answer.
    pub editor_timeout: Duration,
}

/// Runs tetherd until the grace period runs out with no host, or a signal asks it to stop.
pub async fn run(config: Config) -> anyhow::Result<()> {
    socket_dir::prepare(&config.socket)?;
    // The socket is free, so whatever the last tetherd here recorded is orphaned. (Windows has
    // no orphans: the Job Objects end them with tetherd, see `job_object.rs`.)
    #[cfg(unix)]
    orphans::reclaim_and_track(&config.socket);
    let name = config
        .socket
        .as_path()
        .to_fs_name::<GenericFilePath>()
        .with_context(|| format!("{} cannot name a local socket", config.socket.display()))?;
    // The socket file is removed by `SocketFile` below, at a moment of our choosing.
    let listener = socket_dir::restrict_to_user(ListenerOptions::new().name(name).reclaim_name(false))?
        .create_tokio()
        .with_context(|| format!("cannot listen on {}", config.socket.display()))?;
    // A named pipe has no file: it goes with its last handle.
    #[cfg(unix)]
    let socket_file = SocketFile(config.socket.clone());
    let mut signals = ShutdownSignals::new()?;
    announce(&config.socket)?;
    tracing::info!(socket = %config.socket.display(), pid = std::process::id(), "listening");

    let fanout = Arc::new(Fanout::new());
    let terminals = Arc::new(TerminalRegistry::new(fanout.clone(), config.kill_grace));
    let registry =
        Arc::new(AgentRegistry::new(fanout.clone(), config.max_line_bytes, config.kill_grace, terminals.clone()));
    let mcp = Arc::new(McpServer::new(config.socket.clone(), registry.clone(), fanout.clone(), config.editor_timeout));
    // Agents that speak Streamable HTTP get it when it listens; every agent gets the stdio bridge.
    let stop_mcp_http = CancellationToken::new();
    match mcp::http::start(mcp.clone(), stop_mcp_http.clone()).await {
        Ok(address) => tracing::info!(%address, "MCP over HTTP listening"),
        Err(error) => tracing::warn!(%error, "MCP over HTTP is not available; agents get the stdio bridge only"),
    }
    let _stop_mcp_http = stop_mcp_http.drop_guard();
    let context = Arc::new(Context::new(
        config.token.clone(),
        registry.clone(),
        terminals.clone(),
        fanout.clone(),
        config.max_line_bytes.saturating_add(HOST_LINE_ENVELOPE_BYTES),
        mcp,
    ));

    let mut connections = JoinSet::new();
    let reason = accept_until_done(&listener, &context, &config, &mut signals, &mut connections).await;
    tracing::info!(reason, "shutting down");

    // Stop being reachable first, so that no host connects to a tetherd on its way out.
    drop(listener);
    #[cfg(unix)]
    drop(socket_file);
    // The hosts hear that this is a stop, not a loss: they do not start tetherd again by
    // themselves. A host that does not read in time is not waited for.
    let stopping = encode_notification(method::TETHERD_STOPPING, &TetherdStopping { reason: reason.to_owned() });
    if tokio::time::timeout(FLUSH_AT_SHUTDOWN, fanout.publish(stopping)).await.is_err() {
        tracing::warn!("a host did not take the news of the shutdown in time");
    }
    fanout.set_phase(Phase::Closing);
    // An agent ends its terminals itself once it is gone; killing the terminals alongside the
    // agents makes shutdown take one kill grace rather than two.
    tokio::join!(terminals.kill_all(), registry.kill_all());
    fanout.set_phase(Phase::Closed);
    #[cfg(unix)]
    orphans::forget_all();
    let flushed =
        tokio::time::timeout(FLUSH_AT_SHUTDOWN, async { while connections.join_next().await.is_some() {} }).await;
    if flushed.is_err() {
        tracing::warn!("some hosts did not take their last messages in time");
    }
    tracing::info!("stopped");
    Ok(())
}

/// Accepts connections until it is time to stop; returns why.
async fn accept_until_done(
    listener: &Listener,
    context: &Arc<Context>,
    config: &Config,
    signals: &mut ShutdownSignals,
    connections: &mut JoinSet<()>,
) -> &'static str {
    let mut hosts = context.fanout.watch_hosts();
    // No host has said hello yet: the grace period runs from the start.
    let mut idle_since = Some(Instant::now());
    loop {
        let grace_ends = idle_since.map(|since| since + config.grace);
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    connections.spawn(connection::serve(stream, context.clone()));
                }
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    // Typically out of file descriptors: give the system a moment rather than
                    // spinning on the same error.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            changed = hosts.changed() => {
                if changed.is_err() {
                    return "the fan-out is gone";
                }
                let connected = *hosts.borrow_and_update();
                idle_since = match (connected, idle_since) {
                    (0, None) => {
                        tracing::info!(grace_seconds = config.grace.as_secs_f64(), "no host connected; waiting for one");
                        Some(Instant::now())
                    }
                    (0, since) => since,
                    _ => None,
                };
            }
            () = sleep_until_if_set(grace_ends) => return "no host connected within the grace period",
            signal = signals.recv() => return signal,
            Some(finished) = connections.join_next() => {
                if let Err(error) = finished {
                    tracing::error!(%error, "a connection task failed");
                }
            }
        }
    }
}

async fn sleep_until_if_set(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Tells the host, on stdout, that the socket is ready. This is the only thing tetherd ever
/// prints on stdout.
fn announce(socket: &Path) -> anyhow::Result<()> {
    let line = serde_json::json!({ "listening": socket.to_string_lossy(), "pid": std::process::id() });
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}").context("cannot write the listening line to stdout")?;
    stdout.flush().context("cannot flush stdout")
}

/// Removes the socket file when dropped, so that every way out of [`run`] cleans up.
#[cfg(unix)]
struct SocketFile(PathBuf);

#[cfg(unix)]
impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_file(&self.0)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(socket = %self.0.display(), %error, "could not remove the socket file");
        }
    }
}

/// The signals that ask tetherd to stop.
struct ShutdownSignals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(windows)]
    ctrl_c: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    ctrl_break: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    close: tokio::signal::windows::CtrlClose,
    #[cfg(windows)]
    shutdown: tokio::signal::windows::CtrlShutdown,
}

impl ShutdownSignals {
    #[cfg(unix)]
    fn new() -> anyhow::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            terminate: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            interrupt: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
        })
    }

    #[cfg(windows)]
    fn new() -> anyhow::Result<Self> {
        use tokio::signal::windows;
        Ok(Self {
            ctrl_c: windows::ctrl_c().context("cannot handle Ctrl-C")?,
            ctrl_break: windows::ctrl_break().context("cannot handle Ctrl-Break")?,
            close: windows::ctrl_close().context("cannot handle the console's closing")?,
            shutdown: windows::ctrl_shutdown().context("cannot handle the system's shutdown")?,
        })
    }

    /// Waits for a stop signal; returns its name.
    async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
        #[cfg(windows)]
        tokio::select! {
            _ = self.ctrl_c.recv() => "Ctrl-C",
            _ = self.ctrl_break.recv() => "Ctrl-Break",
            _ = self.close.recv() => "the console's closing",
            _ = self.shutdown.recv() => "the system's shutdown",
        }
    }
}
