//! Signing in to an agent: the `authMethods` of its `initialize` answer, offered to the person
//! when `session/new` or `session/prompt` answers "authentication required" (`-32000`), and the
//! way back from their choice to a session.
//!
//! ACP v1 knows two kinds of method: `terminal` (the client runs the agent's own command with the
//! method's arguments in a terminal, and must not pass the method to `authenticate`) and `agent`
//! (the fallback: the agent signs in by itself on `authenticate`). Real agents also send `env_var`
//! methods (Codex: `CODEX_API_KEY`), not yet in the stable schema, so methods are read from the
//! raw JSON. Gemini CLI marks its API-key method only with `_meta["api-key"]` (a convention of
//! Zed's): it is asked for like an `env_var` method, in the variable the agent reads that
//! provider's key from. Claude's adapter offers a login in a terminal only to a client that says
//! `_meta["terminal-auth"]: true` in its capabilities, and then marks its method with
//! `_meta["terminal-auth"]: {command, args, label}`: the command to run, not the agent's own
//! (Zed's convention, which Tether follows: a `terminal` method like any other, and a command
//! `node` is run with the host's own Node). The keys the person gives never pass through here:
//! the host keeps them and the agent is started again with them in its environment, then asked to
//! `authenticate`.

use std::collections::BTreeMap;

use agent_client_protocol_schema::v1 as acp;

use crate::host_api::{AgentProfile, AuthMethodKind, AuthMethodView, AuthVariable};
use crate::jsonrpc::{ErrorCode, RpcError};
use crate::permissions::AuditEvent;
use crate::thread::{NoticeLevel, TurnState};
use crate::webview::PromptAttachment;

use super::{AcpClient, AcpEvent, IntentError, Phase, RequestKind, describe_error};

/// What the agent's refusal held up, to be done again once the person has signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Held {
    /// Creating (or resuming) the session.
    Session,
    /// The person's prompt, sent again as it was typed, with what it attached.
    Prompt(String, Vec<PromptAttachment>),
}

/// The client's side of signing in.
#[derive(Debug, Default)]
pub(super) struct Authentication {
    /// The `authMethods` of the agent's `initialize` answer.
    methods: Vec<AuthMethodView>,
    /// What waits for the person to sign in, while they are asked.
    held: Option<Held>,
    /// The method to `authenticate` with as soon as the agent (started again with the person's
    /// keys in its environment) answers `initialize`.
    on_initialize: Option<String>,
    /// The last prompt sent (text and attachments), in case the agent refuses it for want of a
    /// sign-in.
    last_prompt: Option<(String, Vec<PromptAttachment>)>,
}

/// How signing in goes on after the person chose a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignIn {
    /// `authenticate` was sent to the running agent; the session follows its answer.
    Sent,
    /// The agent must be started again: with the keys the person gave in its environment, or to
    /// read the credentials a terminal login stored. Stop it, call
    /// [`AcpClient::prepare_new_agent`] and start the new process: the client signs in and
    /// retries by itself.
    RestartAgent,
}

/// Environment variables the person gave for agents, by profile name. Their values are never
/// printed, logged or written: `Debug` shows only the names.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretEnv(BTreeMap<String, BTreeMap<String, String>>);

impl SecretEnv {
    /// Adds (or replaces) variables of `profile`.
    pub fn add(&mut self, profile: &str, env: BTreeMap<String, String>) {
        self.0.entry(profile.to_owned()).or_default().extend(env);
    }

    /// The variables of `profile`.
    pub fn of(&self, profile: &str) -> Option<&BTreeMap<String, String>> {
        self.0.get(profile)
    }
}

impl std::fmt::Debug for SecretEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: BTreeMap<&String, Vec<&String>> =
            self.0.iter().map(|(profile, env)| (profile, env.keys().collect())).collect();
        f.debug_tuple("SecretEnv").field(&names).finish()
    }
}

/// The methods of an `initialize` answer's `authMethods`, as the person is offered them. A method
/// without an id or a name cannot be chosen and is left out; an unknown `type` is left out too,
/// since Tether could not carry it out.
pub fn parse_auth_methods(methods: &serde_json::Value) -> Vec<AuthMethodView> {
    let Some(methods) = methods.as_array() else { return Vec::new() };
    methods.iter().filter_map(parse_auth_method).collect()
}

