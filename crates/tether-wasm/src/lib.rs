//! The wasm-bindgen facade: the VS Code host's handle on tether-core's [`HostEngine`], and on
//! tether-diff for the diff card and per-hunk review.
//!
//! Every shim is the same shape: convert the JS arguments at the edge (serde-wasm-bindgen for
//! structured values, `&[u8]` for socket bytes since bytes cross into WASM about twice as fast as
//! strings), call the engine, convert the result back. Errors become a JS `Error` with the
//! message; nothing in here may panic, because a panic in WASM aborts the whole engine.
//!
//! The TypeScript signatures name the generated wire types (`extension/src/generated/protocol.ts`),
//! so the host is type-checked against the Rust definitions. tether-diff's shapes are not part of
//! any wire, so they are declared here, next to the shim that returns them.

use serde::Serialize;
use tether_core::host::HostEngine;
use tether_diff::Budget;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_IMPORTS: &'static str = r#"
import type { EngineConfig, FileReadReply, HostAction, HostCommand, WebviewToHost } from "../../src/generated/protocol";
"#;

/// The protocol brain of one VS Code window. Time is passed in by the host as milliseconds on a
/// monotonic clock (`performance.now()`).
#[wasm_bindgen]
pub struct Engine {
    inner: HostEngine,
}

#[wasm_bindgen]
impl Engine {
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "EngineConfig")] config: JsValue) -> Result<Engine, JsError> {
        let config = serde_wasm_bindgen::from_value(config).map_err(invalid("EngineConfig"))?;
        Ok(Engine { inner: HostEngine::new(config) })
    }

    /// The socket to tetherd is open: the engine says hello.
    #[wasm_bindgen(js_name = handleSidecarConnected)]
    pub fn handle_sidecar_connected(&mut self, now_ms: f64) {
        self.inner.handle_sidecar_connected(millis(now_ms));
    }

    /// Bytes read from the tetherd socket, in whatever chunks the socket delivered.
    #[wasm_bindgen(js_name = handleSidecarBytes)]
    pub fn handle_sidecar_bytes(&mut self, bytes: &[u8], now_ms: f64) {
        self.inner.handle_sidecar_bytes(bytes, millis(now_ms));
    }

    /// The socket to tetherd closed (or could not be opened).
    #[wasm_bindgen(js_name = handleSidecarClosed)]
    pub fn handle_sidecar_closed(&mut self, reason: String, now_ms: f64) {
        self.inner.handle_sidecar_closed(&reason, millis(now_ms));
    }

    /// A message the chat webview posted.
    #[wasm_bindgen(js_name = handleWebview)]
    pub fn handle_webview(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "WebviewToHost")] message: JsValue,
        now_ms: f64,
    ) -> Result<(), JsError> {
        let message = serde_wasm_bindgen::from_value(message).map_err(invalid("WebviewToHost"))?;
        self.inner.handle_webview(message, millis(now_ms));
        Ok(())
    }

    /// A VS Code command, or changed settings.
    #[wasm_bindgen(js_name = handleCommand)]
    pub fn handle_command(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "HostCommand")] command: JsValue,
        now_ms: f64,
    ) -> Result<(), JsError> {
        let command = serde_wasm_bindgen::from_value(command).map_err(invalid("HostCommand"))?;
        self.inner.handle_command(command, millis(now_ms));
        Ok(())
    }

    /// The answer to a `readFile` action: what happened, and the bytes read (empty unless the
    /// outcome is `data`).
    #[wasm_bindgen(js_name = handleFileRead)]
    pub fn handle_file_read(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "FileReadReply")] reply: JsValue,
        data: &[u8],
        now_ms: f64,
    ) -> Result<(), JsError> {
        let reply = serde_wasm_bindgen::from_value(reply).map_err(invalid("FileReadReply"))?;
        self.inner.handle_file_read(reply, data, millis(now_ms));
        Ok(())
    }

    /// The chat webview was disposed: posts stop until a new one says `ready`.
    #[wasm_bindgen(js_name = handleWebviewGone)]
    pub fn handle_webview_gone(&mut self) {
        self.inner.handle_webview_gone();
    }

    /// The timer the host set from `pollTimeout` fired.
    #[wasm_bindgen(js_name = handleTimeout)]
    pub fn handle_timeout(&mut self, now_ms: f64) {
        self.inner.handle_timeout(millis(now_ms));
    }

    /// The next thing the host must do, or `undefined` when there is nothing left.
    #[wasm_bindgen(js_name = pollAction, unchecked_return_type = "HostAction | undefined")]
    pub fn poll_action(&mut self) -> Result<JsValue, JsError> {
        match self.inner.poll_action() {
            Some(action) => to_js(&action),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// When the host must call `handleTimeout` next (same clock as `now_ms`), if ever.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        // Milliseconds since the host's clock origin stay far below 2^53, so this is exact.
        self.inner.poll_timeout().map(|at| at as f64)
    }
}

