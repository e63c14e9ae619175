//! Questions for VS Code: an MCP tool that needs the editor (the selection, the Problems panel,
//! a language server, opening a file) asks the hosts with an `editor/query` request and waits
//! for the answer, at most [`EDITOR_TIMEOUT`].
//!
//! The request goes to every connected host through the fan-out (the window running the
//! agent's session answers, the others ignore it), and waits in the fan-out's backlog while no
//! host is connected, as during a window reload: a reload that ends within the timeout still
//! gets the question answered.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::value::RawValue;
use tether_core::jsonrpc::{RequestId, RpcError, encode_request};
use tether_core::sidecar::{EditorAnswer, EditorQueryParams, method};
use tokio::sync::oneshot;

use crate::fanout::Fanout;

/// How long a tool waits for VS Code unless told otherwise (`tetherd serve --editor-timeout-ms`).
/// A language server that is still starting can take a few seconds; an agent should not wait much
/// longer than that for one tool.
pub const EDITOR_TIMEOUT: Duration = Duration::from_secs(15);

/// The prefix of the ids tetherd gives its requests to the hosts, so that a response to one is
/// told apart from anything else at a glance in the logs.
const ID_PREFIX: &str = "editor-";

/// Why VS Code gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("VS Code did not answer within {:.1} seconds (is the window open?)", .0.as_secs_f64())]
    Timeout(Duration),
    #[error("VS Code could not answer: {0}")]
    Host(String),
    #[error("VS Code answered something tetherd does not understand: {0}")]
    BadAnswer(String),
}

type Waiting = oneshot::Sender<Result<String, RpcError>>;

/// The questions waiting for an answer.
#[derive(Debug)]
pub struct EditorQueries {
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, Waiting>>,
    /// How long a question waits for its answer.
    timeout: Duration,
}

impl EditorQueries {
    pub fn new(timeout: Duration) -> Self {
        Self { next_id: AtomicU64::new(0), waiting: Mutex::default(), timeout }
    }

    /// How long a question waits for its answer.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Waiting>> {
        // Every critical section is one insert or one remove.
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Asks the hosts and waits for the first answer.
    pub async fn ask(&self, fanout: &Fanout, params: &EditorQueryParams) -> Result<EditorAnswer, EditorError> {
        let number = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.waiting().insert(number, sender);
        let id = RequestId::Str(format!("{ID_PREFIX}{number}"));
        let asked = async {
            fanout.publish(encode_request(&id, method::EDITOR_QUERY, params)).await;
            receiver.await
        };
        let answer = tokio::time::timeout(self.timeout, asked).await;
        // Whatever happened, nobody waits any more (a late answer finds nothing and is dropped).
        self.waiting().remove(&number);
        match answer {
            Err(_elapsed) => Err(EditorError::Timeout(self.timeout)),
            Ok(Err(_dropped)) => Err(EditorError::Host("the question was dropped".to_owned())),
            Ok(Ok(Err(error))) => Err(EditorError::Host(error.message)),
            Ok(Ok(Ok(result))) => {
                serde_json::from_str(&result).map_err(|error| EditorError::BadAnswer(error.to_string()))
            }
        }
    }

    /// A host answered. Returns false when the response is not to a question of ours (or it was
    /// answered already, by another window, or given up on).
    pub fn answer(&self, id: &RequestId, result: Result<&RawValue, RpcError>) -> bool {
        let RequestId::Str(id) = id else { return false };
        let Some(number) = id.strip_prefix(ID_PREFIX).and_then(|number| number.parse::<u64>().ok()) else {
            return false;
        };
        let Some(sender) = self.waiting().remove(&number) else { return false };
        // The tool call may have ended in between (its agent went away); nothing then waits.
        let _nobody_waits = sender.send(result.map(|raw| raw.get().to_owned()));
        true
    }
}
