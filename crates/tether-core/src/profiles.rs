//! The agents the person can choose: the `tether.agents` setting read as the person wrote it,
//! merged with the agents built into the extension.
//!
//! Settings are hand-written JSON, so an entry of `tether.agents` can be anything. One entry that
//! is not an agent profile must not leave the person with no agents at all: each such entry is
//! dropped with a sentence naming it and why, and the rest go through. The host only finds where
//! the built-in agents are installed (that is IO) and passes the setting's raw value; what a
//! profile is, and which one wins, is decided here.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::host_api::{AgentProfile, AgentProtocol};

/// The profiles of a `tether.agents` value, and a sentence for each entry that was dropped (or
/// for the whole setting, when it is not a list). An absent setting (`null`) has no profiles.
pub fn agents_from_setting(raw: &Value) -> (Vec<AgentProfile>, Vec<String>) {
    let mut profiles = Vec::new();
    let mut problems = Vec::new();
    match raw {
        Value::Null => {}
        Value::Array(entries) => {
            let read: Vec<_> = entries.iter().map(profile_from_entry).collect();
            for (index, entry) in read.iter().enumerate() {
                match entry {
                    // An agent is chosen by its name, so of several with one name only one can
                    // ever be: the last, as a later setting overrides an earlier one. The picker
                    // listed the others too, and choosing one of them ran another.
                    Ok(profile)
                        if read[index + 1..]
                            .iter()
                            .any(|later| later.as_ref().is_ok_and(|later| later.name == profile.name)) =>
                    {
                        problems.push(format!(
                            "tether.agents[{index}] was ignored: a later agent is named \"{}\" too.",
                            profile.name
                        ));
                    }
                    Ok(profile) => profiles.push(profile.clone()),
                    Err(why) => problems.push(format!("tether.agents[{index}] was ignored: {why}")),
                }
            }
        }
        _ => problems
            .push("tether.agents must be an array of {name, command, args?, env?, cwd?}; it was ignored.".to_owned()),
    }
    (profiles, problems)
}

/// The profile an entry describes, or a sentence saying why it is not one.
fn profile_from_entry(entry: &Value) -> Result<AgentProfile, String> {
    let Value::Object(fields) = entry else {
        return Err("it is not an object.".to_owned());
    };
    let name = match fields.get("name") {
        Some(Value::String(name)) if !is_blank(name) => name.clone(),
        _ => return Err("it has no \"name\".".to_owned()),
    };
    let command = match fields.get("command") {
        Some(Value::String(command)) if !is_blank(command) => command.clone(),
        _ => return Err(format!("\"{name}\" has no \"command\".")),
    };
    let args = match fields.get("args") {
        None => Vec::new(),
        Some(Value::Array(args)) => args
            .iter()
            .map(|arg| arg.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("\"{name}\": \"args\" must be an array of strings."))?,
        Some(_) => return Err(format!("\"{name}\": \"args\" must be an array of strings.")),
    };
    let env = match fields.get("env") {
        None => BTreeMap::new(),
        Some(Value::Object(env)) => env
            .iter()
            .map(|(key, value)| value.as_str().map(|value| (key.clone(), value.to_owned())))
            .collect::<Option<BTreeMap<_, _>>>()
            .ok_or_else(|| format!("\"{name}\": \"env\" must map names to strings."))?,
        Some(_) => return Err(format!("\"{name}\": \"env\" must map names to strings.")),
    };
    let cwd = match fields.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(cwd)) => Some(cwd.clone()).filter(|cwd| !cwd.is_empty()),
        Some(_) => return Err(format!("\"{name}\": \"cwd\" must be a string.")),
    };
    let protocol = match fields.get("protocol") {
        None | Some(Value::Null) => AgentProtocol::Acp,
        Some(Value::String(protocol)) if protocol == "acp" => AgentProtocol::Acp,
        Some(Value::String(protocol)) if protocol == "claude-cli" => AgentProtocol::ClaudeCli,
        Some(_) => return Err(format!("\"{name}\": \"protocol\" must be \"acp\" or \"claude-cli\".")),
    };
    Ok(AgentProfile { name, command, args, env, cwd, protocol })
}

/// Whether `text` holds nothing but white space as JavaScript's `trim` sees it (the extension
/// checked names and commands with it, and a name the settings editor shows as blank is missing):
/// Unicode's White_Space without U+0085 (NEXT LINE), plus U+FEFF (the byte order mark).
fn is_blank(text: &str) -> bool {
    text.chars().all(|c| c == '\u{feff}' || (c.is_whitespace() && c != '\u{85}'))
}

