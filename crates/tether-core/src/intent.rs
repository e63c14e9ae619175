//! What the person asks of Tether, whichever surface they asked on.
//!
//! A button in the chat view, a command in the palette, a keybinding, a CodeLens in the diff
//! editor: each turns the person's action into one [`Intent`], and the host engine has one
//! dispatcher for them (`HostEngine::handle_intent`). The two wire types that carry intents,
//! [`WebviewToHost`](crate::webview::WebviewToHost) from the chat view and
//! [`HostCommand`](crate::host_api::HostCommand) from the extension, hold an `Intent` beside what
//! only that surface sends (the view's `ready`, the host's file and terminal events), so an action
//! offered in two places is one variant here, typed once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
#[cfg(feature = "typescript")]
use ts_rs::TS;

use crate::host_api::{EditorSelection, ExportFormat};
use crate::permissions::{Mode, RuleId, RuleScope, RuleSpec};
use crate::thread::{EntryIndex, PermissionKey, RestoreId};
use crate::webview::{ConfigValue, PromptAttachment, ReviewIntent, SessionKey, TerminalIntent};

/// Something the person asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "typescript", derive(TS))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Intent {
    Prompt {
        text: String,
        /// Files and selections the text mentions with `@`, images pasted or dropped; absent
        /// from a webview older than mentions.
        #[serde(default)]
        attachments: Vec<PromptAttachment>,
    },
    Cancel,
    AnswerPermission {
        key: PermissionKey,
        option_id: String,
    },
    /// A new session in a tab of its own, with the selected agent; the others go on.
    NewSession,
    /// Show this session's tab (the others go on in the background).
    ShowSession {
        key: SessionKey,
    },
    /// Close this session's tab: its agent is stopped; the session stays in the history. A
    /// session at work (a turn running, a question or a change waiting for the person) is closed
    /// only `confirmed`: else the host is asked to confirm (`HostAction::ConfirmCloseSession`).
    CloseSession {
        key: SessionKey,
        #[serde(default)]
        confirmed: bool,
    },
    /// Restore the files the agent changed to how they were before the prompt at `entry` (its
    /// checkpoint), through the review of each file's change.
    RestoreCode {
        entry: EntryIndex,
    },
    /// Undo a restore: the files go back to how the restore found them, through the same review.
    UndoRestore {
        restore: RestoreId,
    },
    /// Go on with the conversation from before the prompt at `entry`, in a new session (a tab):
    /// the agent's session forked where it offers `session/fork`, else a new one given the
    /// earlier turns as context with the next prompt. The session it came from stays as it is.
    RestoreConversation {
        entry: EntryIndex,
    },
    SelectAgent {
        name: String,
    },
    /// The person chose a mode in the header.
    SetMode {
        mode: Mode,
    },
    /// The person picked one of the agent's own modes in the header.
    SetAgentMode {
        id: String,
    },
    /// The person picked a value for one of the agent's config options (a select's value id, or
    /// a boolean).
    SetConfigOption {
        config_id: String,
        value: ConfigValue,
    },
    /// The person added a rule in the rules panel.
    AddRule {
        spec: RuleSpec,
        scope: RuleScope,
    },
    RemoveRule {
        id: RuleId,
    },
    ClearRules {
        scope: RuleScope,
    },
    /// Save a session rule to the workspace settings.
    KeepRuleForWorkspace {
        id: RuleId,
    },
    OpenAuditLog,
    /// A decision on a change: from the chat's changes, the diff editor (CodeLens, title
    /// buttons) or the command palette.
    Review {
        intent: ReviewIntent,
    },
    /// A terminal's card in the chat, or the stop confirmation's answer.
    Terminal {
        intent: TerminalIntent,
    },
    /// The header's History button, or "Tether: Show History": the engine answers with
    /// [`HostAction::ShowHistory`](crate::host_api::HostAction::ShowHistory).
    ShowHistory,
    /// The person picked a session in the history: show it and start its agent again, resuming
    /// the agent's session.
    OpenSession {
        id: String,
    },
    RenameSession {
        id: String,
        title: String,
    },
    /// The person confirmed deleting a session of the history (its folder goes, logs and all).
    DeleteSession {
        id: String,
    },
    /// Export a session (`id` of the history, or the current session when absent): the header's
    /// Export menu, the history's, or the export commands.
    ExportSession {
        #[serde(default)]
        id: Option<String>,
        format: ExportFormat,
    },
    /// Start the current session's agent again after it exited, resuming its session (the
    /// Restart button shown when `SessionView::canRestart`, or "Tether: Restart Agent").
    Restart,
    /// Kill the agent process (one that hangs while starting, or ignores a cancel): the Stop
    /// button shown when `SessionView::canStop`, or "Tether: Stop Agent". Restart brings it back.
    StopAgent,
    /// Ask how to sign in again (the header's "Sign in" shown when `SessionView::canSignIn`, or
    /// "Tether: Sign In to the Agent").
    SignIn,
    /// The person chose how to sign in (see
    /// [`HostAction::AskAuthentication`](crate::host_api::HostAction::AskAuthentication)). `env`
    /// holds what they entered for an `envVar` method (empty otherwise): the agent is then
    /// started again with it in its environment before `authenticate`. A `terminal` method is
    /// answered once its login terminal closed with exit code 0: the agent is started again to
    /// read what the login stored.
    Authenticate {
        method_id: String,
        env: BTreeMap<String, String>,
    },
    /// The header's "Follow the agent" toggle.
    SetFollowAgent {
        on: bool,
    },
    /// "Tether: Toggle Follow Agent".
    ToggleFollowAgent,
    /// "Manage Workspace Trust", offered while the workspace is not trusted
    /// (`SessionStatus::Untrusted`).
    ManageTrust,
    /// "Agent settings" in the chat's menu and empty state: open VS Code's settings at Tether's
    /// agent profiles (`tether.agents`), where agents are added and configured.
    OpenAgentSettings,
    /// "Show log" beside a start that is taking long: open Tether's log, where everything the
    /// agent wrote to its stderr is kept.
    ShowLog,
    /// Put this text on the clipboard: the copy button of a code block or of an agent's message
    /// (its markdown source). The host writes it, which works where the webview's own clipboard
    /// access is refused.
    CopyText {
        text: String,
    },
    /// A code block's "Insert at cursor": this text replaces the selections of the active editor.
    InsertAtCursor {
        text: String,
    },
    /// A code block's "Open in new file": an untitled editor holding this text, in `language`
    /// (a VS Code language id) when the block named one.
    OpenInNewFile {
        text: String,
        #[serde(default)]
        language: Option<String>,
    },
    /// A path on a card (a tool call's location, a diff's file, a change's file): open the file
    /// in the editor, at `line` (1-based) when given. `path` as the card's view gave it.
    OpenLocation {
        path: String,
        line: Option<u32>,
    },
    /// "Tether: Mention Selection": add the editor's selection to the composer.
    MentionSelection {
        selection: EditorSelection,
    },
}

