//! TypeScript declarations for every wire type the host and the webview see, generated from the
//! Rust definitions so the two sides cannot drift apart.
//!
//! The output is committed as `extension/src/generated/protocol.ts`; the test
//! `tests/typescript.rs` fails when that file is stale, and `cargo xtask codegen` rewrites it.
//! Large integers (ids, counts) are declared as `number`: none of them can exceed 2^53.

use ts_rs::{Config, TS};

use crate::{host_api, intent, permissions, review, sidecar, thread, webview};

/// The whole generated file.
pub fn generate() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from Rust by tether-core (src/typescript.rs). Do not edit:\n\
         // run `cargo xtask codegen` after changing a wire type.\n",
    );
    let mut declare = |decl: String| {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    };
    macro_rules! declare_all {
        ($($ty:ty),* $(,)?) => { $( declare(<$ty as TS>::decl(&cfg)); )* };
    }
    declare_all!(
        // host ↔ engine
        host_api::AgentProfile,
        host_api::AgentProtocol,
        host_api::ClaudeCliSettings,
        host_api::EngineConfig,
        host_api::HostCommand,
        host_api::HostEvent,
        intent::Intent,
        host_api::LogLevel,
        host_api::HostAction,
        host_api::PermissionSettings,
        host_api::EditOutcome,
        host_api::FileReadReply,
        host_api::FileReadOutcome,
        host_api::ResolvedPath,
        host_api::ExportFormat,
        host_api::HistoryItem,
        host_api::HistorySource,
        host_api::AuthMethodView,
        host_api::AuthMethodKind,
        host_api::AuthVariable,
        host_api::EditorSelection,
        // host ↔ webview
        webview::SessionView,
        webview::SessionStatus,
        webview::SessionTabView,
        webview::ProfileView,
        webview::ProfileState,
        webview::TabActivity,
        webview::ViewSnapshot,
        webview::HostToWebview,
        webview::WebviewToHost,
        webview::ViewEvent,
        webview::PermissionsView,
        webview::AgentModeView,
        webview::ChangedFileView,
        webview::ReviewIntent,
        webview::TerminalIntent,
        webview::SessionControlsView,
        webview::SlashCommandView,
        webview::ConfigOptionView,
        webview::ConfigOptionKind,
        webview::ConfigChoiceView,
        webview::ConfigValue,
        webview::UsageView,
        webview::CostView,
        webview::PromptCapabilitiesView,
        webview::McpServerView,
        webview::PromptAttachment,
        webview::MentionSuggestion,
        // file review
        review::ChangeOrigin,
        review::FileChangeKind,
        review::HunkState,
        review::ChangePhase,
        review::DiffSign,
        review::DiffLineView,
        review::HunkView,
        review::FileChangeView,
        review::TextEdit,
        review::ReviewHunk,
        review::ReviewDocument,
        // permission policy
        permissions::Mode,
        permissions::RuleDecision,
        permissions::RuleSpec,
        permissions::RuleScope,
        permissions::RuleOrigin,
        permissions::RuleView,
        permissions::DecidedBy,
        // the thread model the webview renders
        thread::Entry,
        thread::UserMessage,
        thread::AttachmentView,
        thread::AgentMessage,
        thread::ChunkKind,
        thread::MessageChunk,
        thread::ToolStatus,
        thread::ToolCallView,
        thread::ToolContent,
        thread::Location,
        thread::PermissionView,
        thread::PermissionOptionView,
        thread::PermissionOutcome,
        thread::NoticeLevel,
        thread::NoticeView,
        thread::RestoreView,
        thread::RestoreState,
        thread::RestoreFileView,
        thread::PlanEntryView,
        thread::TurnState,
        thread::ThreadPatch,
        thread::TerminalView,
        thread::TerminalOrigin,
        thread::TerminalState,
        thread::TerminalLine,
        thread::TerminalSpan,
        thread::TerminalStyle,
        thread::TerminalColor,
        // host ↔ tetherd (the parts the host's logs and tests name)
        sidecar::BadLineKind,
        // what an agent's MCP tools ask VS Code (`askEditor`), and its answers
        sidecar::EditorQuery,
        sidecar::EditorAnswer,
        sidecar::EditorPosition,
        sidecar::EditorRange,
        sidecar::ActiveSelection,
        sidecar::OpenEditor,
        sidecar::EditorDiagnostic,
        sidecar::EditorLocation,
        sidecar::EditorSymbol,
    );
    out.push_str(
        "\n/** Type aliases used above. */\nexport type EntryIndex = number;\nexport type PermissionKey = number;\nexport type RuleId = number;\nexport type SessionKey = number;\nexport type RestoreId = number;\n",
    );
    facts(&mut out);
    out
}

/// Values the host and the webview show or check, generated so that they are not copies: the
/// permission modes with their words, and the tool kinds a rule may name.
fn facts(out: &mut String) {
    let quoted = |text: &str| serde_json::Value::String(text.to_owned()).to_string();
    out.push_str(
        "\n/** Tether's permission modes in the picker's order, from the most careful to the least, with the words the chat uses for them. */\n\
         export const MODES: readonly { mode: Mode; label: string; description: string }[] = [\n",
    );
    for mode in permissions::Mode::ALL {
        let id = serde_json::to_value(mode).map(|value| value.to_string()).unwrap_or_default();
        out.push_str(&format!(
            "  {{ mode: {id}, label: {}, description: {} }},\n",
            quoted(mode.label()),
            quoted(mode.description())
        ));
    }
    out.push_str("];\n");
    out.push_str(
        "\n/** The tool kinds a rule may name: ACP's own, as its schema crate writes them, in the rules form's order. */\n\
         export const TOOL_KINDS: readonly string[] = [",
    );
    let names: Vec<String> = permissions::tool_kind_names().iter().map(|name| quoted(name)).collect();
    out.push_str(&names.join(", "));
    out.push_str("];\n");
}