/// The engine's version, for the log.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

#[wasm_bindgen(typescript_custom_section)]
const TS_DIFF: &'static str = r#"
/** `count` lines from the 0-based index `start`; `line` is the 1-based number shown to people. */
export interface LineRange { start: number; count: number; line: number }
/** The `old` lines (`removed`) are replaced by the `new` lines (`added`); lines keep their endings. */
export interface Hunk { old: LineRange; new: LineRange; removed: string[]; added: string[] }
/** The hunks between two texts, in order; `degraded` when the step budget ran out (still exact). */
export interface LineDiff { hunks: Hunk[]; degraded: boolean }
"#;

/// The line hunks between two versions of a file, given as UTF-8 bytes (they cross into WASM
/// about twice as fast as strings). `maxSteps` bounds the work (see tether-diff's `Budget`; left
/// out, the default, sized for about 16 ms of host time): past it the diff degrades to coarser but
/// still exact hunks instead of blocking the host. `Infinity` means no limit. Invalid UTF-8 or a
/// negative or NaN budget is an error.
#[wasm_bindgen(js_name = diffLines, unchecked_return_type = "LineDiff")]
pub fn diff_lines(
    #[wasm_bindgen(js_name = oldText)] old: &[u8],
    #[wasm_bindgen(js_name = newText)] new: &[u8],
    #[wasm_bindgen(js_name = maxSteps)] max_steps: Option<f64>,
) -> Result<JsValue, JsError> {
    let old = std::str::from_utf8(old).map_err(|error| JsError::new(&format!("old text is not UTF-8: {error}")))?;
    let new = std::str::from_utf8(new).map_err(|error| JsError::new(&format!("new text is not UTF-8: {error}")))?;
    let budget = match max_steps {
        None => Budget::DEFAULT,
        // A float cast saturates, so `Infinity` (or anything past 2^64) is the unlimited budget.
        Some(steps) if steps >= 0.0 => Budget { max_steps: steps as u64 },
        Some(steps) => return Err(JsError::new(&format!("maxSteps must be a non-negative number, not {steps}"))),
    };
    to_js(&tether_diff::diff_lines(old, new, &budget))
}

/// `performance.now()` is a non-negative fraction of milliseconds; the engine counts whole ones.
/// A negative or NaN time (a host bug) is read as 0 rather than trusted.
fn millis(now_ms: f64) -> u64 {
    if now_ms.is_finite() && now_ms > 0.0 { now_ms as u64 } else { 0 }
}

fn to_js(value: &impl Serialize) -> Result<JsValue, JsError> {
    // JSON-compatible: `None` becomes `null` and maps become plain objects, as the generated
    // TypeScript types say.
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|error| JsError::new(&format!("could not convert an engine value to JS: {error}")))
}

fn invalid(what: &'static str) -> impl Fn(serde_wasm_bindgen::Error) -> JsError {
    move |error| JsError::new(&format!("invalid {what}: {error}"))
}