/// Gives a surface's wire type `$wire`, an enum of `$own($own_type)` and `Intent(Intent)`, its
/// conversions from either part and its `Deserialize` (see [`deserialize_either`]).
macro_rules! surface_or_intent {
    ($wire:ident :: $own:ident ($own_type:ty)) => {
        impl From<$own_type> for $wire {
            fn from(own: $own_type) -> Self {
                $wire::$own(own)
            }
        }

        impl From<$crate::intent::Intent> for $wire {
            fn from(intent: $crate::intent::Intent) -> Self {
                $wire::Intent(intent)
            }
        }

        impl<'de> serde::Deserialize<'de> for $wire {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::intent::deserialize_either(deserializer, $wire::$own, $wire::Intent)
            }
        }
    };
}
pub(crate) use surface_or_intent;

/// Deserializes a message that is either one of a surface's own messages (`Own`) or an
/// [`Intent`], both tagged by `type`: `Own` when its `type` is one of `Own`'s, else an intent.
/// A malformed message gets the error of the variant its `type` names (an untagged enum would
/// only say that no variant matched), and an unknown `type` an error that lists both sets.
pub(crate) fn deserialize_either<'de, D, Own, Either>(
    deserializer: D,
    own: impl FnOnce(Own) -> Either,
    intent: impl FnOnce(Intent) -> Either,
) -> Result<Either, D::Error>
where
    D: serde::Deserializer<'de>,
    Own: serde::de::DeserializeOwned,
{
    use serde::de::Error;
    // serde's own words for a tag no variant has; any other error is about the named variant.
    const UNKNOWN_VARIANT: &str = "unknown variant";
    let value = serde_json::Value::deserialize(deserializer)?;
    let own_error = match crate::json_value::from_value::<Own>(&value) {
        Ok(message) => return Ok(own(message)),
        Err(error) if error.to_string().starts_with(UNKNOWN_VARIANT) => error.to_string(),
        Err(error) => return Err(D::Error::custom(error)),
    };
    crate::json_value::from_value::<Intent>(&value).map(intent).map_err(|error| match error.to_string() {
        text if text.starts_with(UNKNOWN_VARIANT) => {
            // "unknown variant `x`, expected one of …": the intents, then the surface's own.
            let own_types = own_error.split_once("expected ").map_or("", |(_, expected)| expected);
            D::Error::custom(format!("{text}, or {own_types}"))
        }
        text => D::Error::custom(text),
    })
}

