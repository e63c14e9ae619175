//! JSON-RPC 2.0 messages: parsing one line into a [`Message`], encoding the lines we send, and
//! the bookkeeping for our own requests in flight ([`Outgoing`]), including their timeouts.
//!
//! Parameters and results stay raw JSON ([`RawValue`]) borrowed from the line: they are neither
//! re-parsed nor re-escaped here, so a message can be forwarded or logged byte for byte and the
//! layer that knows the method parses its parameters exactly once (see [`parse_params`]).
//!
//! Parsing is forgiving where real peers differ and strict where a guess would be wrong:
//! - a missing `"jsonrpc"` member is accepted; any value other than `"2.0"` is not;
//! - unknown extra members are ignored;
//! - `"method"` decides: with an `"id"` the message is a request, without one a notification;
//! - without `"method"`, a message with an `"id"` and exactly one of `"result"` / `"error"` is a
//!   response (an `"error": null` beside a `"result"`, as JSON-RPC 1.0 peers send, counts as no
//!   error);
//! - `"params": null` is treated as absent;
//! - ids are integers, strings or `null`;
//! - batches (JSON arrays) are refused: ACP never sends them.
//!
//! Time is an input: deadlines are milliseconds on whatever monotonic clock the caller owns.

use std::borrow::Cow;
use std::collections::BTreeMap;

pub use agent_client_protocol_schema::v1::{Error as RpcError, ErrorCode, RequestId};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// The version string every message we send carries, and the only one we accept.
pub const JSONRPC_VERSION: &str = "2.0";

/// How much of an offending value an error message quotes.
const QUOTE_LIMIT: usize = 80;

/// One JSON-RPC message, borrowing from the line it was parsed from.
#[derive(Debug, Clone)]
pub enum Message<'a> {
    /// A call that expects a response carrying the same `id`.
    Request { id: RequestId, method: Cow<'a, str>, params: Option<&'a RawValue> },
    /// A call that expects no response.
    Notification { method: Cow<'a, str>, params: Option<&'a RawValue> },
    /// The answer to a request: its result, or the error the peer reported.
    Response { id: RequestId, result: Result<&'a RawValue, RpcError> },
}

impl Message<'_> {
    /// The method of a request or notification; `None` for a response.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request { method, .. } | Message::Notification { method, .. } => Some(method),
            Message::Response { .. } => None,
        }
    }

    /// The id of a request or response; `None` for a notification.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request { id, .. } | Message::Response { id, .. } => Some(id),
            Message::Notification { .. } => None,
        }
    }
}

/// Why a line is not a JSON-RPC message. Each maps to the error response JSON-RPC prescribes,
/// so the peer learns what was wrong instead of waiting forever.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all. Answered with -32700 and a `null` id (the id could not be read).
    #[error("not JSON: {message}")]
    NotJson { message: String },
    /// JSON, but not a JSON-RPC message. Answered with -32600, carrying the id when it could be
    /// read so the peer can match the error to its request.
    #[error("not a JSON-RPC message: {reason}")]
    Invalid { id: Option<RequestId>, reason: String },
}

impl ParseError {
    /// The error object to send back to the peer.
    pub fn to_rpc_error(&self) -> RpcError {
        match self {
            ParseError::NotJson { message } => {
                RpcError::new(ErrorCode::ParseError.into(), format!("Parse error: {message}"))
            }
            ParseError::Invalid { reason, .. } => {
                RpcError::new(ErrorCode::InvalidRequest.into(), format!("Invalid request: {reason}"))
            }
        }
    }

    /// The id the error response must carry: the message's own id when it could be read,
    /// `null` otherwise.
    pub fn response_id(&self) -> RequestId {
        match self {
            ParseError::Invalid { id: Some(id), .. } => id.clone(),
            ParseError::NotJson { .. } | ParseError::Invalid { id: None, .. } => RequestId::Null,
        }
    }
}