fn parse_auth_method(method: &serde_json::Value) -> Option<AuthMethodView> {
    let id = method["id"].as_str()?.to_owned();
    let name = method["name"].as_str()?.to_owned();
    let description = method["description"].as_str().map(str::to_owned);
    if let Some(kind) = terminal_auth_command(method) {
        return Some(AuthMethodView { id, name, description, kind });
    }
    let kind = match method["type"].as_str() {
        None | Some("agent") => match api_key_variable(method) {
            // The agent reads the key from its environment when asked to `authenticate`.
            Some(variable) => AuthMethodKind::EnvVar {
                vars: vec![AuthVariable { name: variable.to_owned(), label: Some(name.clone()), optional: false }],
            },
            None => AuthMethodKind::Agent,
        },
        Some("terminal") => {
            let terminal = crate::json_value::from_value::<acp::AuthMethodTerminal>(method).ok()?;
            AuthMethodKind::Terminal {
                // The agent's own command, which `methods_for_profile` fills in.
                command: String::new(),
                args: terminal.args,
                env: terminal.env.into_iter().collect(),
            }
        }
        Some("env_var") => {
            let vars = method["vars"].as_array()?;
            let vars = vars
                .iter()
                .filter_map(|var| {
                    Some(AuthVariable {
                        name: var["name"].as_str()?.to_owned(),
                        label: var["label"].as_str().map(str::to_owned),
                        optional: var["optional"].as_bool().unwrap_or(false),
                    })
                })
                .collect::<Vec<_>>();
            if vars.is_empty() {
                return None;
            }
            AuthMethodKind::EnvVar { vars }
        }
        Some(_) => return None,
    };
    Some(AuthMethodView { id, name, description, kind })
}

/// The command of a method marked `_meta: {"terminal-auth": {"command", "args", "env"}}`, run
/// as it is given (claude-code-acp 0.16.2 names `node` and Claude Code's `cli.js`).
fn terminal_auth_command(method: &serde_json::Value) -> Option<AuthMethodKind> {
    let terminal_auth = &method["_meta"]["terminal-auth"];
    let command = terminal_auth["command"].as_str().filter(|command| !command.is_empty())?;
    let args = terminal_auth["args"].as_array().into_iter().flatten().filter_map(|arg| arg.as_str().map(str::to_owned));
    let env = terminal_auth["env"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
        .collect();
    Some(AuthMethodKind::Terminal { command: command.to_owned(), args: args.collect(), env })
}

/// The environment variable an agent method marked `_meta: {"api-key": {"provider": ...}}` takes
/// its key from: Gemini CLI's "Gemini API key" method (`provider: "google"`) authenticates with
/// `GEMINI_API_KEY` from its environment, which is also where Zed puts the key for it. A provider
/// Tether knows no variable for leaves the method to the agent.
fn api_key_variable(method: &serde_json::Value) -> Option<&'static str> {
    match method["_meta"]["api-key"]["provider"].as_str()? {
        "google" => Some("GEMINI_API_KEY"),
        _ => None,
    }
}

/// `methods` as they are offered for the agent of `profile`: a terminal method runs the
/// profile's command with the method's arguments added (unless it names its own command), in
/// the profile's environment with the method's variables over it, so that the login stores its
/// credentials where the agent reads them.
pub fn methods_for_profile(methods: &[AuthMethodView], profile: &AgentProfile) -> Vec<AuthMethodView> {
    methods
        .iter()
        .cloned()
        .map(|mut method| {
            if let AuthMethodKind::Terminal { command, args, env } = &mut method.kind {
                if command.is_empty() {
                    command.clone_from(&profile.command);
                    *args = profile.args.iter().cloned().chain(args.drain(..)).collect();
                }
                let mut merged = profile.env.clone();
                merged.append(env);
                *env = merged;
            }
            method
        })
        .collect()
}

/// Whether the agent refused for want of a sign-in.
pub(super) fn is_auth_required(error: &RpcError) -> bool {
    error.code == ErrorCode::AuthRequired
}

impl AcpClient {
    /// The ways to sign in the agent offered.
    pub fn auth_methods(&self) -> &[AuthMethodView] {
        &self.auth.methods
    }

    /// The agent is waiting for the person to sign in.
    pub fn needs_sign_in(&self) -> bool {
        self.phase == Phase::SigningIn
    }

    /// The agent waits for the person to choose how to sign in: no `authenticate` is on its way.
    /// The header then offers "Sign in", which asks again.
    pub fn awaits_sign_in_choice(&self) -> bool {
        self.phase == Phase::SigningIn && !self.authenticating()
    }

