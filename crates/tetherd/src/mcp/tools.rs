//! The tools of Tether's MCP server, as an `rmcp` server handler: their names, descriptions and
//! argument schemas, and what every call goes through (the grant, the bounds, the audit).
//!
//! Positions an agent gives and reads are 1-based lines and columns counted in characters, as
//! an agent sees a file; VS Code's are 0-based UTF-16 ([`EditorPosition`]), converted here from
//! the file's text. Paths an agent reads are workspace-relative where the file is in the
//! workspace; a language server may point outside it (a library's declarations), and such a
//! location is given by its absolute path, flagged, without any of its text.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Extensions, Implementation, InitializeResult, ServerCapabilities};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tether_core::jsonrpc::encode_notification;
use tether_core::sidecar::{EditorAnswer, EditorPosition, EditorQuery, EditorQueryParams, McpToolCalled, method};

use super::McpServer;
use super::grants::Grant;
use super::workspace_tools::{self, Limits, ListFilesParams, SearchTextParams, WorkspaceRoots};
use crate::session;
use crate::utc::UtcTime;

/// The most bytes of text one tool result may hold, whatever the tool.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// How many items a list from the editor holds when the agent does not say.
const DEFAULT_EDITOR_RESULTS: u32 = 100;
/// The most items a list from the editor holds, whatever the agent asks.
const MAX_EDITOR_RESULTS: u32 = 500;

/// The most characters of selected text a `get_selection` answer carries.
const MAX_SELECTION_CHARS: usize = 32 * 1024;
/// The most characters of each hover text.
const MAX_HOVER_CHARS: usize = 4 * 1024;
/// The largest file whose text is read to turn a line and column into VS Code's position, or to
/// show a location's line.
const MAX_POSITION_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most characters of each string argument kept in the audit and shown in the chat.
const MAX_ARGUMENT_CHARS: usize = 300;
/// The most characters of a location's line shown with it.
const MAX_PREVIEW_CHARS: usize = 200;

/// Where the server's description for the agent says what it is for.
const INSTRUCTIONS: &str = "Tools from the editor the person is using (VS Code, through Tether): \
    search and list the workspace's files, read git status, and ask VS Code what only it knows: \
    the person's selection and open editors, the Problems panel, and the language servers \
    (definitions, references, hover, symbols). Lines and columns are 1-based. Every tool only \
    reads; open_file shows a file to the person.";

/// Tether's MCP server as one agent connection sees it.
#[derive(Clone)]
pub struct TetherTools {
    server: Arc<McpServer>,
    /// The grant of a stdio connection, which presented its token once, in `mcp/hello`. Over
    /// HTTP every request carries its own, checked before the request gets here.
    connection_grant: Option<Arc<Grant>>,
    tool_router: ToolRouter<Self>,
}

impl std::fmt::Debug for TetherTools {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TetherTools")
            .field("agent_id", &self.connection_grant.as_ref().map(|grant| grant.agent_id))
            .finish_non_exhaustive()
    }
}

