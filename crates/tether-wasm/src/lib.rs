//! The wasm-bindgen facade: the VS Code host's handle on tether-core's [`HostEngine`], and on
//! tether-diff for the diff card and per-hunk review.
//!
//! Every shim is the same shape: convert the JS arguments at the edge, call the engine, convert
//! the result back. The engine's structured values cross as JSON text: what the host passes in
//! comes as UTF-8 bytes (`&[u8]`, which cross into WASM about twice as fast as strings) that
//! serde_json reads, and what comes out is one JSON string the host hands to `JSON.parse`. A
//! conversion object by object (serde-wasm-bindgen) makes a boundary call for every field of
//! every value; a streaming turn's patches, a long thread's snapshot and every poll for actions
//! are cheaper as text, read in one go by JavaScript's own parser. Pending actions come out all
//! at once (`pollActions`). Messages for the chat webview are the exception: they come out as
//! UTF-8 JSON bytes (`takeWebviewPost`) that the host posts on unread, because VS Code moves a
//! `Uint8Array` to the webview as it is, where an object is encoded as JSON in the extension
//! host, decoded in the workbench, and cloned again into the webview's frame: for a burst of
//! entries that is megabytes through every step (see ARCHITECTURE.md, the webview). Errors
//! become a JS `Error` with the message; nothing in here should panic.
//!
//! A panic cannot be caught here: `wasm32-unknown-unknown` builds with `panic = "abort"`, so a
//! panic traps (`RuntimeError: unreachable`) and leaves the `Engine` borrowed for good, and every
//! later call on it fails. Catching it with `catch_unwind` would need a nightly toolchain
//! rebuilding std with unwinding, and would still leave an engine whose state the panic cut off
//! half-way. So the host handles it instead: the panic hook installed by [`Engine::new`] hands the
//! panic's message and place to the host's `onPanic` callback before the trap, and the host throws
//! the whole WASM instance away and starts a fresh engine, which re-attaches to tetherd's live
//! session as a window reload does.
//!
//! The JSON each shim takes or gives is the generated wire type its documentation names
//! (`extension/src/generated/protocol.ts`), so the host is type-checked against the Rust
//! definitions where it encodes and parses. tether-diff's shapes are not part of any wire, so
//! they are declared here, next to the shim that returns them.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::PanicHookInfo;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tether_core::host::HostEngine;
use tether_core::host_api::{EngineConfig, FileReadReply, HostAction, HostCommand};
use tether_core::intent::Intent;
use tether_core::webview::WebviewToHost;
use tether_diff::Budget;
use wasm_bindgen::prelude::*;

/// The protocol brain of one VS Code window. Time is passed in by the host as milliseconds since
/// the Unix epoch on a monotonic clock (`performance.timeOrigin + performance.now()`), the scale of
/// the session logs' times.
#[wasm_bindgen]
pub struct Engine {
    inner: HostEngine,
    /// The messages of the `postWebview` actions of the last `pollActions`, as UTF-8 JSON, the
    /// first first; `takeWebviewPost` hands them out.
    webview_posts: VecDeque<Vec<u8>>,
    /// The prompt text that makes `handleWebview` panic, set only by `panicOnPromptForTesting`.
    panic_on_prompt: Option<String>,
}

thread_local! {
    /// The host's `onPanic` callback of the newest engine. WASM here has one thread, and each
    /// WASM instance has its own copy of this, so an engine in a fresh instance reports to its
    /// own host.
    static PANIC_LISTENER: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
}

