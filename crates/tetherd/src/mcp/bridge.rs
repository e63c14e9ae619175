//! The stdio transport of Tether's MCP server, both ends of it.
//!
//! `tetherd mcp` ([`run`]) is what an agent starts from its `mcpServers`: it connects to the
//! tetherd that offered it (the socket in [`SOCKET_ENV`]), presents the agent's token
//! ([`TOKEN_ENV`]) in `mcp/hello`, and once accepted copies bytes both ways, stdin to the socket
//! and the socket to stdout, until either side ends. It understands nothing of MCP; the server
//! runs in tetherd ([`serve_connection`]), which is where the workspace, the hosts and the logs
//! are.
//!
//! The bridge sends nothing after `mcp/hello` before its answer, so that a refused bridge has
//! passed nothing on; tetherd still hands whatever it read past the hello line to the server.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use interprocess::local_socket::tokio::Stream;
use interprocess::local_socket::traits::tokio::Stream as _;
use interprocess::local_socket::{GenericFilePath, ToFsName};
use rmcp::ServiceExt as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use tether_core::jsonrpc::{Message, RequestId, encode_request, parse_message};
use tether_core::sidecar::{McpHelloParams, method};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::grants::Grant;
use super::tools::TetherTools;
use super::{McpServer, SOCKET_ENV, TOKEN_ENV};

/// How long the bridge waits for tetherd's answer to `mcp/hello`.
const HELLO_ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest answer to `mcp/hello` the bridge reads.
const MAX_HELLO_ANSWER_BYTES: u64 = 64 * 1024;

/// `tetherd mcp`: the bridge between an agent's stdio and tetherd's socket.
pub fn run() -> anyhow::Result<ExitCode> {
    let socket = std::env::var_os(SOCKET_ENV)
        .with_context(|| format!("{SOCKET_ENV} is not set: `tetherd mcp` is started by an agent Tether ran"))?;
    let token = std::env::var(TOKEN_ENV)
        .with_context(|| format!("{TOKEN_ENV} is not set: `tetherd mcp` is started by an agent Tether ran"))?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let name = std::path::PathBuf::from(&socket)
            .to_fs_name::<GenericFilePath>()
            .with_context(|| format!("{} cannot name a local socket", socket.to_string_lossy()))?;
        let stream = Stream::connect(name).await.with_context(|| {
            format!("cannot reach tetherd at {} (has the VS Code window closed?)", socket.to_string_lossy())
        })?;
        let stream = SharedStream(Arc::new(stream));
        let (receive, mut send) = (stream.clone(), stream);
        let hello = encode_request(&RequestId::Number(0), method::MCP_HELLO, &McpHelloParams { token });
        send.write_all(format!("{hello}\n").as_bytes()).await.context("cannot write to tetherd")?;

        let mut from_tetherd = BufReader::new(receive);
        let mut answer = String::new();
        let read = tokio::time::timeout(
            HELLO_ANSWER_TIMEOUT,
            (&mut from_tetherd).take(MAX_HELLO_ANSWER_BYTES).read_line(&mut answer),
        )
        .await
        .context("tetherd did not answer mcp/hello")?
        .context("cannot read from tetherd")?;
        if read == 0 {
            bail!("tetherd closed the connection without answering mcp/hello");
        }
        match parse_message(answer.trim_end()) {
            Ok(Message::Response { result: Ok(_), .. }) => {}
            Ok(Message::Response { result: Err(error), .. }) => {
                bail!("tetherd refused the MCP bridge: {}", error.message)
            }
            _ => bail!("tetherd answered mcp/hello with something else than a response"),
        }

        // What is buffered in `from_tetherd` comes out of it first, so nothing read past the
        // answer is lost.
        let mut stdin = tokio::io::stdin();
        let mut stdout = tokio::io::stdout();
        let upstream = async {
            tokio::io::copy(&mut stdin, &mut send).await?;
            // The agent closed our stdin: it is done with the server.
            send.shutdown().await
        };
        let downstream = async {
            tokio::io::copy(&mut from_tetherd, &mut stdout).await?;
            stdout.flush().await
        };
        tokio::select! {
            result = upstream => result.context("copying the agent's requests to tetherd")?,
            result = downstream => result.context("copying tetherd's answers to the agent")?,
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Serves MCP on a socket connection whose `mcp/hello` was accepted with `grant`, until the
/// bridge closes it. `already_read` is what the connection read past the hello line.
pub async fn serve_connection(stream: Stream, already_read: Vec<u8>, grant: Arc<Grant>, server: Arc<McpServer>) {
    let agent_id = grant.agent_id;
    let stream = SharedStream(Arc::new(stream));
    let receive = std::io::Cursor::new(already_read).chain(stream.clone());
    let send = stream;
    let tools = TetherTools::for_connection(server, grant);
    match tools.serve((receive, send)).await {
        Err(error) => tracing::info!(agent_id, %error, "an MCP bridge connection failed to start"),
        Ok(running) => {
            tracing::info!(agent_id, "MCP bridge connected");
            match running.waiting().await {
                Ok(reason) => tracing::info!(agent_id, ?reason, "MCP bridge disconnected"),
                Err(error) => tracing::info!(agent_id, %error, "MCP bridge connection ended"),
            }
        }
    }
}

/// A local socket shared by the task reading it and the one writing it: `&Stream` reads and
/// writes, but rmcp and tokio's `copy` want owned ends. (interprocess's own `split` is deprecated
/// for this: dropping one half would not shut anything down, which the owners here never rely
/// on; the bridge shuts its writing side down itself.)
#[derive(Debug, Clone)]
struct SharedStream(Arc<Stream>);

impl AsyncRead for SharedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut &*self.0).poll_read(context, buffer)
    }
}

impl AsyncWrite for SharedStream {
    fn poll_write(self: Pin<&mut Self>, context: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut &*self.0).poll_write(context, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut &*self.0).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut &*self.0).poll_shutdown(context)
    }
}
