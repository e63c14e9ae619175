//! The person's MCP servers: the `tether.mcpServers` setting read as they wrote it, with the
//! secrets it names filled in from VS Code's SecretStorage.
//!
//! An entry is ACP's shape for an MCP server: `{name, command, args?, env?}` for stdio,
//! `{name, type: "http" | "sse", url, headers?}` for the others; `env` and `headers` are either
//! ACP's lists of `{name, value}` or an object of names to values. A value may hold
//! `${secret:<name>}`, replaced by the secret the person stored under that name (the command
//! "Tether: Set MCP Server Secret"), so that a token never sits in a settings file. Like
//! `tether.agents`, one bad entry is dropped with a sentence naming it, the rest go through; an
//! entry whose secret is not stored is left out, saying which secret and how to set it.
//!
//! The setting is the person's own (the host reads only its user value): a server's `command` is
//! a program Tether makes the agent run, which a repository must not choose.

use std::collections::BTreeMap;

use agent_client_protocol_schema::v1 as acp;
use serde_json::{Map, Value};

/// How a secret is named in a value.
const SECRET_PREFIX: &str = "${secret:";

/// The servers of a `tether.mcpServers` value, and a sentence for each entry left out.
pub fn mcp_servers_from_setting(raw: &Value, secrets: &BTreeMap<String, String>) -> (Vec<acp::McpServer>, Vec<String>) {
    let mut servers: Vec<acp::McpServer> = Vec::new();
    let mut problems = Vec::new();
    match raw {
        Value::Null => {}
        Value::Array(entries) => {
            for (index, entry) in entries.iter().enumerate() {
                match server_from_entry(entry, secrets) {
                    Ok(server) if servers.iter().any(|known| name_of(known) == name_of(&server)) => {
                        problems.push(format!(
                            "tether.mcpServers[{index}] was ignored: another server is named {:?}.",
                            name_of(&server)
                        ))
                    }
                    Ok(server) => servers.push(server),
                    Err(why) => problems.push(format!("tether.mcpServers[{index}] was ignored: {why}")),
                }
            }
        }
        _ => problems.push(
            "tether.mcpServers must be an array of MCP servers ({name, command, args?, env?} or \
             {name, type: \"http\" | \"sse\", url, headers?}); it was ignored."
                .to_owned(),
        ),
    }
    (servers, problems)
}

/// A server's name, whatever its transport.
pub fn name_of(server: &acp::McpServer) -> &str {
    match server {
        acp::McpServer::Http(http) => &http.name,
        acp::McpServer::Sse(sse) => &sse.name,
        acp::McpServer::Stdio(stdio) => &stdio.name,
        _ => "",
    }
}

/// A server's transport, in words.
pub fn transport_of(server: &acp::McpServer) -> &'static str {
    match server {
        acp::McpServer::Http(_) => "http",
        acp::McpServer::Sse(_) => "sse",
        acp::McpServer::Stdio(_) => "stdio",
        _ => "other",
    }
}

/// Where a server is when it is not on this machine: the host of an HTTP or SSE server's URL,
/// unless that is a loopback name or address (`localhost`, `127.0.0.0/8`, `::1`). What an agent
/// sends such a server (the code it read, the person's questions) leaves the computer, and the
/// chat says so where it lists the servers. A URL whose host cannot be read counts as remote.
pub fn remote_host(server: &acp::McpServer) -> Option<String> {
    let url = match server {
        acp::McpServer::Http(http) => &http.url,
        acp::McpServer::Sse(sse) => &sse.url,
        _ => return None,
    };
    remote_host_of_url(url)
}

/// [`remote_host`] for a URL as written.
pub fn remote_host_of_url(url: &str) -> Option<String> {
    let Some((_, rest)) = url.split_once("://") else { return Some(url.to_owned()) };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // Credentials come before the last '@'; a port after the host.
    let host_and_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host_and_port.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']').map_or(bracketed, |(address, _)| address),
        None => host_and_port.split_once(':').map_or(host_and_port, |(host, _)| host),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Some(url.to_owned());
    }
    let loopback = host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback());
    (!loopback).then_some(host)
}