#[wasm_bindgen]
impl Engine {
    /// `config` is an `EngineConfig` as JSON (UTF-8). `onPanic` is called with a panic's message
    /// and place (`message (file:line:column)`) when the engine panics, just before the call
    /// that panicked fails with a `RuntimeError`. The engine is unusable after that: the host
    /// starts a new one in a fresh WASM instance.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config: &[u8],
        #[wasm_bindgen(js_name = onPanic, unchecked_param_type = "(message: string) => void")]
        on_panic: js_sys::Function,
    ) -> Result<Engine, JsError> {
        PANIC_LISTENER.with(|listener| *listener.borrow_mut() = Some(on_panic));
        std::panic::set_hook(Box::new(report_panic));
        let config: EngineConfig = from_json(config, "EngineConfig")?;
        Ok(Engine { inner: HostEngine::new(config), webview_posts: VecDeque::new(), panic_on_prompt: None })
    }

    /// For tests only: a prompt with exactly this text makes `handleWebview` panic, as a bug in
    /// the engine would. The host calls this only when its test environment asks for it, never
    /// for anything an agent or a workspace sends.
    #[wasm_bindgen(js_name = panicOnPromptForTesting)]
    pub fn panic_on_prompt_for_testing(&mut self, text: String) {
        self.panic_on_prompt = Some(text);
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

    /// A message the chat webview posted: a `WebviewToHost` as JSON (UTF-8).
    #[wasm_bindgen(js_name = handleWebview)]
    pub fn handle_webview(&mut self, message: &[u8], now_ms: f64) -> Result<(), JsError> {
        let message: WebviewToHost = from_json(message, "WebviewToHost")?;
        if let (WebviewToHost::Intent(Intent::Prompt { text, .. }), Some(trigger)) = (&message, &self.panic_on_prompt)
            && text == trigger
        {
            panic!("the test prompt {text:?} asked the engine to panic");
        }
        self.inner.handle_webview(message, millis(now_ms));
        Ok(())
    }

    /// A VS Code command, or changed settings: a `HostCommand` as JSON (UTF-8).
    #[wasm_bindgen(js_name = handleCommand)]
    pub fn handle_command(&mut self, command: &[u8], now_ms: f64) -> Result<(), JsError> {
        let command: HostCommand = from_json(command, "HostCommand")?;
        self.inner.handle_command(command, millis(now_ms));
        Ok(())
    }

    /// The answer to a `readFile` action: what happened (a `FileReadReply` as JSON, UTF-8), and
    /// the bytes read (empty unless the outcome is `data`).
    #[wasm_bindgen(js_name = handleFileRead)]
    pub fn handle_file_read(&mut self, reply: &[u8], data: &[u8], now_ms: f64) -> Result<(), JsError> {
        let reply: FileReadReply = from_json(reply, "FileReadReply")?;
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

    /// Everything the host must do now, in order: a JSON array of `HostAction`s, or the empty
    /// string when there is nothing (the common answer while an agent streams, so it costs no
    /// parse). A `postWebview` action comes without its `message`: the host takes each one's
    /// from `takeWebviewPost`, in the same order, before it polls again.
    #[wasm_bindgen(js_name = pollActions)]
    pub fn poll_actions(&mut self) -> Result<String, JsError> {
        // Messages the host did not take (it failed half-way through the last batch) are for
        // actions it will never carry out: the next one must not be handed one of them.
        self.webview_posts.clear();
        let mut actions = std::iter::from_fn(|| self.inner.poll_action()).peekable();
        if actions.peek().is_none() {
            return Ok(String::new());
        }
        let webview_posts = &mut self.webview_posts;
        json_array(actions.map(|action| match action {
            HostAction::PostWebview { message } => {
                webview_posts.push_back(serde_json::to_vec(&message).map_err(could_not_encode)?);
                Ok(PolledAction::PostWebview { r#type: "postWebview" })
            }
            action => Ok(PolledAction::Other(action)),
        }))
    }

    /// The message of the next `postWebview` action of the last `pollActions`: a `HostToWebview`
    /// as UTF-8 JSON, for the host to post as it is (the webview reads it). `undefined` when
    /// that poll had no more.
    #[wasm_bindgen(js_name = takeWebviewPost)]
    pub fn take_webview_post(&mut self) -> Option<Vec<u8>> {
        self.webview_posts.pop_front()
    }

    /// The agents the person can choose now, in the order the pickers show them: the Demo, the
    /// built-in agents and the `tether.agents` profiles, merged; a JSON array of `AgentProfile`s.
    pub fn profiles(&self) -> Result<String, JsError> {
        to_json(&self.inner.profiles())
    }

    /// The agent picker's list: every profile, with how it stands in this window and what it
    /// said it can do; a JSON array of `ProfileView`s.
    #[wasm_bindgen(js_name = profileViews)]
    pub fn profile_views(&self) -> Result<String, JsError> {
        to_json(&self.inner.profile_views())
    }

    /// When the host must call `handleTimeout` next (same clock as `now_ms`), if ever.
    #[wasm_bindgen(js_name = pollTimeout)]
    pub fn poll_timeout(&self) -> Option<f64> {
        // Milliseconds since the host's clock origin stay far below 2^53, so this is exact.
        self.inner.poll_timeout().map(|at| at as f64)
    }
}

/// The panic hook: tells the host's `onPanic` what panicked and where, while the call that
/// panicked is still on the stack (it traps right after this returns).
fn report_panic(info: &PanicHookInfo<'_>) {
    // `panic!` with a literal carries a `&str`, with arguments a `String`.
    let payload = info.payload();
    let message =
        payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    let text = panic_text(message, info.location());
    PANIC_LISTENER.with(|listener| {
        // A listener already borrowed would mean a panic inside the hook itself; the trap that
        // follows still tells the host, without the message.
        if let Ok(listener) = listener.try_borrow()
            && let Some(listener) = listener.as_ref()
        {
            // The host's callback only records the text; if it throws, the trap still follows
            // and the host restarts the engine all the same.
            let _ = listener.call1(&JsValue::NULL, &JsValue::from_str(&text));
        }
    });
}

/// How a panic is described to the host: its message, then where in the engine it happened.
fn panic_text(message: Option<&str>, location: Option<&std::panic::Location<'_>>) -> String {
    let message = message.unwrap_or("a panic without a message");
    match location {
        Some(location) => format!("{message} ({}:{}:{})", location.file(), location.line(), location.column()),
        None => message.to_owned(),
    }
}

/// The engine's version, for the log.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

#[wasm_bindgen(typescript_custom_section)]
const TS_DIFF: &'static str = r#"
/**
 * The hunks between two texts, four numbers per hunk: the 0-based index of the first old line,
 * how many old lines are replaced, the 0-based index of the first new line, how many new lines
 * replace them. Lines keep their endings; only `\n` ends a line. `degraded` when the step budget
 * did not allow a shortest diff, so some hunks were found approximately or left coarse (they are
 * still exact: applying them gives the new text).
 */
export interface LineDiff { hunks: Uint32Array; degraded: boolean }
/**
 * The changed words of a line pair, two numbers per range: start and end (exclusive) as UTF-16
 * offsets, ready for `String.prototype.slice`. `degraded` when the budget ran out (or the changed
 * part was too long to split into words), so the ranges are coarser.
 */
export interface WordDiff { old: Uint32Array; new: Uint32Array; degraded: boolean }
"#;

/// The line hunks between two versions of a file, given as UTF-8 bytes (they cross into WASM
/// about twice as fast as strings). Only line numbers come back: the host has both texts, and
/// building a JS string for every changed line would cost more than the diff. `maxSteps` bounds
/// the search's time, 10 ns a step (see tether-diff's `Budget`; left out, the default, 10 ms):
/// past it the diff degrades to coarser but still exact hunks instead of blocking the host. `Infinity` means no limit. Invalid UTF-8 or a negative or NaN budget is an error.
#[wasm_bindgen(js_name = diffLines, unchecked_return_type = "LineDiff")]
pub fn diff_lines(
    #[wasm_bindgen(js_name = oldText)] old: &[u8],
    #[wasm_bindgen(js_name = newText)] new: &[u8],
    #[wasm_bindgen(js_name = maxSteps)] max_steps: Option<f64>,
) -> Result<JsValue, JsError> {
    let (old, new) = (utf8(old, "old text")?, utf8(new, "new text")?);
    let diff = tether_diff::diff_ranges(old, new, &budget(max_steps)?);
    let hunks = diff.hunks.iter().flat_map(|hunk| [hunk.old.start, hunk.old.count, hunk.new.start, hunk.new.count]);
    js_object(&[("hunks", numbers(hunks)?.into()), ("degraded", diff.degraded.into())])
}

/// The changed words between two versions of a line (UTF-8 bytes, as for `diffLines`), for the
/// highlights inside a changed line. `maxSteps` as for `diffLines`.
#[wasm_bindgen(js_name = diffWords, unchecked_return_type = "WordDiff")]
pub fn diff_words(
    #[wasm_bindgen(js_name = oldLine)] old: &[u8],
    #[wasm_bindgen(js_name = newLine)] new: &[u8],
    #[wasm_bindgen(js_name = maxSteps)] max_steps: Option<f64>,
) -> Result<JsValue, JsError> {
    let (old, new) = (utf8(old, "old line")?, utf8(new, "new line")?);
    let words = tether_diff::diff_words(old, new, &budget(max_steps)?);
    let utf16 = |ranges: &[tether_diff::TextRange]| {
        numbers(ranges.iter().flat_map(|range| [range.start_utf16, range.end_utf16]))
    };
    js_object(&[
        ("old", utf16(&words.old)?.into()),
        ("new", utf16(&words.new)?.into()),
        ("degraded", words.degraded.into()),
    ])
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, JsError> {
    std::str::from_utf8(bytes).map_err(|error| JsError::new(&format!("{what} is not UTF-8: {error}")))
}

/// The budget a diff shim was given: the default when left out, no limit for `Infinity`.
fn budget(max_steps: Option<f64>) -> Result<Budget, JsError> {
    step_budget(max_steps).map_err(|message| JsError::new(&message))
}

fn step_budget(max_steps: Option<f64>) -> Result<Budget, String> {
    match max_steps {
        None => Ok(Budget::DEFAULT),
        // A float cast saturates, so `Infinity` (or anything past 2^64) is the unlimited budget.
        Some(steps) if steps >= 0.0 => Ok(Budget { max_steps: steps as u64 }),
        Some(steps) => Err(format!("maxSteps must be a non-negative number, not {steps}")),
    }
}

/// Line numbers and UTF-16 offsets as one typed array, copied out of WASM memory in one go.
fn numbers(values: impl Iterator<Item = usize>) -> Result<js_sys::Uint32Array, JsError> {
    let values = u32_values(values).map_err(|message| JsError::new(&message))?;
    Ok(js_sys::Uint32Array::from(values.as_slice()))
}

fn u32_values(values: impl Iterator<Item = usize>) -> Result<Vec<u32>, String> {
    // WASM memory is at most 4 GiB, so no line number or offset of a text in it can overflow;
    // the check is for a native caller of this crate.
    values.map(|value| u32::try_from(value).map_err(|_| format!("{value} does not fit a Uint32Array"))).collect()
}

/// A plain JS object with the given properties.
fn js_object(properties: &[(&str, JsValue)]) -> Result<JsValue, JsError> {
    let object = js_sys::Object::new();
    for (name, value) in properties {
        js_sys::Reflect::set(&object, &JsValue::from_str(name), value)
            .map_err(|_| JsError::new(&format!("could not set `{name}` on a result object")))?;
    }
    Ok(object.into())
}

/// The host's clock is a non-negative fraction of milliseconds; the engine counts whole ones.
/// A negative or NaN time (a host bug) is read as 0 rather than trusted.
fn millis(now_ms: f64) -> u64 {
    if now_ms.is_finite() && now_ms > 0.0 { now_ms as u64 } else { 0 }
}

/// A value of the engine's as JSON text for the host's `JSON.parse`.
fn to_json(value: &impl Serialize) -> Result<String, JsError> {
    serde_json::to_string(value).map_err(could_not_encode)
}

/// An action as `pollActions` gives it: a post to the webview without its message, which goes
/// to the host as bytes (`takeWebviewPost`), or any other action whole.
#[derive(Serialize)]
#[serde(untagged)]
enum PolledAction {
    /// `{"type":"postWebview"}`.
    PostWebview {
        r#type: &'static str,
    },
    Other(HostAction),
}

/// Values of the engine's as one JSON array, written one after the other.
fn json_array<T: Serialize>(values: impl Iterator<Item = Result<T, JsError>>) -> Result<String, JsError> {
    let mut json = vec![b'['];
    for (index, value) in values.enumerate() {
        if index > 0 {
            json.push(b',');
        }
        serde_json::to_writer(&mut json, &value?).map_err(could_not_encode)?;
    }
    json.push(b']');
    // serde_json writes UTF-8 only; the check costs a pass over bytes still in the cache.
    String::from_utf8(json).map_err(|error| JsError::new(&format!("an engine value is not UTF-8: {error}")))
}

fn could_not_encode(error: serde_json::Error) -> JsError {
    JsError::new(&format!("could not convert an engine value to JSON: {error}"))
}

/// Reads a value the host encoded as JSON; `what` names its type in the error.
fn from_json<T: DeserializeOwned>(json: &[u8], what: &str) -> Result<T, JsError> {
    let invalid = |error: &dyn std::fmt::Display| JsError::new(&format!("invalid {what}: {error}"));
    // Read as a `str`, as the engine reads every other JSON: one copy of each type's reading
    // code in the module instead of a second one for byte input.
    let json = std::str::from_utf8(json).map_err(|error| invalid(&error))?;
    serde_json::from_str(json).map_err(|error| invalid(&error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_default_saturate_and_refuse_nonsense() {
        assert_eq!(step_budget(None), Ok(Budget::DEFAULT));
        assert_eq!(step_budget(Some(f64::INFINITY)), Ok(Budget::UNLIMITED));
        assert_eq!(step_budget(Some(1234.9)), Ok(Budget { max_steps: 1234 }));
        assert_eq!(step_budget(Some(-1.0)), Err("maxSteps must be a non-negative number, not -1".to_owned()));
        assert!(step_budget(Some(f64::NAN)).is_err());
    }

    #[test]
    fn a_panic_is_described_by_its_message_and_place() {
        let location = std::panic::Location::caller();
        let text = panic_text(Some("index out of bounds"), Some(location));
        assert_eq!(text, format!("index out of bounds ({}:{}:{})", file!(), location.line(), location.column()));
        assert_eq!(panic_text(None, None), "a panic without a message");
    }

    #[test]
    fn numbers_that_do_not_fit_32_bits_are_refused() {
        assert_eq!(u32_values([0, 7, u32::MAX as usize].into_iter()), Ok(vec![0, 7, u32::MAX]));
        #[cfg(target_pointer_width = "64")]
        assert!(u32_values([1 << 32].into_iter()).is_err());
    }
}
