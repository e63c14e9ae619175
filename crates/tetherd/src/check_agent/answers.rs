//! How `check-agent` answers the agent's own requests: as a permissive client that touches
//! nothing outside the throwaway folder. Permission requests get the first allow option (or
//! `cancelled` once the turn is being cancelled, as ACP requires), `fs/*` reads and writes work
//! inside the folder only, and `terminal/*` gets a fake terminal that ran nothing and exited with
//! code 0. Every request's parameters are checked against ACP's v1 type on the way.

use std::path::{Component, Path, PathBuf};

use agent_client_protocol_schema::v1::{
    CreateTerminalRequest, KillTerminalRequest, PermissionOptionKind, ReadTextFileRequest, ReleaseTerminalRequest,
    RequestPermissionRequest, TerminalOutputRequest, WaitForTerminalExitRequest, WriteTextFileRequest,
};
use serde_json::{Value, json};
use tether_core::jsonrpc::{self, ErrorCode, RpcError};

use super::Checker;
use super::report::{Kind, Offending};

/// What the report says about the terminals the checker fakes.
const FAKE_TERMINAL_NOTE: &str =
    "terminal/create was answered with a fake terminal: nothing was run, and it reports exit code 0 with no output";

impl Checker {
    /// Answers one request of the agent's as a permissive client.
    pub(super) async fn answer_request(
        &mut self,
        method: &str,
        params: Option<&str>,
        offending: Offending,
    ) -> Result<Value, RpcError> {
        let invalid = || RpcError::new(ErrorCode::InvalidParams.into(), format!("Invalid params for {method}"));
        match method {
            "session/request_permission" => {
                let request: RequestPermissionRequest =
                    self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                let allow = request.options.iter().find(|option| {
                    matches!(option.kind, PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways)
                });
                match allow {
                    // ACP: once the client has cancelled the turn it answers permission requests
                    // with `cancelled`.
                    Some(option) if !self.cancel_sent => {
                        self.note_once(
                            Kind::ClientAnswer,
                            format!(
                                "session/request_permission was answered with the first allow option ({:?})",
                                option.option_id.0
                            ),
                        );
                        Ok(json!({ "outcome": { "outcome": "selected", "optionId": option.option_id } }))
                    }
                    _ => Ok(json!({ "outcome": { "outcome": "cancelled" } })),
                }
            }
            "fs/read_text_file" => {
                let request: ReadTextFileRequest = self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                let path = self.inside_workspace(&request.path)?;
                let content = std::fs::read_to_string(&path).map_err(|error| {
                    RpcError::new(
                        ErrorCode::ResourceNotFound.into(),
                        format!("cannot read {}: {error}", request.path.display()),
                    )
                })?;
                Ok(json!({ "content": select_lines(&content, request.line, request.limit) }))
            }
            "fs/write_text_file" => {
                let request: WriteTextFileRequest =
                    self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                let path = self.inside_workspace(&request.path)?;
                let written = path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&path, &request.content));
                written.map_err(|error| {
                    RpcError::new(
                        ErrorCode::InternalError.into(),
                        format!("cannot write {}: {error}", request.path.display()),
                    )
                })?;
                Ok(json!({}))
            }
            "terminal/create" => {
                let request: CreateTerminalRequest =
                    self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                self.terminals_created += 1;
                self.note_once(Kind::ClientAnswer, FAKE_TERMINAL_NOTE.to_owned());
                Ok(json!({ "terminalId": format!("check-agent-terminal-{}", self.terminals_created) }))
            }
            "terminal/output" => {
                let request: TerminalOutputRequest =
                    self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                Ok(json!({ "output": "", "truncated": false, "exitStatus": { "exitCode": 0, "signal": null } }))
            }
            "terminal/wait_for_exit" => {
                let request: WaitForTerminalExitRequest =
                    self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                Ok(json!({ "exitCode": 0, "signal": null }))
            }
            "terminal/kill" => {
                let request: KillTerminalRequest = self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                Ok(json!({}))
            }
            "terminal/release" => {
                let request: ReleaseTerminalRequest =
                    self.valid_params(method, params, &offending).ok_or_else(invalid)?;
                self.known_session(method, &request.session_id.0, &offending);
                Ok(json!({}))
            }
            _ => {
                self.note_once(
                    Kind::Tolerated,
                    format!("the agent called {method}, which the checker does not implement (answered -32601)"),
                );
                Err(jsonrpc::method_not_found(method))
            }
        }
    }

    /// `path` if it is absolute and inside the throwaway folder; the checker lets the agent touch
    /// nothing else.
    fn inside_workspace(&self, path: &Path) -> Result<PathBuf, RpcError> {
        let refuse = |why: &str| RpcError::new(ErrorCode::InvalidParams.into(), format!("{}: {why}", path.display()));
        if !path.is_absolute() {
            return Err(refuse("ACP paths must be absolute"));
        }
        if path.components().any(|component| component == Component::ParentDir) {
            return Err(refuse("`..` is not allowed"));
        }
        if !path.starts_with(&self.workspace) {
            return Err(refuse("outside the session's folder"));
        }
        Ok(path.to_owned())
    }
}

/// `limit` lines from the 1-based `line` on, as `fs/read_text_file` asks.
fn select_lines(content: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return content.to_owned();
    }
    let skip = line.map_or(0, |line| line.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |limit| limit as usize);
    content.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_reads_honour_line_and_limit() {
        assert_eq!(select_lines("a\nb\nc\n", Some(2), Some(1)), "b\n");
        assert_eq!(select_lines("a\nb\nc", Some(2), None), "b\nc");
        assert_eq!(select_lines("a\nb\n", None, None), "a\nb\n");
    }
}