fn server_from_entry(entry: &Value, secrets: &BTreeMap<String, String>) -> Result<acp::McpServer, String> {
    let Value::Object(fields) = entry else {
        return Err("it is not an object.".to_owned());
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        _ => return Err("it has no \"name\".".to_owned()),
    };
    let kind = match fields.get("type") {
        None => "stdio",
        Some(Value::String(kind)) if matches!(kind.as_str(), "stdio" | "http" | "sse") => kind.as_str(),
        Some(_) => return Err(format!("{name:?}: \"type\" must be \"stdio\", \"http\" or \"sse\".")),
    };
    if kind == "stdio" {
        let command = match fields.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            _ => {
                return Err(format!(
                    "{name:?} has no \"command\" (or a \"type\" of \"http\" or \"sse\" and a \"url\")."
                ));
            }
        };
        let args = strings(fields.get("args"), &name, "args")?;
        let env = pairs(fields.get("env"), &name, "env", secrets)?
            .into_iter()
            .map(|(variable, value)| acp::EnvVariable::new(variable, value))
            .collect();
        return Ok(acp::McpServer::Stdio(acp::McpServerStdio::new(name, command).args(args).env(env)));
    }
    let url = match fields.get("url") {
        Some(Value::String(url)) if url.starts_with("http://") || url.starts_with("https://") => url.clone(),
        _ => return Err(format!("{name:?} needs a \"url\" starting with http:// or https://.")),
    };
    let headers: Vec<acp::HttpHeader> = pairs(fields.get("headers"), &name, "headers", secrets)?
        .into_iter()
        .map(|(header, value)| acp::HttpHeader::new(header, value))
        .collect();
    Ok(if kind == "http" {
        acp::McpServer::Http(acp::McpServerHttp::new(name, url).headers(headers))
    } else {
        acp::McpServer::Sse(acp::McpServerSse::new(name, url).headers(headers))
    })
}

fn strings(value: Option<&Value>, name: &str, field: &str) -> Result<Vec<String>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{name:?}: {field:?} must be an array of strings.")),
        Some(_) => Err(format!("{name:?}: {field:?} must be an array of strings.")),
    }
}