/// The profiles the person can choose from: the built-ins in order, then the setting's; a
/// setting's profile with a built-in's name replaces that built-in in place (the last one of that
/// name, when several have it, as a later entry of a settings file overrides an earlier one).
pub fn merge_profiles(builtins: &[AgentProfile], settings: &[AgentProfile]) -> Vec<AgentProfile> {
    let from_settings = |name: &str| settings.iter().rev().find(|profile| profile.name == name);
    let mut merged: Vec<AgentProfile> =
        builtins.iter().map(|builtin| from_settings(&builtin.name).unwrap_or(builtin).clone()).collect();
    merged.extend(
        settings.iter().filter(|profile| !builtins.iter().any(|builtin| builtin.name == profile.name)).cloned(),
    );
    merged
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use serde_json::json;

    use super::*;

    /// Reads a setting and shows each profile (name, command, args, env, cwd) and each problem,
    /// one a line.
    fn check(raw: Value, expected: Expect) {
        let (profiles, problems) = agents_from_setting(&raw);
        let mut shown = String::new();
        for profile in profiles {
            let AgentProfile { name, command, args, env, cwd, protocol } = profile;
            shown.push_str(&format!("profile {name:?} {command:?} {args:?} {env:?} {cwd:?} {protocol:?}\n"));
        }
        for problem in problems {
            shown.push_str(&format!("problem {problem}\n"));
        }
        expected.assert_eq(&shown);
    }

    #[test]
    fn each_entry_that_is_not_a_profile_is_dropped_with_why_and_the_rest_go_through() {
        check(
            json!([
                {"name": "Gemini", "command": "gemini", "args": ["--acp"]},
                "gemini --acp",
                {"command": "codex"},
                {"name": "  ", "command": "codex"},
                {"name": "Codex"},
                {"name": "Codex", "command": " "},
                {"name": "A", "command": "a", "args": "--acp"},
                {"name": "B", "command": "b", "args": ["--acp", 1]},
                {"name": "C", "command": "c", "env": ["KEY=1"]},
                {"name": "D", "command": "d", "env": {"KEY": 1}},
                {"name": "E", "command": "e", "cwd": 7},
                {"name": "F", "command": "f", "env": {"KEY": "1"}, "cwd": "/srv/f"},
                {"name": "G", "command": "g", "cwd": ""},
                {"name": "H", "command": "h", "cwd": null, "unknown": true},
                null,
                {"name": "My Claude", "command": "/opt/claude/bin/claude", "protocol": "claude-cli"},
                {"name": "K", "command": "k", "protocol": "stream-json"},
                {"name": "Gemini", "command": "gemini-nightly"},
                {"name": "Gemini", "command": "gemini-stable", "args": ["--acp"]},
            ]),
            expect![[r#"
                profile "F" "f" [] {"KEY": "1"} Some("/srv/f") Acp
                profile "G" "g" [] {} None Acp
                profile "H" "h" [] {} None Acp
                profile "My Claude" "/opt/claude/bin/claude" [] {} None ClaudeCli
                profile "Gemini" "gemini-stable" ["--acp"] {} None Acp
                problem tether.agents[0] was ignored: a later agent is named "Gemini" too.
                problem tether.agents[1] was ignored: it is not an object.
                problem tether.agents[2] was ignored: it has no "name".
                problem tether.agents[3] was ignored: it has no "name".
                problem tether.agents[4] was ignored: "Codex" has no "command".
                problem tether.agents[5] was ignored: "Codex" has no "command".
                problem tether.agents[6] was ignored: "A": "args" must be an array of strings.
                problem tether.agents[7] was ignored: "B": "args" must be an array of strings.
                problem tether.agents[8] was ignored: "C": "env" must map names to strings.
                problem tether.agents[9] was ignored: "D": "env" must map names to strings.
                problem tether.agents[10] was ignored: "E": "cwd" must be a string.
                problem tether.agents[14] was ignored: it is not an object.
                problem tether.agents[16] was ignored: "K": "protocol" must be "acp" or "claude-cli".
                problem tether.agents[17] was ignored: a later agent is named "Gemini" too.
            "#]],
        );
    }

    #[test]
    fn a_setting_that_is_not_a_list_is_ignored_whole_and_an_absent_one_is_empty() {
        check(
            json!({"name": "Gemini", "command": "gemini"}),
            expect![[r#"
                problem tether.agents must be an array of {name, command, args?, env?, cwd?}; it was ignored.
            "#]],
        );
        check(Value::Null, expect![""]);
        check(json!([]), expect![""]);
    }

    #[test]
    fn a_profile_named_like_a_built_in_replaces_it_in_place_and_others_follow_the_built_ins() {
        let profile = |name: &str, command: &str| AgentProfile {
            name: name.to_owned(),
            command: command.to_owned(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            protocol: Default::default(),
        };
        let builtins =
            [profile("Claude Code", "claude-code-acp"), profile("Codex", "codex-acp"), profile("Gemini CLI", "gemini")];
        let settings = [profile("Mine", "my-agent"), profile("Codex", "/home/me/codex-acp")];
        let merged = merge_profiles(&builtins, &settings);
        let shown: Vec<(&str, &str)> =
            merged.iter().map(|profile| (profile.name.as_str(), profile.command.as_str())).collect();
        assert_eq!(
            shown,
            [
                ("Claude Code", "claude-code-acp"),
                ("Codex", "/home/me/codex-acp"),
                ("Gemini CLI", "gemini"),
                ("Mine", "my-agent"),
            ]
        );
        assert_eq!(merge_profiles(&[], &settings), settings);
        assert_eq!(merge_profiles(&builtins, &[]), builtins);
    }

    #[test]
    fn null_and_wrongly_typed_fields_are_reported_as_the_extension_did() {
        check(
            json!([
                ["Gemini", "gemini"],
                {"name": 7, "command": "gemini"},
                {"name": "Codex", "command": ["codex-acp"]},
                {"name": "A", "command": "a", "args": null},
                {"name": "E", "command": "e", "env": null},
                {"name": "C", "command": "c", "cwd": ["/tmp"]},
            ]),
            expect![[r#"
                problem tether.agents[0] was ignored: it is not an object.
                problem tether.agents[1] was ignored: it has no "name".
                problem tether.agents[2] was ignored: "Codex" has no "command".
                problem tether.agents[3] was ignored: "A": "args" must be an array of strings.
                problem tether.agents[4] was ignored: "E": "env" must map names to strings.
                problem tether.agents[5] was ignored: "C": "cwd" must be a string.
            "#]],
        );
    }

    /// Blank is what JavaScript's `trim` leaves empty: a byte order mark is blank, a NEXT LINE
    /// (U+0085) is not; names and commands keep their spaces.
    #[test]
    fn blank_means_what_javascripts_trim_leaves_empty_and_names_keep_their_spaces() {
        check(
            json!([
                {"name": "\u{feff} \t\u{3000}", "command": "a"},
                {"name": "B", "command": "\u{feff}"},
                {"name": "\u{85}", "command": "c"},
                {"name": " Padded ", "command": " my-agent "},
            ]),
            expect![[r#"
                profile "\u{85}" "c" [] {} None Acp
                profile " Padded " " my-agent " [] {} None Acp
                problem tether.agents[0] was ignored: it has no "name".
                problem tether.agents[1] was ignored: "B" has no "command".
            "#]],
        );
    }

    /// Shows the merged profiles, one `name: command` a line.
    fn check_merged(builtins: &[AgentProfile], raw: Value, expected: Expect) {
        let (settings, _) = agents_from_setting(&raw);
        let merged = merge_profiles(builtins, &settings);
        let shown: String = merged.iter().map(|profile| format!("{}: {}\n", profile.name, profile.command)).collect();
        expected.assert_eq(&shown);
    }

    fn builtins() -> Vec<AgentProfile> {
        ["Claude Code", "Codex", "Gemini CLI"]
            .map(|name| AgentProfile {
                name: name.to_owned(),
                command: format!("{}-builtin", name.to_lowercase().replace(' ', "-")),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
                protocol: Default::default(),
            })
            .to_vec()
    }

    /// Of several profiles of one name only the last is kept (a later entry overrides an earlier
    /// one, as in the extension's merge by a map of names), and replaces a built-in of its name.
    #[test]
    fn of_duplicate_names_the_last_is_kept_and_replaces_a_built_in() {
        check_merged(
            &builtins(),
            json!([
                {"name": "Codex", "command": "first-codex"},
                {"name": "Twin", "command": "first-twin"},
                {"name": "Codex", "command": "second-codex"},
                {"name": "Twin", "command": "second-twin"},
            ]),
            expect![[r#"
                Claude Code: claude-code-builtin
                Codex: second-codex
                Gemini CLI: gemini-cli-builtin
                Twin: second-twin
            "#]],
        );
    }

    #[test]
    fn an_entry_named_like_a_built_in_that_is_no_profile_leaves_the_built_in() {
        check_merged(
            &builtins(),
            json!([{"name": "Codex", "args": ["-c"]}]),
            expect![[r#"
                Claude Code: claude-code-builtin
                Codex: codex-builtin
                Gemini CLI: gemini-cli-builtin
            "#]],
        );
    }
}
