//! The workspace tools of Tether's MCP server: searching the text of the workspace's files,
//! listing them, and reading the git status of a repository in the workspace. They are plain
//! blocking functions; the MCP layer runs them on a blocking thread, passes the agent's arguments
//! straight in (the params deserialize from the tool call's JSON) and serializes what they return.
//!
//! Everything here is confined to the workspace folders ([`WorkspaceRoots`]). A path an agent
//! gives is resolved through its symlinks and refused when it leads outside every folder; the
//! walker does not follow symlinks at all; and results name files by workspace-relative paths with
//! `/` separators, prefixed with the folder's name when the workspace has several folders (the
//! same form [`WorkspaceRoots::resolve`] accepts back). Every tool is bounded by [`Limits`] (a
//! time budget and a budget of result text) and by a result count, and its result says why it
//! stopped early ([`Truncation`]), so a model knows that the list is not the whole answer.
//!
//! The walker is ripgrep's (`ignore`): hidden files and whatever `.gitignore` and `.ignore` files
//! exclude are skipped, even in a folder that is not a git repository, and the `.git` and
//! `.tether` folders (the repository's internals and Tether's own session folder) are never
//! entered. Globs are ripgrep's `--glob` (gitignore syntax, matched against the path relative to
//! the workspace folder, a leading `!` excludes) except that they only narrow: unlike ripgrep's,
//! they never bring back a hidden or ignored file.
//!
//! What this module deliberately does not do: it never writes (no tool here changes a file or the
//! repository, and `git status` runs with `GIT_OPTIONAL_LOCKS=0`, so it does not even refresh the
//! index); it does not follow symlinks while walking, since a link may lead out of the workspace;
//! it does not know about the editor (unsaved buffers and open tabs are the host's to report); and
//! it is not async, because the crates it builds on are blocking and a search is short.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use serde::{Deserialize, Serialize};

/// The most context lines `search_text` gives before and after a match; more would mostly repeat
/// what neighbouring matches already show, and a model can read the file for more.
pub const MAX_CONTEXT_LINES: u32 = 5;
/// How many matches `search_text` returns when the agent does not say.
pub const DEFAULT_SEARCH_RESULTS: u32 = 100;
/// The most matches `search_text` returns, whatever the agent asks for.
pub const MAX_SEARCH_RESULTS: u32 = 500;
/// How many files `list_files` returns when the agent does not say.
pub const DEFAULT_LIST_RESULTS: u32 = 500;
/// The most files `list_files` returns, whatever the agent asks for.
pub const MAX_LIST_RESULTS: u32 = 2000;
/// Lines longer than this many characters are cut (minified files have lines of megabytes).
pub const MAX_LINE_CHARS: usize = 300;
/// The most changed and untracked paths `git_status` reports together.
pub const MAX_GIT_PATHS: usize = 1000;

/// Folders the walker never enters, at any depth: a repository's internals, and Tether's own
/// session folder (what agents did in earlier sessions is not part of the code being searched).
const NEVER_WALKED: [&str; 2] = [".git", ".tether"];
/// How many symlinks resolving one path may go through before it is refused (Linux's own limit).
const MAX_SYMLINK_HOPS: u32 = 40;
/// How much of git's stderr is kept for an error message.
const GIT_STDERR_CAP: usize = 16 * 1024;
/// Variables that would point git at another repository than the one the path is in. tetherd
/// inherits the environment VS Code was started from, which may come from inside a git hook.
const GIT_REPOSITORY_VARIABLES: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
];

/// What a tool may spend on one call: time, and bytes of result text (paths and lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long the tool may run; a search stops where it is, and git is killed.
    pub time: Duration,
    /// How many bytes of text (paths, lines, context lines) the result may hold.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { time: Duration::from_secs(10), max_bytes: 256 * 1024 }
    }
}

/// Why a tool failed. Each message is one plain sentence, written for the model that called the
/// tool to read and act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("none of the workspace folders exists, so there is nothing to search")]
    NoWorkspace,
    /// `path` is the path as the agent gave it; `roots` lists the workspace folders, quoted.
    #[error("`{path}` is outside the workspace folders; only files under {roots} can be searched")]
    OutsideWorkspace { path: String, roots: String },
    #[error("`{path}` does not exist in the workspace")]
    NotFound { path: String },
    #[error("`{path}` is inside a `.git` or `.tether` folder, which the workspace tools never read")]
    Excluded { path: String },
    #[error("the pattern is empty; give the text or the regular expression to search for")]
    EmptyPattern,
    #[error(
        "the pattern `{pattern}` is not a valid regular expression ({message}); set `literal` to search for it as text"
    )]
    BadPattern { pattern: String, message: String },
    #[error("the glob `{glob}` is not valid ({message})")]
    BadGlob { glob: String, message: String },
    #[error("`{path}` is not inside a git repository")]
    NotARepository { path: String },
    /// `message` is a whole sentence: git is missing, failed, or ran out of time.
    #[error("{message}")]
    Git { message: String },
    #[error("`{path}` could not be read ({message})")]
    Io { path: String, message: String },
}

/// The workspace folders, canonicalized: every path a tool touches must be under one of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceRoots {
    /// Never empty: [`WorkspaceRoots::new`] refuses to build an empty set.
    roots: Vec<Root>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    /// Absolute, with every symlink resolved, so that `starts_with` on resolved paths is a
    /// containment check.
    path: PathBuf,
    /// The folder's name, which prefixes result paths when there are several folders.
    name: String,
}

impl WorkspaceRoots {
    /// The workspace folders, in the editor's order (the first is the default for relative paths).
    /// A folder that does not exist is left out rather than failing every tool, since the others
    /// can still be searched; it is an error only when none exists.
    pub fn new(folders: impl IntoIterator<Item = PathBuf>) -> Result<Self, ToolError> {
        let mut roots: Vec<Root> = Vec::new();
        for folder in folders {
            let Ok(path) = fs::canonicalize(&folder) else { continue };
            if !path.is_dir() || roots.iter().any(|root| root.path == path) {
                continue;
            }
            let name =
                path.file_name().map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned());
            roots.push(Root { path, name });
        }
        if roots.is_empty() {
            return Err(ToolError::NoWorkspace);
        }
        Ok(Self { roots })
    }

    /// Resolves a path an agent gave (absolute, or relative to the first root, or `"<rootname>/rel"`
    /// with several roots) through its symlinks; refuses anything outside every root with
    /// [`ToolError::OutsideWorkspace`] naming the path. A path that does not exist is resolved as
    /// far as it exists (its deepest existing ancestor, through symlinks) and checked there, so
    /// the caller decides whether a missing path is an error.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let joined = self.join(path);
        let resolved = resolve_through_symlinks(&joined, 0)
            .map_err(|error| ToolError::Io { path: path.to_owned(), message: error.to_string() })?;
        if self.root_of(&resolved).is_none() {
            return Err(self.outside(path));
        }
        Ok(resolved)
    }

    /// The workspace-relative form of an absolute path, with `/` separators and the folder's name
    /// in front when there are several folders: what results show. A folder itself is `.` (or its
    /// name); a path outside every folder is shown as it is, absolute. This is for showing a path,
    /// not for deciding whether it may be read: that is [`WorkspaceRoots::resolve`]'s job.
    pub fn relative(&self, absolute: &Path) -> String {
        // Paths the walker produced are already resolved and under a canonical folder; only
        // others (from the editor, say) are worth resolving.
        let lexically_inside = !absolute.components().any(|part| part == Component::ParentDir);
        if lexically_inside && let Some(root) = self.root_of(absolute) {
            return self.relative_in(root, absolute);
        }
        self.relative_if_inside(absolute).unwrap_or_else(|| absolute.display().to_string())
    }

    /// The workspace-relative form of an absolute path when it is inside a workspace folder once
    /// resolved through its symlinks, `None` when it is not (or is not absolute). For paths that
    /// come from elsewhere, such as the editor, before anything is read from them.
    pub fn relative_if_inside(&self, absolute: &Path) -> Option<String> {
        if !absolute.is_absolute() {
            return None;
        }
        let resolved = resolve_through_symlinks(absolute, 0).ok()?;
        let root = self.root_of(&resolved)?;
        Some(self.relative_in(root, &resolved))
    }

    fn relative_in(&self, root: &Root, absolute: &Path) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.roots.len() > 1 {
            parts.push(root.name.clone());
        }
        if let Ok(inside) = absolute.strip_prefix(&root.path) {
            parts.extend(inside.components().map(|part| part.as_os_str().to_string_lossy().into_owned()));
        }
        if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
    }

    fn first(&self) -> &Root {
        // `new` never builds an empty set, so there is always a first folder.
        &self.roots[0]
    }

    /// The path an agent gave, made absolute but not yet resolved.
    fn join(&self, path: &str) -> PathBuf {
        let given = Path::new(path);
        if given.is_absolute() {
            return given.to_path_buf();
        }
        // With several folders, results start with the folder's name, and an agent passes such a
        // path back as it got it.
        if self.roots.len() > 1 {
            let mut components = given.components();
            if let Some(Component::Normal(first)) = components.next()
                && let Some(root) = self.roots.iter().find(|root| OsStr::new(&root.name) == first)
            {
                return root.path.join(components.as_path());
            }
        }
        self.first().path.join(given)
    }

    /// The folder a resolved path is in; the innermost one when folders are nested.
    fn root_of(&self, resolved: &Path) -> Option<&Root> {
        self.roots.iter().filter(|root| resolved.starts_with(&root.path)).max_by_key(|root| root.path.as_os_str().len())
    }

    fn outside(&self, path: &str) -> ToolError {
        let roots = self.roots.iter().map(|root| format!("`{}`", root.path.display())).collect::<Vec<_>>().join(", ");
        ToolError::OutsideWorkspace { path: path.to_owned(), roots }
    }
}