/// The members of a JSON-RPC message we look at, each kept raw. A member that is present, even
/// as `null`, is `Some`: a `null` id and a `null` result both mean something.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Deserializes a member that is present, whatever its value (`Option`'s own deserializer would
/// turn `null` into `None`).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// Parses one line (as returned by [`crate::framing::LineFramer`]) into a message.
pub fn parse_message(line: &str) -> Result<Message<'_>, ParseError> {
    let trimmed = line.trim_start();
    if !trimmed.starts_with('{') {
        // Not an object: find out whether it is JSON at all, for the right error code.
        return Err(match serde_json::from_str::<&RawValue>(line) {
            Err(error) => ParseError::NotJson { message: error.to_string() },
            Ok(_) if trimmed.starts_with('[') => {
                ParseError::Invalid { id: None, reason: "batches are not supported".to_owned() }
            }
            Ok(value) => {
                ParseError::Invalid { id: None, reason: format!("expected a JSON object, got {}", quote(value.get())) }
            }
        });
    }
    let envelope: Envelope<'_> = serde_json::from_str(line).map_err(|error| {
        if error.is_data() {
            // Valid JSON the envelope still refuses, such as a member given twice.
            ParseError::Invalid { id: None, reason: error.to_string() }
        } else {
            ParseError::NotJson { message: error.to_string() }
        }
    })?;

    let id = match envelope.id {
        Some(raw) => Some(parse_id(raw)?),
        None => None,
    };
    let invalid = |reason: String| ParseError::Invalid { id: id.clone(), reason };

    if let Some(version) = envelope.jsonrpc
        && serde_json::from_str::<String>(version.get()).ok().as_deref() != Some(JSONRPC_VERSION)
    {
        return Err(invalid(format!(
            "unsupported \"jsonrpc\" version {} (expected \"{JSONRPC_VERSION}\")",
            quote(version.get())
        )));
    }

    if let Some(method) = envelope.method {
        let method = parse_method(method).map_err(invalid)?;
        let params = envelope.params.filter(|params| params.get() != "null");
        return Ok(match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        });
    }

    let error = envelope.error.filter(|error| !(error.get() == "null" && envelope.result.is_some()));
    let result = match (envelope.result, error) {
        (Some(_), Some(_)) => {
            return Err(invalid("a response cannot have both \"result\" and \"error\"".to_owned()));
        }
        (None, None) => return Err(invalid("missing \"method\"".to_owned())),
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(parse_error_object(error)),
    };
    let Some(id) = id else {
        return Err(invalid("a response needs an \"id\"".to_owned()));
    };
    Ok(Message::Response { id, result })
}

/// Reads an id: an integer, a string or `null`.
fn parse_id(raw: &RawValue) -> Result<RequestId, ParseError> {
    let value: serde_json::Value = serde_json::from_str(raw.get()).map_err(|_| bad_id(raw))?;
    match value {
        serde_json::Value::Null => Ok(RequestId::Null),
        serde_json::Value::String(id) => Ok(RequestId::Str(id)),
        serde_json::Value::Number(number) => match number.as_i64() {
            Some(number) => Ok(RequestId::Number(number)),
            None => Err(bad_id(raw)),
        },
        _ => Err(bad_id(raw)),
    }
}

fn bad_id(raw: &RawValue) -> ParseError {
    ParseError::Invalid {
        id: None,
        reason: format!("\"id\" must be a string, null or an integer of at most 64 bits, got {}", quote(raw.get())),
    }
}

/// Reads a method name, borrowing it from the line unless it contains escapes.
fn parse_method(raw: &RawValue) -> Result<Cow<'_, str>, String> {
    if let Ok(borrowed) = serde_json::from_str::<&str>(raw.get()) {
        return Ok(Cow::Borrowed(borrowed));
    }
    serde_json::from_str::<String>(raw.get())
        .map(Cow::Owned)
        .map_err(|_| format!("\"method\" must be a string, got {}", quote(raw.get())))
}

/// Reads the `error` member of a response. A peer that answers with a malformed error object
/// still answered: the request gets an internal error that shows what the peer sent, rather than
/// waiting for a response that will never come.
fn parse_error_object(raw: &RawValue) -> RpcError {
    serde_json::from_str::<RpcError>(raw.get()).unwrap_or_else(|error| {
        let sent: serde_json::Value = serde_json::from_str(raw.get()).unwrap_or(serde_json::Value::Null);
        RpcError::new(
            ErrorCode::InternalError.into(),
            format!("the peer answered with a malformed error object: {error}"),
        )
        .data(sent)
    })
}