/// `env` or `headers`: an object of names to values, or ACP's list of `{name, value}`, with
/// secrets filled in.
fn pairs(
    value: Option<&Value>,
    name: &str,
    field: &str,
    secrets: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, String> {
    let shape = || format!("{name:?}: {field:?} must be an object of names to strings, or a list of {{name, value}}.");
    let raw: Vec<(String, String)> = match value {
        None => Vec::new(),
        Some(Value::Object(map)) => object_pairs(map).ok_or_else(shape)?,
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match (item.get("name"), item.get("value")) {
                (Some(Value::String(key)), Some(Value::String(value))) => Some((key.clone(), value.clone())),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(shape)?,
        Some(_) => return Err(shape()),
    };
    raw.into_iter()
        .map(|(key, value)| {
            fill_secrets(&value, secrets).map(|value| (key, value)).map_err(|missing| {
                format!(
                    "{name:?} needs the secret {missing:?}, which is not stored: run \"Tether: Set MCP Server Secret\" \
                 and give it that name."
                )
            })
        })
        .collect()
}

fn object_pairs(map: &Map<String, Value>) -> Option<Vec<(String, String)>> {
    map.iter().map(|(key, value)| value.as_str().map(|value| (key.clone(), value.to_owned()))).collect()
}

/// `value` with every `${secret:<name>}` replaced; `Err` names the first secret not stored.
fn fill_secrets(value: &str, secrets: &BTreeMap<String, String>) -> Result<String, String> {
    let mut filled = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find(SECRET_PREFIX) {
        let after = &rest[start + SECRET_PREFIX.len()..];
        let Some(end) = after.find('}') else { break };
        let secret = &after[..end];
        let stored = secrets.get(secret).ok_or_else(|| secret.to_owned())?;
        filled.push_str(&rest[..start]);
        filled.push_str(stored);
        rest = &after[end + 1..];
    }
    filled.push_str(rest);
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_in_both_shapes_with_secrets_filled_in_and_bad_ones_named() {
        let setting = json!([
            { "name": "fs", "command": "npx", "args": ["-y", "server-fs"], "env": { "ROOT": "/tmp", "KEY": "k-${secret:fs}" } },
            { "name": "github", "type": "http", "url": "https://api.example/mcp", "headers": [{ "name": "Authorization", "value": "Bearer ${secret:gh}" }] },
            { "name": "old", "type": "sse", "url": "http://127.0.0.1:9/sse" },
            { "name": "needs", "type": "http", "url": "https://x.example", "headers": { "Authorization": "${secret:missing}" } },
            { "name": "fs", "command": "other" },
            { "name": "nourl", "type": "http" },
            { "command": "nameless" },
            { "name": "badtype", "type": "ws", "url": "ws://x" },
            "text",
        ]);
        let secrets = BTreeMap::from([("fs".to_owned(), "S1".to_owned()), ("gh".to_owned(), "S2".to_owned())]);
        let (servers, problems) = mcp_servers_from_setting(&setting, &secrets);
        expect![[r#"
            [{"name":"fs","command":"npx","args":["-y","server-fs"],"env":[{"name":"ROOT","value":"/tmp"},{"name":"KEY","value":"k-S1"}]},{"type":"http","name":"github","url":"https://api.example/mcp","headers":[{"name":"Authorization","value":"Bearer S2"}]},{"type":"sse","name":"old","url":"http://127.0.0.1:9/sse","headers":[]}]
            tether.mcpServers[3] was ignored: "needs" needs the secret "missing", which is not stored: run "Tether: Set MCP Server Secret" and give it that name.
            tether.mcpServers[4] was ignored: another server is named "fs".
            tether.mcpServers[5] was ignored: "nourl" needs a "url" starting with http:// or https://.
            tether.mcpServers[6] was ignored: it has no "name".
            tether.mcpServers[7] was ignored: "badtype": "type" must be "stdio", "http" or "sse".
            tether.mcpServers[8] was ignored: it is not an object."#]]
        .assert_eq(&format!("{}\n{}", serde_json::to_string(&servers).unwrap_or_default(), problems.join("\n")));
    }

    #[test]
    fn a_server_off_this_machine_is_told_by_its_urls_host() {
        let urls = [
            "https://api.example.com/mcp",
            "http://user:secret@Mcp.Example.COM.:8443/sse?x=1",
            "http://localhost:3000/mcp",
            "http://tools.localhost/mcp",
            "http://127.0.0.1:9/sse",
            "http://127.8.9.10/",
            "http://[::1]:8080/mcp",
            "http://[0:0:0:0:0:0:0:1]/mcp",
            "http://[2001:db8::1]:8080/mcp",
            "http://10.0.0.7/mcp",
            "http://localhost@evil.example/mcp",
            "http:///nohost",
        ];
        let seen: Vec<String> = urls
            .iter()
            .map(|url| format!("{url} -> {}", remote_host_of_url(url).unwrap_or_else(|| "local".to_owned())))
            .collect();
        expect![[r#"
            https://api.example.com/mcp -> api.example.com
            http://user:secret@Mcp.Example.COM.:8443/sse?x=1 -> mcp.example.com
            http://localhost:3000/mcp -> local
            http://tools.localhost/mcp -> local
            http://127.0.0.1:9/sse -> local
            http://127.8.9.10/ -> local
            http://[::1]:8080/mcp -> local
            http://[0:0:0:0:0:0:0:1]/mcp -> local
            http://[2001:db8::1]:8080/mcp -> 2001:db8::1
            http://10.0.0.7/mcp -> 10.0.0.7
            http://localhost@evil.example/mcp -> evil.example
            http:///nohost -> http:///nohost"#]]
        .assert_eq(&seen.join("\n"));
        let stdio = acp::McpServer::Stdio(acp::McpServerStdio::new("fs", "npx"));
        assert_eq!(remote_host(&stdio), None, "a stdio server runs on this machine");
    }

    #[test]
    fn a_setting_that_is_not_a_list_is_ignored_whole() {
        let (servers, problems) = mcp_servers_from_setting(&json!({ "fs": {} }), &BTreeMap::new());
        assert!(servers.is_empty());
        assert_eq!(problems.len(), 1);
        assert!(mcp_servers_from_setting(&Value::Null, &BTreeMap::new()).1.is_empty());
    }
}