/// Resolves `path` through its symlinks as far as it exists. The part that does not exist is
/// applied by hand (`..` removes a component) and resolved again in case that led back to
/// something that exists; a dangling symlink is followed to where it points, so that a link to a
/// missing file outside the workspace is not mistaken for a path inside it.
fn resolve_through_symlinks(path: &Path, hops: u32) -> io::Result<PathBuf> {
    if hops > MAX_SYMLINK_HOPS {
        return Err(io::Error::other("too many levels of symbolic links"));
    }
    let components: Vec<Component<'_>> = path.components().collect();
    for existing in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..existing].iter().collect();
        let mut resolved = match fs::canonicalize(&prefix) {
            Ok(resolved) => resolved,
            Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => continue,
            Err(error) => return Err(error),
        };
        let missing = &components[existing..];
        if let Some(Component::Normal(name)) = missing.first() {
            let candidate = resolved.join(name);
            if fs::symlink_metadata(&candidate).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
                // A relative target is relative to the link's folder; `join` keeps an absolute one.
                let target = resolved.join(fs::read_link(&candidate)?);
                let rest: PathBuf = missing[1..].iter().collect();
                return resolve_through_symlinks(&target.join(rest), hops + 1);
            }
        }
        for component in missing {
            match component {
                Component::ParentDir => {
                    resolved.pop();
                }
                Component::Normal(name) => resolved.push(name),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        return Ok(fs::canonicalize(&resolved).unwrap_or(resolved));
    }
    Err(io::Error::from(io::ErrorKind::NotFound))
}

/// Why a list stopped before it was complete: more results exist than it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Truncation {
    /// The result count reached its limit (the agent's `maxResults`, clamped).
    Results { limit: u32 },
    /// The result text reached [`Limits::max_bytes`].
    Bytes { limit: usize },
    /// The time ran out ([`Limits::time`]); files after the last one listed were not looked at.
    Time { limit_ms: u64 },
}

// The doc comments of the params are the descriptions in the tools' JSON schemas: they are
// written for the model that calls the tool.

/// The arguments of `search_text`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchTextParams {
    /// A regular expression (Rust regex syntax, matched within one line), or plain text when
    /// `literal` is true.
    pub pattern: String,
    /// Search for `pattern` as plain text rather than as a regular expression.
    #[serde(default)]
    pub literal: bool,
    /// Ignore case when matching.
    #[serde(default)]
    pub case_insensitive: bool,
    /// A file or folder to search (workspace-relative or absolute); all workspace folders when
    /// absent.
    #[serde(default)]
    pub path: Option<String>,
    /// Globs (gitignore syntax, relative to the workspace folder) that files must match, e.g.
    /// "*.ts" or "src/**"; a leading "!" excludes instead, e.g. "!**/test/**".
    #[serde(default)]
    pub globs: Vec<String>,
    /// Lines of context to show before and after each match (at most 5).
    #[serde(default)]
    pub context_lines: u32,
    /// The most matches to return (default 100, at most 500).
    #[serde(default)]
    pub max_results: Option<u32>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    pub path: String,
    /// 1-based.
    pub line: u64,
    /// The line without its line ending, cut to [`MAX_LINE_CHARS`] characters with "…".
    pub text: String,
    /// The lines just before the match (cut the same way), nearest last. Each match has its own
    /// full context, even when that repeats a neighbouring match's lines, so it reads on its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// The lines just after the match, nearest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchTextResult {
    pub matches: Vec<SearchMatch>,
    /// How many files were searched (binary files count: they were opened and given up on).
    pub files_searched: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncation>,
}

/// Searches the text of the workspace's files (or of `params.path`) for a pattern, line by line,
/// like ripgrep: files in walk order, each folder's entries sorted by name.
pub fn search_text(
    roots: &WorkspaceRoots,
    params: &SearchTextParams,
    limits: &Limits,
) -> Result<SearchTextResult, ToolError> {
    let deadline = deadline_after(limits.time);
    if params.pattern.is_empty() {
        return Err(ToolError::EmptyPattern);
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(params.case_insensitive)
        .fixed_strings(params.literal)
        // The searcher works line by line; with the terminator set, a pattern cannot match across
        // lines (`\s` no longer matches `\n`, and a literal `\n` is refused).
        .line_terminator(Some(b'\n'))
        .build(&params.pattern)
        .map_err(|error| ToolError::BadPattern {
            pattern: params.pattern.clone(),
            message: last_error_line(&error.to_string()),
        })?;
    let context = params.context_lines.min(MAX_CONTEXT_LINES);
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(context as usize)
        .after_context(context as usize)
        // A NUL byte means a binary file: give it up, as ripgrep does, instead of returning
        // "lines" of machine code.
        .binary_detection(BinaryDetection::quit(0))
        .build();
    let mut collector = Collector {
        path: String::new(),
        context: context as u64,
        max_results: clamp_results(params.max_results, DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS),
        limits: *limits,
        deadline,
        bytes: 0,
        matches: Vec::new(),
        file_start: 0,
        recent: VecDeque::new(),
        truncated: None,
    };
    let mut files_searched = 0;
    'walk: for start in walk_starts(roots, params.path.as_deref())? {
        for entry in walker(&start, &params.globs)? {
            if Instant::now() >= deadline {
                collector.truncated = Some(time_truncation(limits));
                break 'walk;
            }
            // A folder or file that cannot be read is skipped, as ripgrep does: the rest of the
            // workspace is still worth searching.
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            let Ok(file) = File::open(entry.path()) else { continue };
            files_searched += 1;
            collector.start_file(roots.relative(entry.path()));
            // The reader enforces the deadline inside a large file that has no match, where the
            // sink would not be called.
            let searched = searcher.search_reader(&matcher, DeadlineReader { inner: file, deadline }, &mut collector);
            if searched.is_err() && Instant::now() >= deadline {
                collector.truncated.get_or_insert(time_truncation(limits));
            }
            if collector.truncated.is_some() {
                break 'walk;
            }
        }
    }
    Ok(SearchTextResult { matches: collector.matches, files_searched, truncated: collector.truncated })
}