#[cfg(test)]
mod tests {
    use crate::host_api::HostCommand;
    use crate::webview::WebviewToHost;

    fn webview_error(json: &str) -> String {
        serde_json::from_str::<WebviewToHost>(json).unwrap_err().to_string()
    }

    #[test]
    fn each_surface_reads_its_own_messages_and_the_intents_from_the_same_flat_objects() {
        let ready: WebviewToHost = serde_json::from_str(r#"{"type":"ready"}"#).unwrap();
        assert_eq!(ready, WebviewToHost::View(crate::webview::ViewEvent::Ready));
        let cancel: WebviewToHost = serde_json::from_str(r#"{"type":"cancel"}"#).unwrap();
        assert_eq!(cancel, WebviewToHost::Intent(super::Intent::Cancel));
        let from_palette: HostCommand = serde_json::from_str(r#"{"type":"cancel"}"#).unwrap();
        assert_eq!(from_palette, HostCommand::Intent(super::Intent::Cancel));
        let trusted: HostCommand = serde_json::from_str(r#"{"type":"workspaceTrusted"}"#).unwrap();
        assert_eq!(trusted, HostCommand::Event(crate::host_api::HostEvent::WorkspaceTrusted));
        // Written as it is read: the same flat object.
        assert_eq!(serde_json::to_string(&cancel).unwrap(), r#"{"type":"cancel"}"#);
    }

    #[test]
    fn a_malformed_message_is_told_what_is_wrong_with_the_variant_it_names() {
        expect_test::expect!["missing field `fresh`"]
            .assert_eq(&webview_error(r#"{"type":"findMentions","query":"a"}"#));
        expect_test::expect!["missing field `text`"].assert_eq(&webview_error(r#"{"type":"prompt"}"#));
        let unknown = webview_error(r#"{"type":"launchRockets"}"#);
        assert!(unknown.starts_with("unknown variant `launchRockets`, expected one of `prompt`"), "{unknown}");
        assert!(unknown.ends_with("`mentionSelection`, or `ready` or `findMentions`"), "{unknown}");
        expect_test::expect!["missing field `type`"].assert_eq(&webview_error(r#"{"text":"hi"}"#));
    }
}
