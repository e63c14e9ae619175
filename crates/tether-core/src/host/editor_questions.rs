//! Questions an agent's MCP tools put to VS Code: tetherd asks with an `editor/query` request
//! (see `sidecar::EditorQuery`), the engine hands it to the host ([`HostAction::AskEditor`]) and
//! carries the host's answer back as the request's response.
//!
//! Only the window whose session the agent serves answers; a question about another window's
//! agent is left to that window (tetherd takes the first answer and times out the rest). What
//! waits is bounded ([`MAX_QUESTIONS_WAITING`]), and forgotten when tetherd is lost: its
//! connection, and so the questions' ids, are gone.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::host_api::{HostAction, LogLevel};
use crate::jsonrpc::{self, ErrorCode, RequestId, RpcError, parse_params};
use crate::sidecar::{EditorAnswer, EditorQueryParams};

use super::HostEngine;

/// The most questions waiting for the host at once. An agent asks one per tool call; more than
/// this at once is a runaway, refused with an error it can read.
pub(super) const MAX_QUESTIONS_WAITING: usize = 64;

/// The questions the host has not answered yet.
#[derive(Debug, Default)]
pub(super) struct EditorQuestions {
    next: u64,
    waiting: BTreeMap<u64, RequestId>,
}

impl EditorQuestions {
    /// tetherd is gone, and with it whoever waited for the answers.
    pub(super) fn forget(&mut self) {
        self.waiting.clear();
    }
}

impl HostEngine {
    /// tetherd asks a question for an agent's tool call.
    pub(super) fn on_editor_query(&mut self, id: RequestId, params: Option<&RawValue>) {
        let params: EditorQueryParams = match parse_params(params) {
            Ok(params) => params,
            Err(error) => {
                self.sidecar_write(jsonrpc::encode_error(&id, &error));
                return;
            }
        };
        let serves = self.session.as_ref().is_some_and(|slot| {
            slot.is_served_by(params.agent_id) || slot.cli_processes.contains_key(&params.agent_id)
        });
        if !serves {
            // Another window's agent (or one this window has let go): its window answers.
            return;
        }
        if self.editor_questions.waiting.len() >= MAX_QUESTIONS_WAITING {
            let error = RpcError::new(
                ErrorCode::InternalError.into(),
                format!("VS Code is still answering {MAX_QUESTIONS_WAITING} questions; ask again shortly"),
            );
            self.sidecar_write(jsonrpc::encode_error(&id, &error));
            return;
        }
        let question = self.editor_questions.next;
        self.editor_questions.next += 1;
        self.editor_questions.waiting.insert(question, id);
        self.actions.push_back(HostAction::AskEditor {
            question,
            query: params.query,
            max_results: params.max_results,
        });
    }

    /// The host answered a question (or could not).
    pub(super) fn on_editor_answered(&mut self, question: u64, answer: Option<EditorAnswer>, error: Option<String>) {
        let Some(id) = self.editor_questions.waiting.remove(&question) else {
            // tetherd was lost since, or the host answered twice.
            self.log(LogLevel::Debug, format!("an answer to editor question {question}, which nobody waits for"));
            return;
        };
        let line = match (answer, error) {
            (Some(answer), None) => jsonrpc::encode_result(&id, &answer),
            (_, error) => {
                let message = error.unwrap_or_else(|| "VS Code gave no answer".to_owned());
                jsonrpc::encode_error(&id, &RpcError::new(ErrorCode::InternalError.into(), message))
            }
        };
        self.sidecar_write(line);
    }
}