/// The arguments of `list_files`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ListFilesParams {
    /// A folder to list (workspace-relative or absolute); all workspace folders when absent.
    pub path: Option<String>,
    /// Globs (gitignore syntax, relative to the workspace folder) that files must match, e.g.
    /// "src/**/*.rs"; a leading "!" excludes instead, e.g. "!**/*.snap".
    pub globs: Vec<String>,
    /// The most files to return (default 500, at most 2000).
    pub max_results: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListFilesResult {
    /// Workspace-relative paths in walk order: each folder's entries sorted by name.
    pub files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncation>,
}

/// Lists the workspace's files (or those under `params.path`), skipping what the walker skips.
pub fn list_files(
    roots: &WorkspaceRoots,
    params: &ListFilesParams,
    limits: &Limits,
) -> Result<ListFilesResult, ToolError> {
    let deadline = deadline_after(limits.time);
    let max_results = clamp_results(params.max_results, DEFAULT_LIST_RESULTS, MAX_LIST_RESULTS);
    let mut files = Vec::new();
    let mut bytes = 0;
    let mut truncated = None;
    'walk: for start in walk_starts(roots, params.path.as_deref())? {
        for entry in walker(&start, &params.globs)? {
            if Instant::now() >= deadline {
                truncated = Some(time_truncation(limits));
                break 'walk;
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            if files.len() >= max_results as usize {
                truncated = Some(Truncation::Results { limit: max_results });
                break 'walk;
            }
            let path = roots.relative(entry.path());
            if bytes + path.len() > limits.max_bytes {
                truncated = Some(Truncation::Bytes { limit: limits.max_bytes });
                break 'walk;
            }
            bytes += path.len();
            files.push(path);
        }
    }
    Ok(ListFilesResult { files, truncated })
}

/// Where one walk starts, and the workspace folder its globs are relative to.
struct WalkStart {
    path: PathBuf,
    root: PathBuf,
}

/// The walks a tool makes: one per workspace folder, or one from the path the agent gave.
fn walk_starts(roots: &WorkspaceRoots, path: Option<&str>) -> Result<Vec<WalkStart>, ToolError> {
    let Some(given) = path.map(str::trim).filter(|given| !given.is_empty()) else {
        return Ok(roots
            .roots
            .iter()
            .map(|root| WalkStart { path: root.path.clone(), root: root.path.clone() })
            .collect());
    };
    let resolved = roots.resolve(given)?;
    if !resolved.exists() {
        return Err(ToolError::NotFound { path: given.to_owned() });
    }
    let root = roots.root_of(&resolved).ok_or_else(|| roots.outside(given))?;
    // The walker filters what it finds below where it starts, not the start itself, so a start
    // inside `.git` or `.tether` is refused here.
    let inside = resolved.strip_prefix(&root.path).unwrap_or(&resolved);
    if inside.components().any(|part| NEVER_WALKED.iter().any(|name| part.as_os_str() == OsStr::new(name))) {
        return Err(ToolError::Excluded { path: given.to_owned() });
    }
    Ok(vec![WalkStart { path: resolved, root: root.path.clone() }])
}

/// ripgrep's walker from `start`, with its ignore rules, the agent's globs, and `.git` and
/// `.tether` cut off. It does not follow symlinks, so it stays inside the workspace.
fn walker(start: &WalkStart, globs: &[String]) -> Result<ignore::Walk, ToolError> {
    let mut overrides = OverrideBuilder::new(&start.root);
    for glob in globs.iter().map(|glob| glob.trim()).filter(|glob| !glob.is_empty()) {
        overrides
            .add(glob)
            .map_err(|error| ToolError::BadGlob { glob: glob.to_owned(), message: error.to_string() })?;
    }
    let overrides =
        overrides.build().map_err(|error| ToolError::BadGlob { glob: globs.join(" "), message: error.to_string() })?;
    let mut builder = WalkBuilder::new(&start.path);
    builder
        .standard_filters(true)
        // `.gitignore` files are honoured in a folder that is not (yet) a git repository too: a
        // workspace fresh from a zip ignores `node_modules` and `target` all the same.
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        // The globs are applied as a filter on top of the ignore rules rather than handed to the
        // walker as overrides: ripgrep's overrides beat every other rule, so a glob like `*` or
        // `*.env` would bring back hidden and gitignored files (secrets, `node_modules`) and even
        // `.git`. Here a glob only ever narrows what the walker yields.
        .filter_entry(move |entry| {
            let never_walked = NEVER_WALKED.iter().any(|name| entry.file_name() == OsStr::new(name));
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            !never_walked && !overrides.matched(entry.path(), is_dir).is_ignore()
        });
    Ok(builder.build())
}

/// Collects matches for `search_text`, with their context, within the limits.
struct Collector {
    /// The workspace-relative path of the file being searched.
    path: String,
    context: u64,
    max_results: u32,
    limits: Limits,
    deadline: Instant,
    /// Bytes of result text so far.
    bytes: usize,
    matches: Vec<SearchMatch>,
    /// The index in `matches` of the current file's first match.
    file_start: usize,
    /// The last `context` lines the searcher reported in this file (context or match), with their
    /// numbers: the searcher reports each line once, so a match's before-context may be lines it
    /// already gave as an earlier match or its after-context.
    recent: VecDeque<(u64, String)>,
    truncated: Option<Truncation>,
}

impl Collector {
    fn start_file(&mut self, path: String) {
        self.path = path;
        self.file_start = self.matches.len();
        self.recent.clear();
    }

    /// Takes one line the searcher reported; false stops the search.
    fn take_line(&mut self, number: u64, raw: &[u8], is_match: bool) -> bool {
        if Instant::now() >= self.deadline {
            self.truncated = Some(time_truncation(&self.limits));
            return false;
        }
        let text = display_line(raw);
        // The line is after-context of the matches just before it.
        for index in (self.file_start..self.matches.len()).rev() {
            if self.matches[index].line + self.context < number {
                break;
            }
            if !self.spend(text.len()) {
                return false;
            }
            self.matches[index].after.push(text.clone());
        }
        if is_match {
            if self.matches.len() >= self.max_results as usize {
                self.truncated = Some(Truncation::Results { limit: self.max_results });
                return false;
            }
            let before: Vec<String> = self
                .recent
                .iter()
                .filter(|(seen, _)| seen + self.context >= number)
                .map(|(_, line)| line.clone())
                .collect();
            let cost = self.path.len() + text.len() + before.iter().map(String::len).sum::<usize>();
            if !self.spend(cost) {
                return false;
            }
            self.matches.push(SearchMatch {
                path: self.path.clone(),
                line: number,
                text: text.clone(),
                before,
                after: Vec::new(),
            });
        }
        if self.context > 0 {
            if self.recent.len() as u64 >= self.context {
                self.recent.pop_front();
            }
            self.recent.push_back((number, text));
        }
        true
    }

    /// Accounts for `bytes` more of result text, or records the truncation if they do not fit.
    fn spend(&mut self, bytes: usize) -> bool {
        if self.bytes + bytes > self.limits.max_bytes {
            self.truncated = Some(Truncation::Bytes { limit: self.limits.max_bytes });
            return false;
        }
        self.bytes += bytes;
        true
    }
}