    fn authenticating(&self) -> bool {
        self.wire.rpc.iter().any(|(_, pending)| pending.tag == RequestKind::Authenticate)
    }

    /// The person chose `method_id` (giving the agent's environment new variables when
    /// `with_env`): `authenticate` goes to the running agent, or the agent must be started again
    /// (see [`SignIn`]).
    pub fn sign_in(&mut self, method_id: &str, with_env: bool) -> Result<SignIn, IntentError> {
        if self.phase != Phase::SigningIn {
            return Err(IntentError::NotSigningIn);
        }
        let method = self
            .auth
            .methods
            .iter()
            .find(|method| method.id == method_id)
            .ok_or_else(|| IntentError::UnknownAuthMethod(method_id.to_owned()))?;
        // What the person chose is not in the session's log, so it says nothing in the thread:
        // the header's status tells what is going on, and the agent's answer goes in the thread.
        if let AuthMethodKind::Terminal { .. } = method.kind {
            // ACP: a terminal method is never passed to `authenticate`; the new process reads
            // what the login stored.
            self.auth.on_initialize = None;
            return Ok(SignIn::RestartAgent);
        }
        if with_env {
            self.auth.on_initialize = Some(method_id.to_owned());
            return Ok(SignIn::RestartAgent);
        }
        self.send_authenticate(method_id.to_owned());
        Ok(SignIn::Sent)
    }

    fn send_authenticate(&mut self, method_id: String) {
        let params = acp::AuthenticateRequest::new(method_id);
        // No deadline: an agent may wait for the person to finish a login in their browser.
        self.send_request("authenticate", &params, RequestKind::Authenticate, None);
        self.phase = Phase::SigningIn;
    }

    /// Called once `initialize` is answered: signs in first when the agent was started again for
    /// it. Returns whether it did (the session then follows the answer).
    pub(super) fn sign_in_on_initialize(&mut self) -> bool {
        let Some(method_id) = self.auth.on_initialize.take() else { return false };
        self.send_authenticate(method_id);
        true
    }

    /// Keeps the `authMethods` of the `initialize` answer.
    pub(super) fn on_auth_methods(&mut self, initialize: &serde_json::Value) {
        self.auth.methods = parse_auth_methods(&initialize["authMethods"]);
    }

    /// Remembers a prompt, to send it again if the agent refuses it until the person signs in.
    pub(super) fn remember_prompt(&mut self, text: &str, attachments: &[PromptAttachment]) {
        self.auth.last_prompt = Some((text.to_owned(), attachments.to_vec()));
    }

    /// The agent refused `session/new` (`prompt` false) or the prompt with "authentication
    /// required": the person is asked to sign in, and what was refused waits for it.
    pub(super) fn on_auth_required(&mut self, error: &RpcError, prompt: bool) {
        if self.auth.methods.is_empty() {
            return self.fail(format!(
                "the agent needs you to sign in but offers no way to do it here ({})",
                describe_error(error)
            ));
        }
        self.auth.held = match (prompt, self.auth.last_prompt.clone()) {
            (true, Some((text, attachments))) => Some(Held::Prompt(text, attachments)),
            _ => Some(Held::Session),
        };
        if prompt {
            self.thread.set_turn(TurnState::Failed { message: "the agent needs you to sign in".to_owned() });
        }
        self.phase = Phase::SigningIn;
        self.notice(NoticeLevel::Warning, "The agent needs you to sign in.".to_owned());
        self.events.push_back(AcpEvent::AuthRequired { methods: self.auth.methods.clone() });
    }

    /// A prompt sent while the agent waits for a sign-in: it replaces what waited for the
    /// sign-in (a prompt the agent refused, or nothing more than the session), goes once the
    /// person has signed in, and the person is asked again unless an `authenticate` is already
    /// on its way.
    pub(super) fn hold_prompt_for_sign_in(
        &mut self,
        text: &str,
        attachments: &[PromptAttachment],
    ) -> Result<(), IntentError> {
        self.auth.held = Some(Held::Prompt(text.to_owned(), attachments.to_vec()));
        if self.authenticating() {
            return Ok(());
        }
        let text = "Sign in first: the prompt is sent once you have.".to_owned();
        self.notice(NoticeLevel::Info, text.clone());
        // The prompt is not on the wire until then; the log must say why the thread paused.
        self.audit(AuditEvent::Notice { level: NoticeLevel::Info, text, detail: None });
        self.events.push_back(AcpEvent::AuthRequired { methods: self.auth.methods.clone() });
        Ok(())
    }