/// The start of a JSON value, for error messages.
fn quote(json: &str) -> String {
    match json.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{}…", &json[..cut]),
        None => json.to_owned(),
    }
}

/// Parses a request's or notification's parameters into the type its method expects.
///
/// Absent parameters parse as `null` (so `()` and `Option` work) or, failing that, as `{}` (so a
/// struct whose fields are all optional works). On failure the error is -32602 invalid params
/// with serde's explanation in the message.
pub fn parse_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, RpcError> {
    let parsed = match params {
        Some(params) => serde_json::from_str(params.get()),
        None => serde_json::from_str("null").or_else(|_| serde_json::from_str("{}")),
    };
    parsed.map_err(|error| RpcError::new(ErrorCode::InvalidParams.into(), format!("Invalid params: {error}")))
}

/// The error for a request whose method we do not handle (-32601), naming the method.
pub fn method_not_found(method: &str) -> RpcError {
    RpcError::new(ErrorCode::MethodNotFound.into(), format!("Method not found: {method}"))
}

/// Encodes a request (no trailing newline). Parameters that serialize to `null`, such as `()`,
/// are left out, since some peers reject `"params": null`.
///
/// Encoding cannot fail for the protocol's types. Should a `Serialize` implementation ever fail,
/// the line is an encoded -32603 internal error response instead, so nothing panics and the
/// failure shows up in the wire log.
pub fn encode_request(id: &RequestId, method: &str, params: &impl Serialize) -> String {
    encode(id, |out| {
        write_id(out, id);
        write_method(out, method)?;
        write_params(out, params)
    })
}

/// Encodes a notification (no trailing newline). Failure handling as for [`encode_request`]
/// (the internal error carries a `null` id).
pub fn encode_notification(method: &str, params: &impl Serialize) -> String {
    encode(&RequestId::Null, |out| {
        write_method(out, method)?;
        write_params(out, params)
    })
}

/// Encodes a successful response (no trailing newline). Failure handling as for
/// [`encode_request`].
pub fn encode_result(id: &RequestId, result: &impl Serialize) -> String {
    encode(id, |out| {
        write_id(out, id);
        out.extend_from_slice(br#","result":"#);
        serde_json::to_writer(&mut *out, result)
    })
}

/// Encodes an error response (no trailing newline). Failure handling as for [`encode_request`].
pub fn encode_error(id: &RequestId, error: &RpcError) -> String {
    encode(id, |out| {
        write_id(out, id);
        out.extend_from_slice(br#","error":"#);
        serde_json::to_writer(&mut *out, error)
    })
}

/// The id of a response encoded by [`encode_result`] or [`encode_error`]; `None` for anything
/// else (a request, a notification). Reads only the start of the line, so it costs the same
/// whatever the response carries.
pub fn response_id(line: &str) -> Option<RequestId> {
    let rest = line.strip_prefix(r#"{"jsonrpc":"2.0","id":"#)?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
    let id = match values.next()?.ok()? {
        serde_json::Value::Null => RequestId::Null,
        serde_json::Value::String(id) => RequestId::Str(id),
        serde_json::Value::Number(number) => RequestId::Number(number.as_i64()?),
        _ => return None,
    };
    let after = &rest[values.byte_offset()..];
    (after.starts_with(r#","result":"#) || after.starts_with(r#","error":"#)).then_some(id)
}

/// Runs `write_members` after the `{"jsonrpc":"2.0"` opening, closes the object, and falls back to
/// an internal error response carrying `fallback_id` when anything fails.
fn encode(fallback_id: &RequestId, write_members: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>) -> String {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    let written = write_members(&mut out).and_then(|()| {
        out.push(b'}');
        String::from_utf8(out).map_err(|_| serde::ser::Error::custom("serde_json produced bytes that are not UTF-8"))
    });
    written.unwrap_or_else(|error| encode_internal_error(fallback_id, &error.to_string()))
}

/// An internal error response built by hand from values whose encoding cannot fail.
fn encode_internal_error(id: &RequestId, detail: &str) -> String {
    let message = serde_json::Value::from(format!("Internal error: could not encode a message: {detail}"));
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{},"message":{message}}}}}"#,
        id_json(id),
        i32::from(ErrorCode::InternalError),
    )
}