/// What a tool produced: the JSON the agent reads, and the line the chat's card shows.
struct ToolOutput {
    result: Value,
    summary: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct GitStatusParams {
    /// A folder inside the repository to report on; the first workspace folder when absent.
    pub path: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct DiagnosticsParams {
    /// A file whose problems to list; the whole workspace's when absent.
    pub path: Option<String>,
    /// At most this many problems (100 when absent, at most 500), errors first.
    pub max_results: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PositionParams {
    /// The file, workspace-relative or absolute.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// The name to look up, as it appears on that line (its first occurrence is used). Give
    /// this or `column`.
    #[serde(default)]
    pub symbol: Option<String>,
    /// 1-based column, in characters. Used when `symbol` is absent (1 when both are).
    #[serde(default)]
    pub column: Option<u32>,
    /// For lists (references): at most this many (100 when absent, at most 500).
    #[serde(default)]
    pub max_results: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileParams {
    /// The file, workspace-relative or absolute.
    pub path: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceSymbolsParams {
    /// Part of the names to look for (the language servers match loosely).
    pub query: String,
    /// At most this many (100 when absent, at most 500).
    #[serde(default)]
    pub max_results: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenFileParams {
    /// The file, workspace-relative or absolute.
    pub path: String,
    /// 1-based line to show and put the cursor on.
    #[serde(default)]
    pub line: Option<u32>,
    /// Move the keyboard focus to the editor. Leave it unset unless the person asked to be
    /// taken there: they may be typing in the chat.
    #[serde(default)]
    pub focus: bool,
}

#[tool_router]
impl TetherTools {
    /// The server of a stdio connection whose token gave `grant`.
    pub fn for_connection(server: Arc<McpServer>, grant: Arc<Grant>) -> Self {
        Self { server, connection_grant: Some(grant), tool_router: Self::tool_router() }
    }

    /// The server of the HTTP transport, where each request brings its grant.
    pub fn for_http(server: Arc<McpServer>) -> Self {
        Self { server, connection_grant: None, tool_router: Self::tool_router() }
    }

    #[tool(
        description = "Search the workspace's files for a regular expression (or plain text with `literal`), \
        like ripgrep: honours .gitignore, skips binary files. Returns matching lines with 1-based line numbers \
        and optional context lines. Narrow with `path` (a file or folder) and `globs` (\"*.ts\", \"!**/test/**\").",
        annotations(read_only_hint = true)
    )]
    async fn search_text(
        &self,
        Parameters(params): Parameters<SearchTextParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("search_text", arguments, &extensions, move |grant| async move {
            let result = blocking(move || {
                workspace_tools::search_text(&grant.roots, &params, &tool_limits()).map_err(|error| error.to_string())
            })
            .await?;
            let files = count_distinct(result.matches.iter().map(|found| found.path.as_str()));
            let summary = format!(
                "{} in {} of {} files searched{}",
                plural(result.matches.len(), "match", "matches"),
                files,
                result.files_searched,
                truncation_note(result.truncated.is_some())
            );
            Ok(ToolOutput { result: to_value(&result)?, summary })
        })
        .await
    }

    #[tool(
        description = "List the workspace's files (honours .gitignore), optionally under `path` and filtered by `globs` \
        (\"src/**/*.rs\", \"!**/*.snap\"). Paths are workspace-relative.",
        annotations(read_only_hint = true)
    )]
    async fn list_files(
        &self,
        Parameters(params): Parameters<ListFilesParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("list_files", arguments, &extensions, move |grant| async move {
            let result = blocking(move || {
                workspace_tools::list_files(&grant.roots, &params, &tool_limits()).map_err(|error| error.to_string())
            })
            .await?;
            let summary = format!(
                "{}{}",
                plural(result.files.len(), "file", "files"),
                truncation_note(result.truncated.is_some())
            );
            Ok(ToolOutput { result: to_value(&result)?, summary })
        })
        .await
    }

    #[tool(
        description = "The git status of the workspace's repository: branch, upstream and how far ahead/behind, \
        staged and unstaged changes, untracked files.",
        annotations(read_only_hint = true)
    )]
    async fn git_status(
        &self,
        Parameters(params): Parameters<GitStatusParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("git_status", arguments, &extensions, move |grant| async move {
            let result = blocking(move || {
                workspace_tools::git_status(&grant.roots, params.path.as_deref(), &tool_limits())
                    .map_err(|error| error.to_string())
            })
            .await?;
            let summary = format!(
                "{}: {} staged, {} unstaged, {} untracked",
                result.branch.as_deref().unwrap_or("detached HEAD"),
                result.staged.len(),
                result.unstaged.len(),
                result.untracked.len()
            );
            Ok(ToolOutput { result: to_value(&result)?, summary })
        })
        .await
    }