    /// The agent answered `authenticate`.
    pub(super) fn on_authenticated(&mut self, result: Result<(), RpcError>, now: u64) {
        match result {
            Ok(()) => {
                self.notice(NoticeLevel::Info, "Signed in.".to_owned());
                if self.session.id.is_some() && self.session.resume.is_none() {
                    // The session exists on this agent: only the prompt waited.
                    self.phase = Phase::Ready;
                    if let Some(session_id) = self.session_id() {
                        let session_id = session_id.to_owned();
                        self.events.push_back(AcpEvent::SessionReady { session_id });
                    }
                    self.after_session_ready(now);
                } else {
                    self.open_session(now);
                }
            }
            Err(error) => {
                self.notice(
                    NoticeLevel::Warning,
                    format!("The agent did not accept the sign-in: {}. Choose again.", describe_error(&error)),
                );
                self.phase = Phase::SigningIn;
                self.events.push_back(AcpEvent::AuthRequired { methods: self.auth.methods.clone() });
            }
        }
    }

    /// The session is ready again: a prompt the agent refused for want of a sign-in is sent again.
    pub(super) fn after_session_ready(&mut self, now: u64) {
        let Some(held) = self.auth.held.take() else { return };
        if self.replaying {
            // The prompt sent again is in the log, and read back from it.
            return;
        }
        if let Held::Prompt(text, attachments) = held
            && let Err(error) = self.prompt(&text, &attachments, now)
        {
            self.notice(NoticeLevel::Warning, format!("The prompt could not be sent again: {error}."));
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    fn check(auth_methods: &str, expected: Expect) {
        let methods = parse_auth_methods(&serde_json::from_str(auth_methods).unwrap());
        let shown: Vec<String> = methods
            .iter()
            .map(|method| match &method.kind {
                AuthMethodKind::Agent => format!("{} ({}): the agent signs in", method.id, method.name),
                AuthMethodKind::EnvVar { vars } => {
                    let vars: Vec<String> = vars
                        .iter()
                        .map(|var| format!("{} asked as {:?}", var.name, var.label.as_deref().unwrap_or(&var.name)))
                        .collect();
                    format!("{} ({}): key {}", method.id, method.name, vars.join(", "))
                }
                AuthMethodKind::Terminal { command, args, env } => {
                    let command = if command.is_empty() { "<the agent>" } else { command };
                    format!("{} ({}): terminal login {command} {args:?} {env:?}", method.id, method.name)
                }
            })
            .collect();
        expected.assert_eq(&shown.join("\n"));
    }

    #[test]
    fn gemini_clis_api_key_method_asks_for_gemini_api_key() {
        // As @google/gemini-cli 0.61.0 answers `initialize`.
        check(
            r#"[
                {"id":"oauth-personal","name":"Log in with Google","description":"Log in with your Google account"},
                {"id":"gemini-api-key","name":"Gemini API key","description":"Use an API key with Gemini Developer API","_meta":{"api-key":{"provider":"google"}}},
                {"id":"vertex-ai","name":"Vertex AI","description":"Use an API key with Vertex AI GenAI API"},
                {"id":"gateway","name":"AI API Gateway","description":"Use a custom AI API Gateway","_meta":{"gateway":{"protocol":"google","restartRequired":"false"}}}
            ]"#,
            expect![[r#"
                oauth-personal (Log in with Google): the agent signs in
                gemini-api-key (Gemini API key): key GEMINI_API_KEY asked as "Gemini API key"
                vertex-ai (Vertex AI): the agent signs in
                gateway (AI API Gateway): the agent signs in"#]],
        );
    }

    #[test]
    fn codex_env_var_methods_and_claudes_login() {
        // As codex-acp 0.16.0 and claude-code-acp 0.16.2 answer `initialize`.
        check(
            r#"[
                {"id":"chatgpt","name":"Login with ChatGPT","description":"Use your ChatGPT login with Codex CLI"},
                {"type":"env_var","id":"openai-api-key","name":"Use OPENAI_API_KEY","vars":[{"name":"OPENAI_API_KEY"}]},
                {"id":"claude-login","name":"Log in with Claude Code","description":"Run `claude /login` in the terminal"}
            ]"#,
            expect![[r#"
                chatgpt (Login with ChatGPT): the agent signs in
                openai-api-key (Use OPENAI_API_KEY): key OPENAI_API_KEY asked as "OPENAI_API_KEY"
                claude-login (Log in with Claude Code): the agent signs in"#]],
        );
    }

    #[test]
    fn an_api_key_of_a_provider_without_a_known_variable_is_left_to_the_agent() {
        check(
            r#"[
                {"id":"key","name":"Some key","_meta":{"api-key":{"provider":"elsewhere"}}},
                {"id":"odd","name":"Odd meta","_meta":{"api-key":"not an object"}},
                {"type":"terminal","id":"login","name":"Log in","args":["--login"]},
                {"type":"_oauth","id":"oauth","name":"Some future kind"},
                {"id":"nameless"}
            ]"#,
            expect![[r#"
                key (Some key): the agent signs in
                odd (Odd meta): the agent signs in
                login (Log in): terminal login <the agent> ["--login"] {}"#]],
        );
    }

    /// claude-code-acp 0.16.2's `authMethods` when `initialize` says `_meta["terminal-auth"]`.
    const CLAUDE_TERMINAL_AUTH: &str = r#"[{"description":"Run `claude /login` in the terminal","name":"Log in with Claude Code","id":"claude-login","_meta":{"terminal-auth":{"command":"node","args":["/agents/node_modules/@anthropic-ai/claude-agent-sdk/cli.js"],"label":"Claude Code Login"}}}]"#;

    #[test]
    fn claudes_terminal_auth_login_runs_the_command_it_names() {
        check(
            CLAUDE_TERMINAL_AUTH,
            expect![[r#"
                claude-login (Log in with Claude Code): terminal login node ["/agents/node_modules/@anthropic-ai/claude-agent-sdk/cli.js"] {}"#]],
        );
        // Whatever the method's `type` says, and with the variables it asks for.
        check(
            r#"[
                {"type":"terminal","id":"setup","name":"Set up","args":["--ignored"],"_meta":{"terminal-auth":{"command":"/opt/vibe","args":["--setup"],"env":{"NO_COLOR":"1","BAD":1},"label":"Vibe"}}},
                {"id":"no-command","name":"No command","_meta":{"terminal-auth":{"args":["login"]}}},
                {"id":"empty","name":"Empty command","_meta":{"terminal-auth":{"command":""}}}
            ]"#,
            expect![[r#"
                setup (Set up): terminal login /opt/vibe ["--setup"] {"NO_COLOR": "1"}
                no-command (No command): the agent signs in
                empty (Empty command): the agent signs in"#]],
        );
    }

    #[test]
    fn a_terminal_login_runs_in_the_agents_environment_and_a_named_command_keeps_its_own() {
        let profile = AgentProfile {
            name: "Claude Code".to_owned(),
            command: "/vscode/electron".to_owned(),
            args: vec!["/agents/claude-code-acp/dist/index.js".to_owned()],
            env: BTreeMap::from([
                ("ELECTRON_RUN_AS_NODE".to_owned(), "1".to_owned()),
                ("NO_COLOR".to_owned(), "0".to_owned()),
            ]),
            cwd: None,
            protocol: Default::default(),
        };
        let methods = parse_auth_methods(
            &serde_json::from_str(&format!(
                r#"[{}, {{"type":"terminal","id":"login","name":"Log in","args":["--login"],"env":{{"NO_COLOR":"1"}}}}]"#,
                CLAUDE_TERMINAL_AUTH.trim_start_matches('[').trim_end_matches(']')
            ))
            .unwrap(),
        );
        let offered: Vec<String> = methods_for_profile(&methods, &profile)
            .into_iter()
            .map(|method| match method.kind {
                AuthMethodKind::Terminal { command, args, env } => format!("{}: {command} {args:?} {env:?}", method.id),
                other => format!("{}: {other:?}", method.id),
            })
            .collect();
        expect![[r#"
            claude-login: node ["/agents/node_modules/@anthropic-ai/claude-agent-sdk/cli.js"] {"ELECTRON_RUN_AS_NODE": "1", "NO_COLOR": "0"}
            login: /vscode/electron ["/agents/claude-code-acp/dist/index.js", "--login"] {"ELECTRON_RUN_AS_NODE": "1", "NO_COLOR": "1"}"#]]
        .assert_eq(&offered.join("
"));
    }
}