impl Sink for Collector {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        // Without multi-line search a match is one line, but a match's lines are walked all the
        // same so that nothing is lost if that ever changes.
        let first = found.line_number().unwrap_or(0);
        for (offset, line) in (0u64..).zip(found.lines()) {
            if !self.take_line(first + offset, line, true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        Ok(self.take_line(context.line_number().unwrap_or(0), context.bytes(), false))
    }
}

/// A file reader that fails once the deadline has passed, so that a search in a huge file without
/// matches (which never reaches the sink) still stops in time.
struct DeadlineReader<R> {
    inner: R,
    deadline: Instant,
}

impl<R: Read> Read for DeadlineReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if Instant::now() >= self.deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the search ran out of time"));
        }
        self.inner.read(buf)
    }
}

/// A line as results show it: without its line ending, decoded lossily, and cut to
/// [`MAX_LINE_CHARS`] characters with "…" (cutting at a character, never inside one).
fn display_line(raw: &[u8]) -> String {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let text = String::from_utf8_lossy(raw);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}

/// The regex crate's errors span several lines (the pattern, a caret under the offending part,
/// then `error: <what is wrong>`); the last line says it in words, which fits in a sentence.
fn last_error_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("error: "))
        .map_or_else(|| message.split_whitespace().collect::<Vec<_>>().join(" "), str::to_owned)
}

fn clamp_results(asked: Option<u32>, default: u32, max: u32) -> u32 {
    asked.unwrap_or(default).clamp(1, max)
}