    #[tool(
        description = "What the person has selected in VS Code: the active editor's file, the selection's 1-based \
        start and end, and the selected text (empty for a bare cursor).",
        annotations(read_only_hint = true)
    )]
    async fn get_selection(&self, extensions: Extensions) -> Result<CallToolResult, ErrorData> {
        self.call("get_selection", json!({}), &extensions, move |grant| async move {
            let answer = self.ask(&grant, EditorQuery::Selection, 1).await?;
            let EditorAnswer::Selection { selection } = answer else { return Err(unexpected(&answer)) };
            let Some(selection) = selection else {
                return Ok(ToolOutput {
                    result: json!({ "selection": null, "note": "No text editor is active in VS Code." }),
                    summary: "no active editor".to_owned(),
                });
            };
            let Some(path) = grant.roots.relative_if_inside(Path::new(&selection.path)) else {
                return Ok(ToolOutput {
                    result: json!({ "selection": null, "note": "The active editor shows a file outside the workspace." }),
                    summary: "the active editor is outside the workspace".to_owned(),
                });
            };
            let (text, cut) = cut_chars(&selection.text, MAX_SELECTION_CHARS);
            let lines = selected_lines(selection.range.start, selection.range.end);
            let summary = if selection.text.is_empty() {
                format!("cursor at {path}:{}", selection.range.start.line + 1)
            } else {
                format!("{path}:{}, {}", selection.range.start.line + 1, plural(lines as usize, "line", "lines"))
            };
            let mut result = json!({
                "path": path,
                "language": selection.language_id,
                "start": one_based(selection.range.start),
                "end": one_based(selection.range.end),
                "text": text,
            });
            if cut {
                result["truncated"] = json!(format!("the selection is cut to {MAX_SELECTION_CHARS} characters"));
            }
            Ok(ToolOutput { result, summary })
        })
        .await
    }

    #[tool(
        description = "The files open in VS Code's editor tabs: path, language, whether they have unsaved changes, \
        and which one is active.",
        annotations(read_only_hint = true)
    )]
    async fn get_open_editors(&self, extensions: Extensions) -> Result<CallToolResult, ErrorData> {
        self.call("get_open_editors", json!({}), &extensions, move |grant| async move {
            let answer = self.ask(&grant, EditorQuery::OpenEditors, MAX_EDITOR_RESULTS).await?;
            let EditorAnswer::OpenEditors { editors } = answer else { return Err(unexpected(&answer)) };
            let mut outside = 0usize;
            let listed: Vec<Value> = editors
                .iter()
                .filter_map(|editor| match grant.roots.relative_if_inside(Path::new(&editor.path)) {
                    None => {
                        outside += 1;
                        None
                    }
                    Some(path) => Some(json!({
                        "path": path,
                        "language": editor.language_id,
                        "unsaved": editor.dirty,
                        "active": editor.active,
                    })),
                })
                .collect();
            let summary = plural(listed.len(), "open editor", "open editors");
            let mut result = json!({ "editors": listed });
            if outside > 0 {
                result["outsideWorkspace"] = json!(outside);
            }
            Ok(ToolOutput { result, summary })
        })
        .await
    }

    #[tool(
        description = "The problems VS Code knows (its Problems panel: compiler and linter errors and warnings) for one \
        file or the whole workspace, errors first, with 1-based positions, severity and source.",
        annotations(read_only_hint = true)
    )]
    async fn get_diagnostics(
        &self,
        Parameters(params): Parameters<DiagnosticsParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("get_diagnostics", arguments, &extensions, move |grant| async move {
            let path = params.path.as_deref().map(|path| resolve(&grant.roots, path)).transpose()?;
            let max = clamp_editor_results(params.max_results);
            let query =
                EditorQuery::Diagnostics { path: path.as_ref().map(|path| path.to_string_lossy().into_owned()) };
            let answer = self.ask(&grant, query, max).await?;
            let EditorAnswer::Diagnostics { mut diagnostics } = answer else { return Err(unexpected(&answer)) };
            diagnostics.retain(|diagnostic| grant.roots.relative_if_inside(Path::new(&diagnostic.path)).is_some());
            diagnostics.sort_by(|a, b| {
                severity_rank(&a.severity)
                    .cmp(&severity_rank(&b.severity))
                    .then_with(|| a.path.cmp(&b.path))
                    .then_with(|| a.range.start.line.cmp(&b.range.start.line))
            });
            let truncated = cut_to(&mut diagnostics, max);
            let errors = diagnostics.iter().filter(|diagnostic| diagnostic.severity == "error").count();
            let warnings = diagnostics.iter().filter(|diagnostic| diagnostic.severity == "warning").count();
            let listed: Vec<Value> = diagnostics
                .iter()
                .map(|diagnostic| {
                    json!({
                        "path": grant.roots.relative(Path::new(&diagnostic.path)),
                        "start": one_based(diagnostic.range.start),
                        "end": one_based(diagnostic.range.end),
                        "severity": diagnostic.severity,
                        "message": diagnostic.message,
                        "source": diagnostic.source,
                        "code": diagnostic.code,
                    })
                })
                .collect();
            let summary = if listed.is_empty() {
                "no problems".to_owned()
            } else {
                format!(
                    "{}, {}{}",
                    plural(errors, "error", "errors"),
                    plural(warnings, "warning", "warnings"),
                    truncation_note(truncated)
                )
            };
            let mut result = json!({ "problems": listed });
            if truncated {
                result["truncated"] = json!(format!("only the first {max} problems are listed"));
            }
            Ok(ToolOutput { result, summary })
        })
        .await
    }

    #[tool(
        description = "Go to definition, through VS Code's language servers: where the name at `path`:`line` \
        (give the `symbol` as it appears on that line, or a 1-based `column`) is defined.",
        annotations(read_only_hint = true)
    )]
    async fn lsp_definition(
        &self,
        Parameters(params): Parameters<PositionParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("lsp_definition", arguments, &extensions, move |grant| async move {
            let (path, position) = position_in(&grant.roots, &params).await?;
            let query = EditorQuery::Definition { path, position };
            let answer = self.ask(&grant, query, MAX_EDITOR_RESULTS).await?;
            let EditorAnswer::Locations { locations } = answer else { return Err(unexpected(&answer)) };
            let (listed, truncated) = locations_for_agent(&grant.roots, locations, MAX_EDITOR_RESULTS).await;
            let summary =
                format!("{}{}", plural(listed.len(), "definition", "definitions"), truncation_note(truncated));
            Ok(ToolOutput { result: json!({ "definitions": listed }), summary })
        })
        .await
    }

    #[tool(
        description = "Find references, through VS Code's language servers: every use of the name at `path`:`line` \
        (give the `symbol` as it appears on that line, or a 1-based `column`), with each line's text.",
        annotations(read_only_hint = true)
    )]
    async fn lsp_references(
        &self,
        Parameters(params): Parameters<PositionParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("lsp_references", arguments, &extensions, move |grant| async move {
            let max = clamp_editor_results(params.max_results);
            let (path, position) = position_in(&grant.roots, &params).await?;
            let query = EditorQuery::References { path, position };
            let answer = self.ask(&grant, query, max).await?;
            let EditorAnswer::Locations { locations } = answer else { return Err(unexpected(&answer)) };
            let (listed, truncated) = locations_for_agent(&grant.roots, locations, max).await;
            let summary = format!("{}{}", plural(listed.len(), "reference", "references"), truncation_note(truncated));
            let mut result = json!({ "references": listed });
            if truncated {
                result["truncated"] = json!(format!("only the first {max} references are listed"));
            }
            Ok(ToolOutput { result, summary })
        })
        .await
    }

    #[tool(
        description = "Hover information from VS Code's language servers (the type, signature and documentation) for \
        the name at `path`:`line` (give the `symbol` as it appears on that line, or a 1-based `column`).",
        annotations(read_only_hint = true)
    )]
    async fn lsp_hover(
        &self,
        Parameters(params): Parameters<PositionParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("lsp_hover", arguments, &extensions, move |grant| async move {
            let (path, position) = position_in(&grant.roots, &params).await?;
            let answer = self.ask(&grant, EditorQuery::Hover { path, position }, 20).await?;
            let EditorAnswer::Hover { contents } = answer else { return Err(unexpected(&answer)) };
            let contents: Vec<String> = contents
                .iter()
                .filter(|text| !text.trim().is_empty())
                .map(|text| cut_chars(text, MAX_HOVER_CHARS).0)
                .collect();
            let summary = match contents.first() {
                None => "nothing to show".to_owned(),
                Some(first) => first_line(first),
            };
            Ok(ToolOutput { result: json!({ "hover": contents }), summary })
        })
        .await
    }

    #[tool(
        description = "The outline of a file from VS Code's language servers: its classes, functions, methods and \
        other symbols with their kinds, 1-based line ranges and containers.",
        annotations(read_only_hint = true)
    )]
    async fn lsp_document_symbols(
        &self,
        Parameters(params): Parameters<FileParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("lsp_document_symbols", arguments, &extensions, move |grant| async move {
            let path = resolve(&grant.roots, &params.path)?;
            let query = EditorQuery::DocumentSymbols { path: path.to_string_lossy().into_owned() };
            let answer = self.ask(&grant, query, MAX_EDITOR_RESULTS).await?;
            let EditorAnswer::Symbols { mut symbols } = answer else { return Err(unexpected(&answer)) };
            let truncated = cut_to(&mut symbols, MAX_EDITOR_RESULTS);
            let listed: Vec<Value> = symbols
                .iter()
                .map(|symbol| {
                    json!({
                        "name": symbol.name,
                        "kind": symbol.kind,
                        "startLine": symbol.range.start.line + 1,
                        "endLine": symbol.range.end.line + 1,
                        "container": symbol.container,
                    })
                })
                .collect();
            let summary = format!("{}{}", plural(listed.len(), "symbol", "symbols"), truncation_note(truncated));
            Ok(ToolOutput { result: json!({ "symbols": listed }), summary })
        })
        .await
    }

    #[tool(
        description = "Search the whole workspace's symbols (classes, functions, types...) by name through VS Code's \
        language servers.",
        annotations(read_only_hint = true)
    )]
    async fn lsp_workspace_symbols(
        &self,
        Parameters(params): Parameters<WorkspaceSymbolsParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("lsp_workspace_symbols", arguments, &extensions, move |grant| async move {
            let max = clamp_editor_results(params.max_results);
            let answer = self.ask(&grant, EditorQuery::WorkspaceSymbols { query: params.query.clone() }, max).await?;
            let EditorAnswer::Symbols { mut symbols } = answer else { return Err(unexpected(&answer)) };
            // A library's symbols are not the workspace's business.
            symbols.retain(|symbol| grant.roots.relative_if_inside(Path::new(&symbol.path)).is_some());
            let truncated = cut_to(&mut symbols, max);
            let listed: Vec<Value> = symbols
                .iter()
                .map(|symbol| {
                    json!({
                        "name": symbol.name,
                        "kind": symbol.kind,
                        "path": grant.roots.relative(Path::new(&symbol.path)),
                        "line": symbol.range.start.line + 1,
                        "container": symbol.container,
                    })
                })
                .collect();
            let summary = format!("{}{}", plural(listed.len(), "symbol", "symbols"), truncation_note(truncated));
            Ok(ToolOutput { result: json!({ "symbols": listed }), summary })
        })
        .await
    }

    #[tool(
        description = "Show a file to the person in VS Code's editor, at a 1-based line, without taking the keyboard \
        focus unless `focus` is set. Use it to point the person at something; it changes nothing."
    )]
    async fn open_file(
        &self,
        Parameters(params): Parameters<OpenFileParams>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments = arguments_of(&params);
        self.call("open_file", arguments, &extensions, move |grant| async move {
            let path = resolve(&grant.roots, &params.path)?;
            if !path.is_file() {
                return Err(format!("{} is not a file", params.path));
            }
            let query = EditorQuery::OpenFile {
                path: path.to_string_lossy().into_owned(),
                line: params.line.map(|line| line.saturating_sub(1)),
                focus: params.focus,
            };
            let answer = self.ask(&grant, query, 1).await?;
            let EditorAnswer::Opened { .. } = answer else { return Err(unexpected(&answer)) };
            let shown = grant.roots.relative(&path);
            let summary = match params.line {
                Some(line) => format!("opened {shown}:{line}"),
                None => format!("opened {shown}"),
            };
            Ok(ToolOutput { result: json!({ "opened": shown, "line": params.line }), summary })
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TetherTools {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

impl TetherTools {
    /// Runs one tool call: finds its grant, bounds it in time and bytes, and records it in the
    /// session's audit log and for the chat, whatever the outcome.
    async fn call<'a, F, Fut>(
        &'a self,
        tool: &'static str,
        arguments: Value,
        extensions: &Extensions,
        work: F,
    ) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(Arc<Grant>) -> Fut,
        Fut: Future<Output = Result<ToolOutput, String>> + 'a,
    {
        let Some(grant) = self.grant(extensions) else {
            return Err(ErrorData::invalid_request("this MCP token no longer opens Tether's tools", None));
        };
        let started = Instant::now();
        let limit = self.time_limit();
        let outcome = match tokio::time::timeout(limit, work(grant.clone())).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => Err(format!("{tool} did not finish within {} seconds", limit.as_secs())),
        };
        let duration = started.elapsed();
        let (result, summary, ok) = match outcome {
            Ok(output) => {
                let mut text = output.result.to_string();
                if text.len() > MAX_RESULT_BYTES {
                    text = json!({
                        "error": format!(
                            "the result is {} bytes, more than the {MAX_RESULT_BYTES} a tool may return; narrow the request",
                            text.len()
                        )
                    })
                    .to_string();
                    (CallToolResult::error(vec![ContentBlock::text(text)]), "result too large".to_owned(), false)
                } else {
                    (CallToolResult::success(vec![ContentBlock::text(text)]), output.summary, true)
                }
            }
            Err(error) => (CallToolResult::error(vec![ContentBlock::text(error.clone())]), error, false),
        };
        let result_bytes =
            result.content.iter().filter_map(|block| block.as_text().map(|text| text.text.len() as u64)).sum::<u64>();
        self.record(McpToolCalled {
            agent_id: grant.agent_id,
            tool: tool.to_owned(),
            arguments,
            summary,
            ok,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            result_bytes,
        })
        .await;
        Ok(result)
    }

    /// The grant this call runs under: the connection's, or the one the HTTP layer found for the
    /// request's bearer token. Checked again here, so that a token whose agent has exited since
    /// the connection was opened opens nothing.
    fn grant(&self, extensions: &Extensions) -> Option<Arc<Grant>> {
        let grant = match &self.connection_grant {
            Some(grant) => grant.clone(),
            None => extensions.get::<http::request::Parts>()?.extensions.get::<Arc<Grant>>()?.clone(),
        };
        self.server.registry.is_live(grant.agent_id).then_some(grant)
    }

    /// Writes the call to the session's audit log (and event log) and tells the hosts.
    async fn record(&self, called: McpToolCalled) {
        let record = json!({
            "event": "mcpToolCalled",
            "tool": called.tool,
            "arguments": called.arguments,
            "ok": called.ok,
            "summary": called.summary,
            "durationMs": called.duration_ms,
            "resultBytes": called.result_bytes,
        });
        match self.server.registry.session_folder(called.agent_id) {
            Err(reason) => {
                tracing::debug!(agent_id = called.agent_id, ?reason, "MCP call not audited: no session folder")
            }
            Ok(folder) => match serde_json::value::to_raw_value(&record) {
                Err(error) => tracing::warn!(%error, "an MCP audit record could not be written"),
                Ok(raw) => {
                    let now = UtcTime::from_system_time(std::time::SystemTime::now());
                    match session::append_audit(&folder.dir, &raw, now) {
                        Ok(()) => folder.events.host_record(raw.get()),
                        Err(error) => tracing::warn!(error = format!("{error:#}"), "MCP audit record dropped"),
                    }
                }
            },
        }
        self.server.fanout.publish(encode_notification(method::MCP_TOOL_CALLED, &called)).await;
    }

    /// The time any one call may take, from its start to its answer: the workspace tools' own
    /// limit or the editor's, with room for the bookkeeping around them.
    fn time_limit(&self) -> Duration {
        tool_limits().time.max(self.server.editor.timeout()) + Duration::from_secs(5)
    }

    async fn ask(&self, grant: &Grant, query: EditorQuery, max_results: u32) -> Result<EditorAnswer, String> {
        let params = EditorQueryParams { agent_id: grant.agent_id, query, max_results };
        self.server.editor.ask(&self.server.fanout, &params).await.map_err(|error| error.to_string())
    }
}

/// What each tool may spend.
fn tool_limits() -> Limits {
    Limits { max_bytes: MAX_RESULT_BYTES, ..Limits::default() }
}

/// Runs file work on a blocking thread.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, String> + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(work).await.map_err(|error| format!("the tool failed: {error}"))?
}

fn resolve(roots: &WorkspaceRoots, path: &str) -> Result<PathBuf, String> {
    roots.resolve(path).map_err(|error| error.to_string())
}

/// The file and VS Code position a [`PositionParams`] names, from the file's text.
async fn position_in(roots: &WorkspaceRoots, params: &PositionParams) -> Result<(String, EditorPosition), String> {
    let path = resolve(roots, &params.path)?;
    let shown = roots.relative(&path);
    let line_number = params.line.max(1);
    let text = read_bounded(&path).await.map_err(|error| format!("cannot read {shown}: {error}"))?;
    let Some(line) = text.lines().nth((line_number - 1) as usize) else {
        return Err(format!("{shown} has only {} lines", text.lines().count()));
    };
    let byte = match (&params.symbol, params.column) {
        (Some(symbol), _) if !symbol.is_empty() => line.find(symbol.as_str()).ok_or_else(|| {
            format!(
                "`{symbol}` is not on line {line_number} of {shown}, which reads: {}",
                cut_chars(line.trim(), 200).0
            )
        })?,
        (_, column) => {
            let column = column.unwrap_or(1).max(1) as usize;
            line.char_indices().nth(column - 1).map(|(byte, _)| byte).unwrap_or(line.len())
        }
    };
    let character = u32::try_from(line[..byte].encode_utf16().count()).unwrap_or(u32::MAX);
    Ok((path.to_string_lossy().into_owned(), EditorPosition { line: line_number - 1, character }))
}

async fn read_bounded(path: &Path) -> std::io::Result<String> {
    let metadata = tokio::fs::metadata(path).await?;
    if metadata.len() > MAX_POSITION_FILE_BYTES {
        return Err(std::io::Error::other(format!("it is larger than {MAX_POSITION_FILE_BYTES} bytes")));
    }
    let bytes = tokio::fs::read(path).await?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Locations as the agent reads them: workspace files by relative path with their line's text,
/// others by absolute path only. At most `max`; the second value says there were more.
async fn locations_for_agent(
    roots: &WorkspaceRoots,
    mut locations: Vec<tether_core::sidecar::EditorLocation>,
    max: u32,
) -> (Vec<Value>, bool) {
    let truncated = cut_to(&mut locations, max);
    let mut listed = Vec::with_capacity(locations.len());
    let mut texts: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
    for location in &locations {
        let absolute = Path::new(&location.path);
        let mut entry = json!({
            "start": one_based(location.range.start),
            "end": one_based(location.range.end),
        });
        match roots.relative_if_inside(absolute) {
            None => {
                entry["path"] = json!(location.path);
                entry["outsideWorkspace"] = json!(true);
            }
            Some(relative) => {
                entry["path"] = json!(relative);
                if !texts.contains_key(&location.path) {
                    let text = read_bounded(absolute).await.ok();
                    texts.insert(location.path.clone(), text);
                }
                if let Some(Some(text)) = texts.get(&location.path)
                    && let Some(line) = text.lines().nth(location.range.start.line as usize)
                {
                    entry["text"] = json!(cut_chars(line.trim(), MAX_PREVIEW_CHARS).0);
                }
            }
        }
        listed.push(entry);
    }
    (listed, truncated)
}

/// Cuts `items` to `max`; whether there were more.
fn cut_to<T>(items: &mut Vec<T>, max: u32) -> bool {
    let more = items.len() > max as usize;
    items.truncate(max as usize);
    more
}

fn one_based(position: EditorPosition) -> Value {
    json!({ "line": position.line + 1, "column": position.character + 1 })
}

fn severity_rank(severity: &str) -> u8 {
    match severity {
        "error" => 0,
        "warning" => 1,
        "information" => 2,
        _ => 3,
    }
}

fn clamp_editor_results(asked: Option<u32>) -> u32 {
    asked.unwrap_or(DEFAULT_EDITOR_RESULTS).clamp(1, MAX_EDITOR_RESULTS)
}

/// `text` cut to `max` characters (with "…"), and whether it was cut.
fn cut_chars(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        None => (text.to_owned(), false),
        Some((byte, _)) => (format!("{}…", &text[..byte]), true),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with("```")).unwrap_or("");
    cut_chars(line, 80).0
}

fn plural(count: usize, one: &str, many: &str) -> String {
    if count == 1 { format!("1 {one}") } else { format!("{count} {many}") }
}

fn truncation_note(truncated: bool) -> &'static str {
    if truncated { " (cut short)" } else { "" }
}

