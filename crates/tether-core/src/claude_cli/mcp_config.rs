//! The MCP servers of a Claude CLI session, as the CLI takes them: the `mcpServers` of the
//! client's `session/new` (Tether's own server and the person's, in ACP's shape) written as the
//! JSON of `--mcp-config`.
//!
//! A command line is readable by every user of the machine, and the person's servers carry
//! tokens in their headers and environment. So no such value goes on it: each is put in the CLI
//! process's environment (readable by its owner only) as `TETHER_MCP_VALUE_<n>`, and the config
//! names it `${TETHER_MCP_VALUE_<n>}`, which the CLI expands. A value that already is a
//! `${VAR}` reference is kept: Tether's own server is written that way (see
//! [`crate::sidecar::deferred_mcp_offer`]), because its token is made when tetherd starts the
//! process, after the command line is written.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The prefix of the variables that carry the config's values.
const VALUE_ENV_PREFIX: &str = "TETHER_MCP_VALUE_";

/// What a CLI process gets for its MCP servers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct CliMcpConfig {
    /// `--mcp-config`'s JSON; `None` when there is no server.
    pub(super) json: Option<String>,
    /// The variables the JSON names.
    pub(super) env: BTreeMap<String, String>,
}

/// The config for ACP's `mcpServers` (anything: the client's request is read tolerantly, and a
/// server that is not one of ACP's shapes is left out).
pub(super) fn cli_mcp_config(servers: &Value) -> CliMcpConfig {
    let mut env = BTreeMap::new();
    let mut config = Map::new();
    for server in servers.as_array().into_iter().flatten() {
        let Some(name) = server.get("name").and_then(Value::as_str) else { continue };
        let kind = server.get("type").and_then(Value::as_str).unwrap_or("stdio");
        let entry = match kind {
            "stdio" => {
                let Some(command) = server.get("command").and_then(Value::as_str) else { continue };
                let args = server.get("args").cloned().unwrap_or_else(|| json!([]));
                json!({ "type": "stdio", "command": command, "args": args, "env": pairs(server.get("env"), &mut env) })
            }
            "http" | "sse" => {
                let Some(url) = server.get("url").and_then(Value::as_str) else { continue };
                json!({ "type": kind, "url": url, "headers": pairs(server.get("headers"), &mut env) })
            }
            _ => continue,
        };
        config.insert(name.to_owned(), entry);
    }
    let json = (!config.is_empty()).then(|| json!({ "mcpServers": config }).to_string());
    CliMcpConfig { json, env }
}

/// ACP's `[{name, value}]` as the CLI's object, each value moved to the environment.
fn pairs(list: Option<&Value>, env: &mut BTreeMap<String, String>) -> Value {
    let mut object = Map::new();
    for pair in list.and_then(Value::as_array).into_iter().flatten() {
        let (Some(name), Some(value)) =
            (pair.get("name").and_then(Value::as_str), pair.get("value").and_then(Value::as_str))
        else {
            continue;
        };
        let reference = if is_reference(value) {
            value.to_owned()
        } else {
            let variable = format!("{VALUE_ENV_PREFIX}{}", env.len());
            env.insert(variable.clone(), value.to_owned());
            format!("${{{variable}}}")
        };
        object.insert(name.to_owned(), Value::String(reference));
    }
    Value::Object(object)
}

/// `${NAME}` and nothing else.
fn is_reference(value: &str) -> bool {
    value
        .strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn servers_become_the_clis_config_with_their_secrets_kept_off_the_command_line() {
        let servers = json!([
            { "name": "tether", "command": "${TETHER_MCP_COMMAND}", "args": ["mcp"], "env": [
                { "name": "TETHER_MCP_SOCKET", "value": "${TETHER_MCP_SOCKET}" },
                { "name": "TETHER_MCP_TOKEN", "value": "${TETHER_MCP_TOKEN}" },
            ] },
            { "name": "fs", "command": "mcp-fs", "args": [], "env": [{ "name": "KEY", "value": "s3cr3t" }] },
            { "type": "http", "name": "gh", "url": "https://gh.example/mcp", "headers": [{ "name": "Authorization", "value": "Bearer t0k" }] },
            { "type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": [] },
            { "type": "ws", "name": "strange", "url": "ws://x" },
            { "command": "nameless" },
        ]);
        let config = cli_mcp_config(&servers);
        let json = config.json.clone().unwrap_or_default();
        assert!(!json.contains("s3cr3t") && !json.contains("t0k"), "no secret on the command line: {json}");
        expect![[r#"
            {"mcpServers":{"tether":{"type":"stdio","command":"${TETHER_MCP_COMMAND}","args":["mcp"],"env":{"TETHER_MCP_SOCKET":"${TETHER_MCP_SOCKET}","TETHER_MCP_TOKEN":"${TETHER_MCP_TOKEN}"}},"fs":{"type":"stdio","command":"mcp-fs","args":[],"env":{"KEY":"${TETHER_MCP_VALUE_0}"}},"gh":{"type":"http","url":"https://gh.example/mcp","headers":{"Authorization":"${TETHER_MCP_VALUE_1}"}},"old":{"type":"sse","url":"http://127.0.0.1:9/sse","headers":{}}}}
            {"TETHER_MCP_VALUE_0": "s3cr3t", "TETHER_MCP_VALUE_1": "Bearer t0k"}"#]]
        .assert_eq(&format!("{json}\n{:?}", config.env));
        assert_eq!(cli_mcp_config(&json!([])), CliMcpConfig::default());
    }
}