fn id_json(id: &RequestId) -> String {
    match id {
        RequestId::Null => "null".to_owned(),
        RequestId::Number(number) => number.to_string(),
        RequestId::Str(text) => serde_json::Value::from(text.as_str()).to_string(),
    }
}

fn write_id(out: &mut Vec<u8>, id: &RequestId) {
    out.extend_from_slice(br#","id":"#);
    out.extend_from_slice(id_json(id).as_bytes());
}

fn write_method(out: &mut Vec<u8>, method: &str) -> serde_json::Result<()> {
    out.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut *out, method)
}

fn write_params(out: &mut Vec<u8>, params: &impl Serialize) -> serde_json::Result<()> {
    let before = out.len();
    out.extend_from_slice(br#","params":"#);
    let value_start = out.len();
    serde_json::to_writer(&mut *out, params)?;
    if &out[value_start..] == b"null" {
        out.truncate(before);
    }
    Ok(())
}

/// One of our requests waiting for its response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending<T> {
    /// The method we called, for logs and for errors about the request.
    pub method: String,
    /// Whatever the caller needs to route the response (which session, which UI request...).
    pub tag: T,
    /// When to give up waiting, in the caller's milliseconds; `None` waits for ever.
    pub deadline: Option<u64>,
}

/// Our requests in flight on one connection. Ids are 0, 1, 2, ... as [`RequestId::Number`],
/// never reused on the connection.
#[derive(Debug, Clone)]
pub struct Outgoing<T> {
    next_id: i64,
    pending: BTreeMap<RequestId, Pending<T>>,
}

impl<T> Default for Outgoing<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Outgoing<T> {
    pub fn new() -> Self {
        Self { next_id: 0, pending: BTreeMap::new() }
    }

    /// Allocates an id, records the request as pending, returns (id, encoded line).
    pub fn request(
        &mut self,
        method: &str,
        params: &impl Serialize,
        tag: T,
        deadline: Option<u64>,
    ) -> (RequestId, String) {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let line = encode_request(&id, method, params);
        self.pending.insert(id.clone(), Pending { method: method.to_owned(), tag, deadline });
        (id, line)
    }

    /// Records a request that was sent earlier under `id` (read back from a session's log), so
    /// that its response is recognised. Later ids continue after it.
    pub fn record_sent(&mut self, id: RequestId, method: &str, tag: T) {
        if let RequestId::Number(number) = id {
            self.next_id = self.next_id.max(number + 1);
        }
        self.pending.insert(id, Pending { method: method.to_owned(), tag, deadline: None });
    }

    /// A response arrived: the pending request it answers, or None for an unknown id.
    pub fn take(&mut self, id: &RequestId) -> Option<Pending<T>> {
        self.pending.remove(id)
    }

    /// The pending request with this id, if any, without removing it.
    pub fn get(&self, id: &RequestId) -> Option<&Pending<T>> {
        self.pending.get(id)
    }

    /// Removes and returns every pending request whose deadline is <= now, in id order.
    pub fn expire(&mut self, now: u64) -> Vec<(RequestId, Pending<T>)> {
        let expired: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, pending)| pending.deadline.is_some_and(|deadline| deadline <= now))
            .map(|(id, _)| id.clone())
            .collect();
        expired.into_iter().filter_map(|id| self.pending.remove(&id).map(|pending| (id, pending))).collect()
    }

    /// The earliest deadline among the pending requests: when the caller should next call
    /// [`expire`](Self::expire).
    pub fn next_deadline(&self) -> Option<u64> {
        self.pending.values().filter_map(|pending| pending.deadline).min()
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Iterates over the pending requests in id order.
    pub fn iter(&self) -> impl Iterator<Item = (&RequestId, &Pending<T>)> {
        self.pending.iter()
    }

    /// Removes every pending request (the connection was lost), in id order.
    pub fn drain(&mut self) -> Vec<(RequestId, Pending<T>)> {
        std::mem::take(&mut self.pending).into_iter().collect()
    }
}