fn count_distinct<'a>(items: impl Iterator<Item = &'a str>) -> usize {
    items.collect::<std::collections::BTreeSet<_>>().len()
}

fn to_value(value: &impl Serialize) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|error| format!("the result could not be encoded: {error}"))
}

/// A tool's arguments for the audit and the chat, long strings shortened.
fn arguments_of(params: &impl Serialize) -> Value {
    let mut value = serde_json::to_value(params).unwrap_or(Value::Null);
    shorten_strings(&mut value);
    value
}

fn shorten_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let (cut, true) = cut_chars(text, MAX_ARGUMENT_CHARS) {
                *text = cut;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(shorten_strings),
        Value::Object(fields) => fields.values_mut().for_each(shorten_strings),
        _ => {}
    }
}

fn unexpected(answer: &EditorAnswer) -> String {
    format!("VS Code answered with something else than asked: {answer:?}")
}

/// How many lines a selection from `start` to `end` covers. A selection of whole lines ends at
/// the start of the line after them (VS Code's triple click, Shift+Down): that line is not one
/// of them, and one selected line read "2 lines".
fn selected_lines(start: EditorPosition, end: EditorPosition) -> u32 {
    let last = if end.character == 0 && end.line > start.line { end.line - 1 } else { end.line };
    last - start.line + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_counts_the_lines_it_covers_not_the_one_after_whole_lines() {
        let at = |line, character| EditorPosition { line, character };
        assert_eq!(selected_lines(at(0, 0), at(1, 0)), 1, "line 1 selected whole");
        assert_eq!(selected_lines(at(0, 2), at(0, 7)), 1);
        assert_eq!(selected_lines(at(0, 0), at(2, 0)), 2);
        assert_eq!(selected_lines(at(0, 3), at(2, 1)), 3);
        assert_eq!(selected_lines(at(4, 0), at(4, 0)), 1, "a cursor");
    }
}
