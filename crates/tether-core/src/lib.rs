//! Tether's protocol core: everything that decides what a message means, and nothing that
//! touches the outside world.
//!
//! Bytes and events go in through `handle_*` methods; lines to send, view patches and host
//! actions come out through `poll_*` methods; the time is always a parameter (milliseconds on a
//! monotonic clock the caller owns). No IO, no clock, no threads: the same code runs natively in
//! tetherd and in tests, and as WASM in the VS Code host.
//!
//! Layers, from the bytes up:
//! - [`framing`]: NDJSON bytes in any chunking → whole lines, with bounded memory.
//! - [`jsonrpc`]: JSON-RPC 2.0 messages, outgoing request ids, pending requests and timeouts.
//! - [`acp`]: the ACP client engine for one agent connection, folding `session/update` into a
//!   [`thread::Thread`], and answering permission requests by the person's
//!   [`permissions::PermissionPolicy`] (mode and rules) before asking them.
//! - [`host`]: the host's whole brain: the tetherd connection ([`sidecar`] wire), the agents, the
//!   webview ([`webview`] wire) and VS Code commands ([`host_api`]).
//!
//! TypeScript for the wire types is generated from this crate (`cargo xtask codegen`); a test
//! fails when the committed file is stale.

pub mod acp;
pub mod claude_cli;
pub mod export;
pub mod files;
pub mod framing;
pub mod host;
pub mod host_api;
pub mod intent;
pub(crate) mod json_value;
pub mod jsonrpc;
pub mod mcp_settings;
pub mod mentions;
pub mod permissions;
pub mod profiles;
pub mod review;
pub mod session_log;
pub mod sidecar;
pub mod terminal_screen;
pub mod thread;
#[cfg(feature = "typescript")]
pub mod typescript;
pub mod webview;
pub mod workspace_path;
