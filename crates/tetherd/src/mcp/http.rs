//! The Streamable HTTP transport of Tether's MCP server, on 127.0.0.1, for agents that say they
//! speak it (`mcpCapabilities.http`): no process to start, one connection per agent.
//!
//! A request is served only when:
//! - it carries `Authorization: Bearer <token>` with a live agent's token (else 401; the token
//!   is the only thing that tells one agent from another, and from anything else on the machine
//!   that can reach a loopback port);
//! - its `Host` is this listener's loopback address (else 403: a web page that re-binds a DNS
//!   name to 127.0.0.1 sends its own name);
//! - it carries no `Origin` (else 403: agents are not browsers, and a browser always sends one).
//!
//! The last two are rmcp's own checks, configured here; the first is ours, in front of it.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_service::Service as _;

use super::McpServer;
use super::tools::TetherTools;

/// The path the transport answers on.
pub const PATH: &str = "/mcp";

type Body = BoxBody<Bytes, Infallible>;

/// Listens on a free loopback port and serves until `stop` is cancelled. Returns once listening;
/// the address is recorded in `server` for the offers made from then on.
pub async fn start(server: Arc<McpServer>, stop: CancellationToken) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    server.set_http_url(format!("http://{address}{PATH}"));
    let port = address.port();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts([format!("127.0.0.1:{port}"), format!("localhost:{port}")])
        .enforce_origin_validation()
        .with_cancellation_token(stop.child_token());
    let tools = server.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(TetherTools::for_http(tools.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    tokio::spawn(accept(listener, server, mcp, stop));
    Ok(address)
}

async fn accept(
    listener: TcpListener,
    server: Arc<McpServer>,
    mcp: StreamableHttpService<TetherTools, LocalSessionManager>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => return,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(error) => {
                tracing::warn!(%error, "accepting an MCP HTTP connection failed");
                // Typically out of file descriptors: give the system a moment.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let server = server.clone();
        let mcp = mcp.clone();
        let service = hyper::service::service_fn(move |request| {
            let server = server.clone();
            let mut mcp = mcp.clone();
            async move { Ok::<_, Infallible>(route(request, &server, &mut mcp).await) }
        });
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(error) = connection.await {
                tracing::debug!(%error, "an MCP HTTP connection ended with an error");
            }
        });
    }
}

/// Checks the path and the bearer token, then hands the request to rmcp with its grant.
async fn route(
    mut request: Request<Incoming>,
    server: &McpServer,
    mcp: &mut StreamableHttpService<TetherTools, LocalSessionManager>,
) -> Response<Body> {
    if request.uri().path() != PATH {
        return plain(StatusCode::NOT_FOUND, "not found: Tether's MCP server answers on /mcp");
    }
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    let Some(token) = token else {
        return plain(StatusCode::UNAUTHORIZED, "unauthorized: a bearer token is required");
    };
    let Some(grant) = server.grants.check(token, |agent| server.registry.is_live(agent)) else {
        return plain(StatusCode::UNAUTHORIZED, "unauthorized: this token opens nothing (its agent may have exited)");
    };
    request.extensions_mut().insert(grant);
    match mcp.call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