/// The moment `budget` from now; a budget too large to add counts as no deadline.
fn deadline_after(budget: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(budget).unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

fn time_truncation(limits: &Limits) -> Truncation {
    Truncation::Time { limit_ms: u64::try_from(limits.time.as_millis()).unwrap_or(u64::MAX) }
}

/// The state of one git repository in the workspace, from `git status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GitStatus {
    /// The repository's top folder: workspace-relative (`.` for the workspace folder itself), or
    /// absolute when the workspace folder is inside a larger repository.
    pub root: String,
    /// The checked-out branch; `null` when HEAD is detached.
    pub branch: Option<String>,
    /// The checked-out commit, abbreviated to 12 hex digits; absent before the first commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The branch's upstream, e.g. `origin/main`, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Commits on the branch that its upstream does not have.
    #[serde(skip_serializing_if = "is_zero")]
    pub ahead: u32,
    /// Commits on the upstream that the branch does not have.
    #[serde(skip_serializing_if = "is_zero")]
    pub behind: u32,
    /// Changes in the index (what a commit would record).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub staged: Vec<GitChange>,
    /// Changes in the working tree not yet staged, and unmerged paths (a conflict is resolved in
    /// the working tree).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unstaged: Vec<GitChange>,
    /// Files git does not track and does not ignore; a wholly untracked folder is one entry
    /// ending in `/`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<String>,
    /// Some changes were left out ([`MAX_GIT_PATHS`], or [`Limits::max_bytes`] of paths).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GitChange {
    pub path: String,
    /// "modified", "added", "deleted", "renamed", "copied", "type changed" or "unmerged".
    pub status: &'static str,
    /// The path it was renamed or copied from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// The status of the git repository containing `path` (the first workspace folder when absent).
/// Changes to files outside the workspace folders are left out, for a workspace folder inside a
/// larger repository.
pub fn git_status(roots: &WorkspaceRoots, path: Option<&str>, limits: &Limits) -> Result<GitStatus, ToolError> {
    let deadline = deadline_after(limits.time);
    let given = path.map(str::trim).filter(|given| !given.is_empty());
    let target = match given {
        Some(given) => roots.resolve(given)?,
        None => roots.first().path.clone(),
    };
    let shown = given.map_or_else(|| roots.relative(&target), str::to_owned);
    let metadata = fs::metadata(&target).map_err(|_| ToolError::NotFound { path: shown.clone() })?;
    let dir = if metadata.is_dir() { target.as_path() } else { target.parent().unwrap_or(&target) };

    let toplevel = run_git(dir, &["rev-parse", "--show-toplevel"], deadline, limits, GIT_STDERR_CAP)?;
    if !toplevel.success {
        if toplevel.stderr.contains("not a git repository") {
            return Err(ToolError::NotARepository { path: shown });
        }
        return Err(git_failed(&toplevel.stderr));
    }
    let top = path_from_git(toplevel.stdout.trim_ascii_end());
    let top = fs::canonicalize(&top).unwrap_or(top);

    // git's output holds hashes and modes beside each path; a few times the text budget is
    // plenty, and the rest is read and thrown away so that git is not left blocked on the pipe.
    let stdout_cap = limits.max_bytes.saturating_mul(4).max(64 * 1024);
    let status = run_git(
        dir,
        &["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal"],
        deadline,
        limits,
        stdout_cap,
    )?;
    if !status.success {
        return Err(git_failed(&status.stderr));
    }
    Ok(parse_status(&status.stdout, status.stdout_cut, roots, &top, limits.max_bytes))
}

/// What one git command did.
struct GitRun {
    success: bool,
    stdout: Vec<u8>,
    /// Whether stdout was longer than what was kept.
    stdout_cut: bool,
    stderr: String,
}

/// Runs `git -C <dir> <args>` without a terminal or stdin, reading at most `stdout_cap` bytes of
/// its output, and kills it at the deadline.
fn run_git(
    dir: &Path,
    args: &[&str],
    deadline: Instant,
    limits: &Limits,
    stdout_cap: usize,
) -> Result<GitRun, ToolError> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(args)
        // Without it, `git status` takes the index lock to refresh the index, which could make a
        // `git commit` the user runs at the same moment fail.
        .env("GIT_OPTIONAL_LOCKS", "0")
        // git's messages in English, so "not a git repository" can be recognised.
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for variable in GIT_REPOSITORY_VARIABLES {
        command.env_remove(variable);
    }
    let mut child = command.spawn().map_err(|error| ToolError::Git {
        message: if error.kind() == io::ErrorKind::NotFound {
            "git is not installed (or not on the PATH), so the repository's status cannot be read".to_owned()
        } else {
            format!("git could not be started ({error})")
        },
    })?;
    // Both pipes are drained on threads of their own: git blocks once a pipe's buffer is full,
    // and would never exit while this thread waits for it.
    let stdout = child.stdout.take().map(|pipe| thread::spawn(move || read_capped(pipe, stdout_cap)));
    let stderr = child.stderr.take().map(|pipe| thread::spawn(move || read_capped(pipe, GIT_STDERR_CAP)));
    let exit = loop {
        match child.try_wait() {
            Ok(Some(exit)) => break exit,
            Ok(None) if Instant::now() >= deadline => {
                // Killing is harmless: with optional locks off, git holds no lock a later git
                // would trip over.
                child.kill().ok();
                child.wait().ok();
                let limit_ms = limits.time.as_millis();
                return Err(ToolError::Git {
                    message: format!("`git {}` did not finish within {limit_ms} ms and was stopped", args.join(" ")),
                });
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(error) => return Err(ToolError::Git { message: format!("git could not be waited for ({error})") }),
        }
    };
    let (stdout, stdout_cut) = stdout.and_then(|reader| reader.join().ok()).unwrap_or_default();
    let (stderr, _) = stderr.and_then(|reader| reader.join().ok()).unwrap_or_default();
    Ok(GitRun { success: exit.success(), stdout, stdout_cut, stderr: String::from_utf8_lossy(&stderr).into_owned() })
}

/// Reads a pipe to its end, keeping the first `cap` bytes; true when it had more.
fn read_capped(mut pipe: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buffer = [0; 8192];
    loop {
        match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => {
                let room = cap.saturating_sub(kept.len());
                cut |= read > room;
                kept.extend_from_slice(&buffer[..read.min(room)]);
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    (kept, cut)
}

/// The error for a git command that failed, from what it said on stderr.
fn git_failed(stderr: &str) -> ToolError {
    let said = stderr
        .lines()
        .map(|line| line.trim())
        .find(|line| !line.is_empty())
        .map(|line| line.strip_prefix("fatal: ").unwrap_or(line))
        .unwrap_or("it gave no reason");
    ToolError::Git { message: format!("git could not read the repository's status: {said}") }
}

/// What is left of the budget of paths `git_status` reports.
struct PathBudget {
    paths: usize,
    bytes: usize,
    exhausted: bool,
}

impl PathBudget {
    fn take(&mut self, bytes: usize) -> bool {
        if self.paths == 0 || bytes > self.bytes {
            self.exhausted = true;
            return false;
        }
        self.paths -= 1;
        self.bytes -= bytes;
        true
    }
}

/// Reads `git status --porcelain=v2 --branch -z`: `# branch.*` headers, then one record per path
/// (`1` changed, `2` renamed or copied, followed by the original path as a record of its own,
/// `u` unmerged, `?` untracked), each ended by a NUL. Paths are relative to the repository's top.
fn parse_status(output: &[u8], cut: bool, roots: &WorkspaceRoots, top: &Path, max_bytes: usize) -> GitStatus {
    // A cut output ends in the middle of a record; only whole records are read.
    let whole =
        if cut { &output[..output.iter().rposition(|&byte| byte == 0).map_or(0, |end| end + 1)] } else { output };
    let mut status = GitStatus {
        root: roots.relative(top),
        branch: None,
        head: None,
        upstream: None,
        ahead: 0,
        behind: 0,
        staged: Vec::new(),
        unstaged: Vec::new(),
        untracked: Vec::new(),
        truncated: cut,
    };
    let mut budget = PathBudget { paths: MAX_GIT_PATHS, bytes: max_bytes, exhausted: false };
    // A path git reports, as results show it; `None` for a path outside the workspace folders.
    let workspace_path = |raw: &[u8]| {
        let absolute = top.join(path_from_git(raw));
        roots.root_of(&absolute).map(|_| roots.relative(&absolute))
    };
    let mut records = whole.split(|&byte| byte == 0);
    while let Some(record) = records.next() {
        let text = String::from_utf8_lossy(record);
        if let Some(header) = text.strip_prefix("# ") {
            read_header(header, &mut status);
            continue;
        }
        let (xy, raw_path, from) = match record.first() {
            Some(b'1') => match fields(record, 9) {
                Some(fields) => (fields[1], fields[8], None),
                None => continue,
            },
            Some(b'2') => match (fields(record, 10), records.next()) {
                (Some(fields), Some(original)) if !original.is_empty() => (fields[1], fields[9], Some(original)),
                _ => continue,
            },
            Some(b'u') => match fields(record, 11) {
                Some(fields) => (fields[1], fields[10], None),
                None => continue,
            },
            Some(b'?') => {
                let raw = record.get(2..).unwrap_or_default();
                if let Some(mut path) = workspace_path(raw) {
                    // git names a wholly untracked folder once, with a trailing `/` that says so.
                    if raw.ends_with(b"/") && path != "." {
                        path.push('/');
                    }
                    if budget.take(path.len()) {
                        status.untracked.push(path);
                    }
                }
                continue;
            }
            _ => continue,
        };
        let Some(path) = workspace_path(raw_path) else { continue };
        let from = from.map(|original| {
            let absolute = top.join(path_from_git(original));
            roots.relative(&absolute)
        });
        let cost = path.len() + from.as_ref().map_or(0, String::len);
        let (Some(&index), Some(&worktree)) = (xy.first(), xy.get(1)) else { continue };
        if record.first() == Some(&b'u') {
            if budget.take(cost) {
                status.unstaged.push(GitChange { path, status: "unmerged", from: None });
            }
            continue;
        }
        if let Some(kind) = change_kind(index)
            && budget.take(cost)
        {
            let from = if matches!(index, b'R' | b'C') { from.clone() } else { None };
            status.staged.push(GitChange { path: path.clone(), status: kind, from });
        }
        if let Some(kind) = change_kind(worktree)
            && budget.take(cost)
        {
            let from = if matches!(worktree, b'R' | b'C') { from } else { None };
            status.unstaged.push(GitChange { path, status: kind, from });
        }
    }
    status.truncated |= budget.exhausted;
    status
}

/// The first `count` space-separated fields of a record, the last holding the rest (a path may
/// contain spaces); `None` when the record is shorter.
fn fields(record: &[u8], count: usize) -> Option<Vec<&[u8]>> {
    let fields: Vec<&[u8]> = record.splitn(count, |&byte| byte == b' ').collect();
    (fields.len() == count && fields[1].len() == 2).then_some(fields)
}

fn read_header(header: &str, status: &mut GitStatus) {
    if let Some(oid) = header.strip_prefix("branch.oid ") {
        // `(initial)` before the first commit.
        status.head = oid.chars().all(|c| c.is_ascii_hexdigit()).then(|| oid.chars().take(12).collect());
    } else if let Some(head) = header.strip_prefix("branch.head ") {
        status.branch = (head != "(detached)").then(|| head.to_owned());
    } else if let Some(upstream) = header.strip_prefix("branch.upstream ") {
        status.upstream = Some(upstream.to_owned());
    } else if let Some(counts) = header.strip_prefix("branch.ab ") {
        for count in counts.split(' ') {
            if let Some(ahead) = count.strip_prefix('+') {
                status.ahead = ahead.parse().unwrap_or(0);
            } else if let Some(behind) = count.strip_prefix('-') {
                status.behind = behind.parse().unwrap_or(0);
            }
        }
    }
}

/// What a status letter of `git status` means; `None` for `.` (unchanged).
fn change_kind(letter: u8) -> Option<&'static str> {
    Some(match letter {
        b'M' => "modified",
        b'A' => "added",
        b'D' => "deleted",
        b'R' => "renamed",
        b'C' => "copied",
        b'T' => "type changed",
        b'U' => "unmerged",
        _ => return None,
    })
}

/// A path as git prints it (`-z`, so unquoted): bytes on Unix, where a path is bytes.
#[cfg(unix)]
fn path_from_git(raw: &[u8]) -> PathBuf {
    PathBuf::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(raw))
}

/// A path as git prints it (`-z`, so unquoted): UTF-8 on Windows, where git writes paths so.
#[cfg(windows)]
fn path_from_git(raw: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(raw).into_owned())
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::symlink;

    use expect_test::expect;
    use tempfile::TempDir;

    use super::*;

    /// A temporary workspace folder holding `files` (path, contents).
    fn workspace(files: &[(&str, &str)]) -> (TempDir, WorkspaceRoots) {
        let dir = tempfile::tempdir().expect("a temp folder");
        for (path, contents) in files {
            write(dir.path(), path, contents.as_bytes());
        }
        let roots = WorkspaceRoots::new([dir.path().to_path_buf()]).expect("the temp folder exists");
        (dir, roots)
    }

    fn write(folder: &Path, path: &str, contents: &[u8]) {
        let path = folder.join(path);
        fs::create_dir_all(path.parent().expect("a file has a folder")).expect("the folder can be made");
        fs::write(path, contents).expect("the file can be written");
    }

    fn params(pattern: &str) -> SearchTextParams {
        SearchTextParams { pattern: pattern.to_owned(), ..SearchTextParams::default() }
    }

    fn search(roots: &WorkspaceRoots, params: &SearchTextParams) -> SearchTextResult {
        search_text(roots, params, &Limits::default()).expect("the search runs")
    }

    /// Each match as `path:line: text`, for compact assertions.
    fn found(result: &SearchTextResult) -> Vec<String> {
        result.matches.iter().map(|found| format!("{}:{}: {}", found.path, found.line, found.text)).collect()
    }

    fn list(roots: &WorkspaceRoots, params: &ListFilesParams) -> Vec<String> {
        list_files(roots, params, &Limits::default()).expect("the listing runs").files
    }

    #[test]
    fn search_reports_matches_with_context_and_line_numbers() {
        let (_dir, roots) = workspace(&[
            (
                "src/main.rs",
                "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n\n\
                 fn helper() -> u32 {\n    42\n}\n",
            ),
            ("notes.txt", "the answer is 42\n"),
            ("pairs.txt", "a 42\nb 42\nc\n"),
        ]);
        let result = search(&roots, &SearchTextParams { context_lines: 1, ..params("42") });
        let json = serde_json::to_string_pretty(&result).expect("results serialize");
        expect![[r#"
            {
              "matches": [
                {
                  "path": "notes.txt",
                  "line": 1,
                  "text": "the answer is 42"
                },
                {
                  "path": "pairs.txt",
                  "line": 1,
                  "text": "a 42",
                  "after": [
                    "b 42"
                  ]
                },
                {
                  "path": "pairs.txt",
                  "line": 2,
                  "text": "b 42",
                  "before": [
                    "a 42"
                  ],
                  "after": [
                    "c"
                  ]
                },
                {
                  "path": "src/main.rs",
                  "line": 2,
                  "text": "    let answer = 42;",
                  "before": [
                    "fn main() {"
                  ],
                  "after": [
                    "    println!(\"{answer}\");"
                  ]
                },
                {
                  "path": "src/main.rs",
                  "line": 7,
                  "text": "    42",
                  "before": [
                    "fn helper() -> u32 {"
                  ],
                  "after": [
                    "}"
                  ]
                }
              ],
              "filesSearched": 3
            }"#]]
        .assert_eq(&json);
    }

    #[test]
    fn context_lines_are_clamped_to_the_maximum() {
        let lines: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let (_dir, roots) = workspace(&[("many.txt", &lines)]);
        let result = search(&roots, &SearchTextParams { context_lines: 50, ..params("^line 10$") });
        let found = &result.matches[0];
        assert_eq!(found.line, 10);
        assert_eq!(found.before, ["line 5", "line 6", "line 7", "line 8", "line 9"]);
        assert_eq!(found.after, ["line 11", "line 12", "line 13", "line 14", "line 15"]);
    }

    #[test]
    fn literal_patterns_match_regex_characters_as_text() {
        let (_dir, roots) = workspace(&[("code.txt", "a.c\nabc\n(x\n")]);
        assert_eq!(found(&search(&roots, &params("a.c"))), ["code.txt:1: a.c", "code.txt:2: abc"]);
        assert_eq!(found(&search(&roots, &SearchTextParams { literal: true, ..params("a.c") })), ["code.txt:1: a.c"]);
        assert_eq!(found(&search(&roots, &SearchTextParams { literal: true, ..params("(x") })), ["code.txt:3: (x"]);
    }

    #[test]
    fn case_insensitive_search_finds_every_case() {
        let (_dir, roots) = workspace(&[("greeting.txt", "Hello\nhello\nHELLO\n")]);
        assert_eq!(found(&search(&roots, &params("hello"))), ["greeting.txt:2: hello"]);
        let insensitive = search(&roots, &SearchTextParams { case_insensitive: true, ..params("hello") });
        assert_eq!(found(&insensitive), ["greeting.txt:1: Hello", "greeting.txt:2: hello", "greeting.txt:3: HELLO"]);
    }

    #[test]
    fn a_bad_regex_is_reported_in_one_sentence() {
        let (_dir, roots) = workspace(&[("a.txt", "x\n")]);
        let error = search_text(&roots, &params("foo("), &Limits::default()).expect_err("the regex is invalid");
        assert!(matches!(error, ToolError::BadPattern { .. }), "{error:?}");
        expect![[r#"
            the pattern `foo(` is not a valid regular expression (unclosed group); set `literal` to search for it as text"#]]
        .assert_eq(&error.to_string());
        let error = search_text(&roots, &params(""), &Limits::default()).expect_err("the pattern is empty");
        assert_eq!(error, ToolError::EmptyPattern);
    }

    #[test]
    fn ignored_hidden_git_and_tether_files_are_never_searched_or_listed() {
        // No `git init`: the .gitignore counts all the same.
        let (_dir, roots) = workspace(&[
            (".gitignore", "ignored.txt\nbuild/\n"),
            ("ignored.txt", "needle\n"),
            ("build/out.txt", "needle\n"),
            (".git/config", "needle\n"),
            (".tether/sessions/one/events.jsonl", "needle\n"),
            ("src/.git/HEAD", "needle\n"),
            (".hidden.txt", "needle\n"),
            ("kept.txt", "needle\n"),
        ]);
        assert_eq!(found(&search(&roots, &params("needle"))), ["kept.txt:1: needle"]);
        assert_eq!(list(&roots, &ListFilesParams::default()), ["kept.txt"]);
        // Globs narrow; they do not bring back what the ignore rules leave out.
        for globs in [vec!["*".to_owned()], vec!["**".to_owned()], vec!["*.txt".to_owned(), ".git/**".to_owned()]] {
            let everything = ListFilesParams { globs: globs.clone(), ..ListFilesParams::default() };
            assert_eq!(list(&roots, &everything), ["kept.txt"], "globs {globs:?}");
            let searched = search(&roots, &SearchTextParams { globs, ..params("needle") });
            assert_eq!(found(&searched), ["kept.txt:1: needle"]);
        }
        // Asking for `.git` or `.tether` by path is refused rather than answered with nothing.
        for path in [".git", ".tether/sessions", "src/.git/HEAD"] {
            let error = search_text(
                &roots,
                &SearchTextParams { path: Some(path.to_owned()), ..params("needle") },
                &Limits::default(),
            )
            .expect_err("the folder is never searched");
            assert_eq!(error, ToolError::Excluded { path: path.to_owned() });
        }
    }

    #[test]
    fn include_and_exclude_globs_choose_the_files() {
        let (_dir, roots) = workspace(&[
            ("src/lib.rs", "needle\n"),
            ("src/lib_test.rs", "needle\n"),
            ("src/view.ts", "needle\n"),
            ("docs/guide.md", "needle\n"),
        ]);
        let only_rust = SearchTextParams { globs: vec!["*.rs".to_owned()], ..params("needle") };
        assert_eq!(found(&search(&roots, &only_rust)), ["src/lib.rs:1: needle", "src/lib_test.rs:1: needle"]);
        let no_tests = SearchTextParams { globs: vec!["*.rs".to_owned(), "!*_test.rs".to_owned()], ..params("needle") };
        assert_eq!(found(&search(&roots, &no_tests)), ["src/lib.rs:1: needle"]);
        let not_src = ListFilesParams { globs: vec!["!src/".to_owned()], ..ListFilesParams::default() };
        assert_eq!(list(&roots, &not_src), ["docs/guide.md"]);
        let anchored = ListFilesParams { globs: vec!["src/**".to_owned()], ..ListFilesParams::default() };
        assert_eq!(list(&roots, &anchored), ["src/lib.rs", "src/lib_test.rs", "src/view.ts"]);
        // A path narrows too, and globs stay relative to the workspace folder.
        let under_src = ListFilesParams {
            path: Some("src".to_owned()),
            globs: vec!["src/*.ts".to_owned()],
            ..ListFilesParams::default()
        };
        assert_eq!(list(&roots, &under_src), ["src/view.ts"]);
        let error = list_files(
            &roots,
            &ListFilesParams { globs: vec!["src/[".to_owned()], ..ListFilesParams::default() },
            &Limits::default(),
        )
        .expect_err("the glob is invalid");
        assert!(matches!(error, ToolError::BadGlob { ref glob, .. } if glob == "src/["), "{error:?}");
    }

    #[test]
    fn max_results_stops_the_search_and_says_so() {
        let (_dir, roots) = workspace(&[("a.txt", "hit\nhit\n"), ("b.txt", "hit\nhit\n")]);
        let result = search(&roots, &SearchTextParams { max_results: Some(3), ..params("hit") });
        assert_eq!(found(&result), ["a.txt:1: hit", "a.txt:2: hit", "b.txt:1: hit"]);
        assert_eq!(result.truncated, Some(Truncation::Results { limit: 3 }));
        // Exactly as many matches as the limit is the whole answer, not a truncated one.
        let exact = search(&roots, &SearchTextParams { max_results: Some(4), ..params("hit") });
        assert_eq!((exact.matches.len(), exact.truncated), (4, None));
        // Asking for more than the most is clamped.
        let lines = "hit\n".repeat(600);
        let (_dir, many) = workspace(&[("many.txt", &lines)]);
        let clamped = search(&many, &SearchTextParams { max_results: Some(10_000), ..params("hit") });
        assert_eq!(clamped.matches.len(), MAX_SEARCH_RESULTS as usize);
        assert_eq!(clamped.truncated, Some(Truncation::Results { limit: MAX_SEARCH_RESULTS }));
        let files = ListFilesParams { max_results: Some(1), ..ListFilesParams::default() };
        let listed = list_files(&roots, &files, &Limits::default()).expect("the listing runs");
        assert_eq!(listed.files, ["a.txt"]);
        assert_eq!(listed.truncated, Some(Truncation::Results { limit: 1 }));
    }

    #[test]
    fn the_byte_budget_stops_the_search_and_says_so() {
        // Each match costs its path (5 bytes) and its line (10 bytes).
        let (_dir, roots) = workspace(&[("a.txt", "0123456789\n".repeat(10).as_str())]);
        let limits = Limits { max_bytes: 50, ..Limits::default() };
        let result = search_text(&roots, &params("0123"), &limits).expect("the search runs");
        assert_eq!(result.matches.len(), 3);
        assert_eq!(result.truncated, Some(Truncation::Bytes { limit: 50 }));
        let listed = list_files(&roots, &ListFilesParams::default(), &Limits { max_bytes: 4, ..Limits::default() })
            .expect("the listing runs");
        assert_eq!(listed, ListFilesResult { files: vec![], truncated: Some(Truncation::Bytes { limit: 4 }) });
    }

    #[test]
    fn the_time_budget_stops_the_search_and_says_so() {
        let (_dir, roots) = workspace(&[("a.txt", "hit\n")]);
        let limits = Limits { time: Duration::ZERO, ..Limits::default() };
        let result = search_text(&roots, &params("hit"), &limits).expect("the search runs");
        assert_eq!((result.matches.len(), result.truncated), (0, Some(Truncation::Time { limit_ms: 0 })));
        let listed = list_files(&roots, &ListFilesParams::default(), &limits).expect("the listing runs");
        assert_eq!(listed.truncated, Some(Truncation::Time { limit_ms: 0 }));
    }

    #[test]
    fn a_long_line_is_cut_with_an_ellipsis() {
        let long = format!("needle {}\n", "é".repeat(400));
        let (_dir, roots) = workspace(&[("min.js", &long)]);
        let result = search(&roots, &params("needle"));
        let text = &result.matches[0].text;
        assert_eq!(text.chars().count(), MAX_LINE_CHARS + 1);
        assert!(text.starts_with("needle éé") && text.ends_with("é…"), "{text}");
    }

    #[test]
    fn binary_files_are_skipped() {
        let (dir, roots) = workspace(&[("text.txt", "needle\n")]);
        write(dir.path(), "blob.bin", b"needle\0\x01\x02needle\n");
        let result = search(&roots, &params("needle"));
        assert_eq!(found(&result), ["text.txt:1: needle"]);
        assert_eq!(result.files_searched, 2);
    }

    #[cfg(unix)]
    #[test]
    fn paths_outside_the_workspace_are_refused() {
        let outside = tempfile::tempdir().expect("a temp folder");
        write(outside.path(), "secret.txt", b"needle\n");
        let (dir, roots) = workspace(&[("inside.txt", "needle\n")]);
        symlink(outside.path(), dir.path().join("link")).expect("a symlink can be made");
        symlink(outside.path().join("secret.txt"), dir.path().join("secret-link.txt")).expect("a symlink");
        symlink(outside.path().join("missing.txt"), dir.path().join("dangling.txt")).expect("a symlink");
        let escape = format!("../{}/secret.txt", outside.path().file_name().and_then(OsStr::to_str).expect("a name"));
        for path in [
            "/etc",
            "/etc/passwd",
            "../x",
            "nope/../../x",
            &escape,
            "link",
            "link/secret.txt",
            "secret-link.txt",
            "dangling.txt",
        ] {
            let search_error = search_text(
                &roots,
                &SearchTextParams { path: Some(path.to_owned()), ..params("needle") },
                &Limits::default(),
            )
            .expect_err("the path is outside");
            assert!(
                matches!(&search_error, ToolError::OutsideWorkspace { path: named, .. } if named == path),
                "{path}: {search_error:?}"
            );
            let list_error = list_files(
                &roots,
                &ListFilesParams { path: Some(path.to_owned()), ..ListFilesParams::default() },
                &Limits::default(),
            )
            .expect_err("the path is outside");
            assert_eq!(list_error, search_error);
            assert_eq!(
                git_status(&roots, Some(path), &Limits::default()).expect_err("the path is outside"),
                search_error
            );
        }
        let error = roots.resolve("/etc/passwd").expect_err("outside");
        assert_eq!(
            error.to_string(),
            format!(
                "`/etc/passwd` is outside the workspace folders; only files under `{}` can be searched",
                roots.first().path.display()
            )
        );
        // The walk does not follow the links either.
        assert_eq!(found(&search(&roots, &params("needle"))), ["inside.txt:1: needle"]);
        assert_eq!(list(&roots, &ListFilesParams::default()), ["inside.txt"]);
        // Missing paths inside are fine to resolve, but there is nothing to search.
        assert_eq!(roots.resolve("nope/../inside.txt").expect("inside"), roots.first().path.join("inside.txt"));
        let error = search_text(
            &roots,
            &SearchTextParams { path: Some("missing".to_owned()), ..params("x") },
            &Limits::default(),
        )
        .expect_err("missing");
        assert_eq!(error.to_string(), "`missing` does not exist in the workspace");
    }

    #[test]
    fn a_path_narrows_the_search_to_a_file_or_folder() {
        let (dir, roots) = workspace(&[("a/one.txt", "needle\n"), ("b/two.txt", "needle\n"), (".gitignore", "b/\n")]);
        let in_a = SearchTextParams { path: Some("a".to_owned()), ..params("needle") };
        assert_eq!(found(&search(&roots, &in_a)), ["a/one.txt:1: needle"]);
        // A file named explicitly is searched even when ignored, as ripgrep does.
        let absolute = dir.path().join("b/two.txt").display().to_string();
        let named = SearchTextParams { path: Some(absolute), ..params("needle") };
        assert_eq!(found(&search(&roots, &named)), ["b/two.txt:1: needle"]);
    }

    #[test]
    fn with_two_folders_results_start_with_the_folder_name() {
        let parent = tempfile::tempdir().expect("a temp folder");
        write(parent.path(), "app/src/main.rs", b"needle\n");
        write(parent.path(), "lib/lib.rs", b"needle\n");
        let roots =
            WorkspaceRoots::new([parent.path().join("app"), parent.path().join("lib"), parent.path().join("gone")])
                .expect("two folders exist");
        assert_eq!(found(&search(&roots, &params("needle"))), ["app/src/main.rs:1: needle", "lib/lib.rs:1: needle"]);
        assert_eq!(list(&roots, &ListFilesParams::default()), ["app/src/main.rs", "lib/lib.rs"]);
        // A result's path can be passed back as it is.
        let in_lib = ListFilesParams { path: Some("lib/lib.rs".to_owned()), ..ListFilesParams::default() };
        assert_eq!(list(&roots, &in_lib), ["lib/lib.rs"]);
        // A relative path without a folder name is in the first folder.
        assert_eq!(roots.resolve("src").expect("inside"), roots.first().path.join("src"));
        assert_eq!(roots.relative(&roots.first().path), "app");
        assert_eq!(WorkspaceRoots::new([parent.path().join("gone")]), Err(ToolError::NoWorkspace));
    }

    #[cfg(unix)]
    #[test]
    fn relative_if_inside_resolves_paths_from_elsewhere() {
        let outside = tempfile::tempdir().expect("a temp folder");
        let (dir, roots) = workspace(&[("src/a.rs", "")]);
        symlink(outside.path(), dir.path().join("out")).expect("a symlink can be made");
        let root = &roots.first().path;
        assert_eq!(roots.relative_if_inside(&root.join("src/a.rs")).as_deref(), Some("src/a.rs"));
        assert_eq!(roots.relative_if_inside(&root.join("src/../src/a.rs")).as_deref(), Some("src/a.rs"));
        assert_eq!(roots.relative_if_inside(&root.join("out/x")), None);
        assert_eq!(roots.relative_if_inside(&root.join("src/../../x")), None);
        assert_eq!(roots.relative_if_inside(Path::new("src/a.rs")), None);
        assert_eq!(roots.relative(Path::new("/etc/passwd")), "/etc/passwd");
    }

    /// Runs git in `dir`, failing the test loudly when git is missing: it is on every machine the
    /// tests run on.
    fn git(dir: &Path, args: &[&str]) {
        let output = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .output()
            .expect("git must be installed to run the git_status tests");
        assert!(output.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    }

    #[test]
    fn git_status_reports_branch_staged_unstaged_untracked_and_renames() {
        let (dir, roots) = workspace(&[
            ("staged.txt", "one\n"),
            ("deleted.txt", "two\n"),
            ("old name.txt", "three\n"),
            ("src/keep.rs", ""),
        ]);
        git(dir.path(), &["init", "--quiet", "-b", "main"]);
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "--quiet", "-m", "first"]);
        write(dir.path(), "staged.txt", b"one, changed\n");
        git(dir.path(), &["add", "staged.txt"]);
        fs::remove_file(dir.path().join("deleted.txt")).expect("the file can be removed");
        write(dir.path(), "new/untracked.txt", b"four\n");
        git(dir.path(), &["mv", "old name.txt", "new name.txt"]);

        let status = git_status(&roots, None, &Limits::default()).expect("the status can be read");
        let head = status.head.clone().expect("there is a commit");
        assert_eq!(head.len(), 12);
        let json = serde_json::to_string_pretty(&GitStatus { head: None, ..status }).expect("the status serializes");
        expect![[r#"
            {
              "root": ".",
              "branch": "main",
              "staged": [
                {
                  "path": "new name.txt",
                  "status": "renamed",
                  "from": "old name.txt"
                },
                {
                  "path": "staged.txt",
                  "status": "modified"
                }
              ],
              "unstaged": [
                {
                  "path": "deleted.txt",
                  "status": "deleted"
                }
              ],
              "untracked": [
                "new/"
              ]
            }"#]]
        .assert_eq(&json);

        // A path in the repository (a file, here) reads the same repository.
        let from_file = git_status(&roots, Some("src/keep.rs"), &Limits::default()).expect("the status can be read");
        assert_eq!(from_file.branch.as_deref(), Some("main"));
        assert_eq!(from_file.head.as_deref(), Some(head.as_str()));
    }

    #[test]
    fn git_status_output_is_read_record_by_record() {
        // What `git status --porcelain=v2 --branch -z` prints for a detached HEAD with an
        // upstream, a conflict, a copy, a type change and paths with spaces (NUL-separated).
        let (_dir, roots) = workspace(&[]);
        let top = roots.first().path.clone();
        let records = [
            "# branch.oid 0123456789abcdef0123456789abcdef01234567",
            "# branch.head (detached)",
            "# branch.upstream origin/main",
            "# branch.ab +2 -3",
            "1 .T N... 100644 120000 120000 1111111 1111111 a link",
            "2 C. N... 100644 100644 100644 2222222 2222222 C100 copy of b",
            "b",
            "u UU N... 100644 100644 100644 100644 3333333 4444444 5555555 both changed.txt",
            "? new file.txt",
            "! ignored.log",
        ];
        let output = records.iter().map(|record| format!("{record}\0")).collect::<String>();
        let status = parse_status(output.as_bytes(), false, &roots, &top, 1024);
        let json = serde_json::to_string_pretty(&status).expect("the status serializes");
        expect![[r#"
            {
              "root": ".",
              "branch": null,
              "head": "0123456789ab",
              "upstream": "origin/main",
              "ahead": 2,
              "behind": 3,
              "staged": [
                {
                  "path": "copy of b",
                  "status": "copied",
                  "from": "b"
                }
              ],
              "unstaged": [
                {
                  "path": "a link",
                  "status": "type changed"
                },
                {
                  "path": "both changed.txt",
                  "status": "unmerged"
                }
              ],
              "untracked": [
                "new file.txt"
              ]
            }"#]]
        .assert_eq(&json);
        // The budget of paths cuts the lists and says so.
        let cut = parse_status(output.as_bytes(), false, &roots, &top, 10);
        assert_eq!((cut.unstaged.len(), cut.staged.len(), cut.truncated), (1, 0, true));
        // An output cut in the middle of a record keeps the whole records before it.
        let half = &output.as_bytes()[..output.len() - "file.txt\0! ignored.log\0".len()];
        let cut = parse_status(half, true, &roots, &top, 1024);
        assert_eq!((cut.untracked.len(), cut.unstaged.len(), cut.truncated), (0, 2, true));
    }

    #[test]
    fn git_status_outside_a_repository_says_so() {
        let (_dir, roots) = workspace(&[("a.txt", "")]);
        let error = git_status(&roots, Some("a.txt"), &Limits::default()).expect_err("not a repository");
        assert_eq!(error, ToolError::NotARepository { path: "a.txt".to_owned() });
        assert_eq!(error.to_string(), "`a.txt` is not inside a git repository");
        let error = git_status(&roots, Some("missing"), &Limits::default()).expect_err("missing");
        assert_eq!(error, ToolError::NotFound { path: "missing".to_owned() });
    }

    #[test]
    fn git_status_of_a_workspace_folder_inside_a_larger_repository_keeps_to_the_folder() {
        let repository = tempfile::tempdir().expect("a temp folder");
        write(repository.path(), "app/a.txt", b"a\n");
        write(repository.path(), "other/b.txt", b"b\n");
        git(repository.path(), &["init", "--quiet", "-b", "trunk"]);
        let roots = WorkspaceRoots::new([repository.path().join("app")]).expect("the folder exists");
        let status = git_status(&roots, None, &Limits::default()).expect("the status can be read");
        assert_eq!(status.branch.as_deref(), Some("trunk"));
        assert_eq!(status.head, None, "no commit yet");
        assert_eq!(status.untracked, ["."]);
    }
}
