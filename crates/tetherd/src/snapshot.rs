//! Snapshots of a workspace, so that the edits an agent makes on disk by itself can be offered
//! for review after the fact: `snapshot/take` records the workspace before a prompt turn, and
//! `snapshot/changes` says which files changed since, with their old and new text (see
//! `tether_core::sidecar` for the wire).
//!
//! The snapshots live in a private git folder, the store (`<tetherDir>/snapshot.git`), driven
//! with `GIT_DIR=<store> GIT_WORK_TREE=<root> GIT_INDEX_FILE=<store>/index`: `git add -A` then
//! `git write-tree` gives a tree id, which is the snapshot. This works in any folder, a git
//! repository or not, and never touches the person's own repository, index or refs. The store's
//! index is kept between snapshots as a stat cache, so a snapshot only reads the files whose
//! size or time changed. The workspace's `.gitignore` files are honoured (so `node_modules/` and
//! `target/` cost nothing), `.git/` and `.tether/` are always left out, and attributes that would
//! rewrite content (line endings, filters) are switched off so that every blob is the file's
//! exact bytes.
//!
//! git runs with no system or global configuration and no hooks, with a deadline per request
//! after which it is killed, and one request at a time per store, because git's index lock
//! forbids two at once. A repository can commit a `.tether` folder, store included: nothing in
//! the store runs (hooks are off, and the settings below outrank its configuration), the store
//! must not be a symbolic link, and the files tetherd rewrites in it are written without
//! following one, so a planted link cannot make tetherd write elsewhere.
//! Only regular files count: symbolic links and nested repositories are treated as absent.

use std::collections::{BTreeSet, HashMap};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_core::jsonrpc::{ErrorCode, RpcError};
use tether_core::sidecar::{
    SNAPSHOT_TEXT_LIMIT, SnapshotChange, SnapshotChangesParams, SnapshotChangesResult, SnapshotTakeParams,
    SnapshotTakeResult, SnapshotText, error_code,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

use crate::session;

/// How long one request may keep git busy before git is killed and the request fails.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(20);

/// An `index.lock` older than this was left by a git that died (a live one would have been
/// killed at its deadline long before), so it is removed rather than failing every snapshot.
const STALE_LOCK_AGE: Duration = Duration::from_secs(120);

/// How much text one `snapshot/changes` response may carry, counted as JSON-escaped bytes. The
/// host reads tetherd's lines up to 65 MiB; files beyond this budget are reported as too large
/// instead of making a line the host would drop.
const RESPONSE_TEXT_BUDGET: usize = 32 * 1024 * 1024;

/// How much of git's stderr an error message quotes (its end, where git says what went wrong).
const STDERR_TAIL_BYTES: usize = 1500;

/// The store's `info/exclude`: never snapshot git's folders or Tether's own, at any depth.
const STORE_EXCLUDE: &str = "# Written by tetherd: snapshots leave out git's folders and Tether's.\n.git/\n.tether/\n";

/// The store's `info/attributes`, which outranks every `.gitattributes` in the workspace: no
/// line-ending conversion, filter or keyword expansion, so that blobs are the files' exact bytes.
const STORE_ATTRIBUTES: &str = "# Written by tetherd: snapshots keep every file's exact bytes.\n* -text -crlf -eol -filter -ident -working-tree-encoding\n";

/// A `.gitignore` inside the store, so that the store never shows up in the person's `git status`
/// (nor in a snapshot) when it lives inside the workspace.
const STORE_GITIGNORE: &str = "*\n";

/// The file git's global configuration is read from: none.
const NO_FILE: &str = "/dev/null";

/// The `-c` settings every git command gets, on top of the store's own configuration.
const GIT_SETTINGS: &[&str] = &[
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    // A hook in the store (`post-index-change` runs on every `git add`) would be a program the
    // store chose.
    "core.hooksPath=/dev/null",
    "core.quotePath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    // The store is ours and runs nothing from the workspace, so the workspace's owner does not
    // matter; without this, git refuses a folder owned by another user.
    "safe.directory=*",
];

/// Why a snapshot request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotError {
    /// The parameters cannot be right whatever is on disk (a relative path).
    InvalidParams(String),
    /// The snapshot could not be taken or compared; the message says why, for a person.
    Failed(String),
}

impl SnapshotError {
    /// The JSON-RPC error the host gets.
    pub fn to_rpc_error(&self) -> RpcError {
        match self {
            Self::InvalidParams(message) => {
                RpcError::new(ErrorCode::InvalidParams.into(), format!("Invalid params: {message}"))
            }
            Self::Failed(message) => RpcError::new(error_code::SNAPSHOT_FAILED, message.clone()),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidParams(message) | Self::Failed(message) => formatter.write_str(message),
        }
    }
}

/// Takes and compares snapshots, one request at a time per store.
#[derive(Debug)]
pub struct Snapshots {
    git: OsString,
    timeout: Duration,
    /// One lock per store path. Entries nobody holds are dropped on the next request.
    stores: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl Default for Snapshots {
    fn default() -> Self {
        Self::new(OsString::from("git"), GIT_TIMEOUT)
    }
}

impl Snapshots {
    /// Snapshots run with the git program `git` (looked up on `PATH` when it is a bare name), each
    /// request ending when git runs longer than `timeout`.
    pub fn new(git: OsString, timeout: Duration) -> Self {
        Self { git, timeout, stores: Mutex::new(HashMap::new()) }
    }

    /// `snapshot/take`.
    pub async fn take(&self, params: SnapshotTakeParams) -> Result<SnapshotTakeResult, SnapshotError> {
        let (_serialized, git) = self.open(&params.root, &params.store).await?;
        let tree = snapshot(&git, &params.extra).await?;
        Ok(SnapshotTakeResult { tree })
    }

    /// `snapshot/changes`.
    pub async fn changes(&self, params: SnapshotChangesParams) -> Result<SnapshotChangesResult, SnapshotError> {
        let (_serialized, git) = self.open(&params.root, &params.store).await?;
        check_base(&git, &params.base).await?;
        let tree = snapshot(&git, &params.extra).await?;
        let raw = git.run_ok(&["diff-tree", "-r", "-z", "--no-renames", &params.base, &tree], None).await?;
        let changed = parse_diff_tree(&raw).map_err(|error| {
            SnapshotError::Failed(format!("git diff-tree printed something tetherd does not understand: {error}"))
        })?;
        let mut budget = TextBudget::new(SNAPSHOT_TEXT_LIMIT, RESPONSE_TEXT_BUDGET);
        let changes = read_changes(&git, changed, &mut budget).await?;
        Ok(SnapshotChangesResult { tree, changes })
    }

    /// Checks the folders, waits for the store to be free, and creates it on first use; the
    /// store stays reserved for this request until the guard is dropped.
    async fn open(&self, root: &str, store: &str) -> Result<(OwnedMutexGuard<()>, Git<'_>), SnapshotError> {
        let workspace = Workspace::new(root, store)?;
        let serialized = self.store_lock(&workspace.store).lock_owned().await;
        let git = Git { program: &self.git, workspace, deadline: Instant::now() + self.timeout, timeout: self.timeout };
        prepare_store(&git).await?;
        Ok((serialized, git))
    }

    fn store_lock(&self, store: &Path) -> Arc<tokio::sync::Mutex<()>> {
        // Nothing panics while this lock is held, but should it ever be poisoned the map is
        // still consistent: it only holds locks.
        let mut stores = self.stores.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        stores.retain(|_, lock| Arc::strong_count(lock) > 1);
        stores.entry(store.to_path_buf()).or_default().clone()
    }
}

/// The folders of one request, checked.
#[derive(Debug)]
struct Workspace {
    root: PathBuf,
    store: PathBuf,
}

impl Workspace {
    fn new(root: &str, store: &str) -> Result<Self, SnapshotError> {
        let root = absolute("root", root)?;
        let store = absolute("store", store)?;
        for folder in [Some(store.as_path()), store.parent()].into_iter().flatten() {
            if std::fs::symlink_metadata(folder).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
                return Err(SnapshotError::Failed(format!(
                    "{} is a symbolic link: snapshots are kept only in a real folder, so that nothing in the workspace can point them elsewhere",
                    folder.display()
                )));
            }
        }
        if root.starts_with(&store) {
            return Err(SnapshotError::InvalidParams(format!(
                "the store {} must be a folder of its own, not the workspace folder or one around it",
                store.display()
            )));
        }
        match std::fs::metadata(&root) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => {
                return Err(SnapshotError::Failed(format!("the workspace folder {} is not a folder", root.display())));
            }
            Err(error) if error.kind() == ErrorKind::NotFound => {
                return Err(SnapshotError::Failed(format!("the workspace folder {} does not exist", root.display())));
            }
            Err(error) => {
                return Err(SnapshotError::Failed(format!(
                    "cannot open the workspace folder {}: {error}",
                    root.display()
                )));
            }
        }
        Ok(Self { root, store })
    }

    fn index_lock(&self) -> PathBuf {
        self.store.join("index.lock")
    }

    /// The person's own `info/exclude`, when the workspace folder is the top of a git
    /// repository: its patterns are relative to that top, which is then also the top of ours.
    fn repository_exclude(&self) -> Option<PathBuf> {
        let dot_git = self.root.join(".git");
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else {
            // A linked worktree or a submodule: `.git` is a file that names the real folder,
            // and a worktree's `commondir` names the folder that holds `info/`.
            let pointer = std::fs::read_to_string(&dot_git).ok()?;
            let git_dir = self.root.join(pointer.strip_prefix("gitdir:")?.trim());
            match std::fs::read_to_string(git_dir.join("commondir")) {
                Ok(common) => git_dir.join(common.trim()),
                Err(_) => git_dir,
            }
        };
        let exclude = git_dir.join("info").join("exclude");
        exclude.is_file().then_some(exclude)
    }
}

fn absolute(name: &str, path: &str) -> Result<PathBuf, SnapshotError> {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(SnapshotError::InvalidParams(format!("{name} must be an absolute path, not {:?}", path.display())))
    }
}

/// Creates the store on first use, and (re)writes the files that make it behave.
async fn prepare_store(git: &Git<'_>) -> Result<(), SnapshotError> {
    let store = &git.workspace.store;
    let cannot = |what: &str, error: std::io::Error| {
        SnapshotError::Failed(format!("cannot {what} the snapshot store {}: {error}", store.display()))
    };
    if store.join("HEAD").is_file() {
        // Every store tetherd creates gets its `.gitignore` before git sees it. A repository
        // without one is someone's own (a store path pointing at `.git` by mistake), and adding
        // the workspace to it would wreck their index.
        if std::fs::read(store.join(".gitignore")).ok().as_deref() != Some(STORE_GITIGNORE.as_bytes()) {
            return Err(SnapshotError::Failed(format!(
                "{} is a git repository that tetherd did not create; snapshots need a store of their own",
                store.display()
            )));
        }
    } else {
        private_dir_builder().recursive(true).create(store).map_err(|error| cannot("create", error))?;
        write_if_different(&store.join(".gitignore"), STORE_GITIGNORE).map_err(|error| cannot("write", error))?;
        // Bare, so that no work tree is written into its configuration (each command names
        // the workspace instead), and without templates, which would bring sample hooks.
        let mut init = git.command(&["init", "--quiet", "--bare", "--template="]);
        init.env_remove("GIT_WORK_TREE").env_remove("GIT_INDEX_FILE");
        let output = git.execute(init, "init", None).await?;
        if !output.status.success() {
            return Err(output.failure("init"));
        }
    }
    let info = store.join("info");
    private_dir_builder().recursive(true).create(&info).map_err(|error| cannot("write", error))?;
    write_if_different(&info.join("exclude"), STORE_EXCLUDE).map_err(|error| cannot("write", error))?;
    write_if_different(&info.join("attributes"), STORE_ATTRIBUTES).map_err(|error| cannot("write", error))?;
    remove_stale_lock(&git.workspace.index_lock());
    Ok(())
}

/// Writes `content` to `path` unless it already holds exactly that; a symbolic link in its place
/// is neither read nor written through.
fn write_if_different(path: &Path, content: &str) -> std::io::Result<()> {
    match session::read_session_file(path) {
        Ok(existing) if existing == content.as_bytes() => Ok(()),
        _ => session::no_follow_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .and_then(|mut file| std::io::Write::write_all(&mut file, content.as_bytes()))
            .map_err(|error| session::explain_link(path, error)),
    }
}

/// Removes the store's `index.lock` when it is older than [`STALE_LOCK_AGE`].
fn remove_stale_lock(lock: &Path) {
    let Ok(modified) = std::fs::metadata(lock).and_then(|metadata| metadata.modified()) else {
        return;
    };
    // A lock time in the future (a clock that went back) counts as fresh: the next request
    // looks again.
    let age = modified.elapsed().unwrap_or_default();
    if age > STALE_LOCK_AGE {
        match std::fs::remove_file(lock) {
            Ok(()) => tracing::warn!(lock = %lock.display(), "removed an index lock left by a git that died"),
            Err(error) => tracing::warn!(lock = %lock.display(), %error, "cannot remove a stale index lock"),
        }
    }
}

/// Records the workspace (and `extra`) in the store's index and writes its tree: the snapshot id.
async fn snapshot(git: &Git<'_>, extra: &[String]) -> Result<String, SnapshotError> {
    // `--ignore-errors` keeps one unreadable file (one the agent is deleting right now, or a
    // nested repository without a commit) from failing the whole snapshot; git then exits with 1
    // having added everything else, and says which files it skipped.
    let added = git.run(&["add", "--all", "--ignore-errors"], None).await?;
    if !added.status.success() {
        if added.status.code() == Some(1) && !added.stderr_text().contains("fatal:") {
            tracing::warn!(root = %git.workspace.root.display(), skipped = %added.stderr_tail(), "some files are not in the snapshot");
        } else {
            return Err(added.failure("add"));
        }
    }
    let extra = extra_paths(&git.workspace.root, &git.workspace.store, extra);
    if !extra.is_empty() {
        add_extra(git, &extra).await?;
    }
    let tree = git.run_ok(&["write-tree"], None).await?;
    let tree = String::from_utf8_lossy(&tree).trim().to_owned();
    if !is_object_id(&tree) {
        return Err(SnapshotError::Failed(format!("git write-tree printed {tree:?} instead of a tree id")));
    }
    Ok(tree)
}

/// Force-adds the open files that `.gitignore` would leave out. One path git refuses (one inside
/// a nested repository) fails the whole batch, so then each is tried on its own.
async fn add_extra(git: &Git<'_>, extra: &[PathBuf]) -> Result<(), SnapshotError> {
    let mut list = Vec::new();
    for path in extra {
        list.extend_from_slice(path.as_os_str().as_encoded_bytes());
        list.push(0);
    }
    let batch = ["add", "--force", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"];
    let added = git.run(&batch, Some(&list)).await?;
    if added.status.success() {
        return Ok(());
    }
    for path in extra {
        let args = [
            OsStr::new("add"),
            OsStr::new("--force"),
            OsStr::new("--ignore-errors"),
            OsStr::new("--"),
            path.as_os_str(),
        ];
        let added = git.run(&args, None).await?;
        if !added.status.success() {
            tracing::warn!(path = %path.display(), error = %added.stderr_tail(), "an open file is not in the snapshot");
        }
    }
    Ok(())
}

/// The `extra` paths worth force-adding, relative to `root`: regular files (or links) inside
/// it, outside `.git/`, `.tether/` and the store.
fn extra_paths(root: &Path, store: &Path, extra: &[String]) -> Vec<PathBuf> {
    let canonical_root = std::fs::canonicalize(root).ok();
    let mut paths = BTreeSet::new();
    for path in extra.iter().map(Path::new) {
        if !path.is_absolute() || path.starts_with(store) {
            continue;
        }
        // An editor may name the file through another spelling of the folder (a symbolic link
        // on the way); the canonical paths agree when the plain ones do not.
        let relative = path.strip_prefix(root).map(Path::to_path_buf).ok().or_else(|| {
            let canonical = std::fs::canonicalize(path).ok()?;
            Some(canonical.strip_prefix(canonical_root.as_ref()?).ok()?.to_path_buf())
        });
        let Some(relative) = relative else { continue };
        let plain = relative.components().all(|component| match component {
            Component::Normal(name) => !name.eq_ignore_ascii_case(".git") && !name.eq_ignore_ascii_case(".tether"),
            _ => false,
        });
        if !plain || relative.as_os_str().is_empty() {
            continue;
        }
        let is_file = std::fs::symlink_metadata(root.join(&relative))
            .is_ok_and(|metadata| metadata.is_file() || metadata.is_symlink());
        if is_file {
            paths.insert(relative);
        }
    }
    paths.into_iter().collect()
}

/// Fails unless `base` is a tree in the store.
async fn check_base(git: &Git<'_>, base: &str) -> Result<(), SnapshotError> {
    let unknown = || {
        SnapshotError::Failed(format!(
            "the snapshot {base:?} is not in {}: it was taken with another store, or the store was deleted since",
            git.workspace.store.display()
        ))
    };
    // Checked before git sees it, so that it can never be read as an option.
    if !is_object_id(base) {
        return Err(unknown());
    }
    let kind = git.run(&["cat-file", "-t", base], None).await?;
    if !kind.status.success() || kind.stdout.trim_ascii() != b"tree" {
        return Err(unknown());
    }
    Ok(())
}

/// A full object id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

/// One side of a changed path in `git diff-tree` output.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TreeSide {
    mode: String,
    oid: String,
}

impl TreeSide {
    /// The blob of a regular file (executable or not); `None` for absence, symbolic links and
    /// nested repositories.
    fn file_blob(&self) -> Option<&str> {
        matches!(self.mode.as_str(), "100644" | "100755").then_some(self.oid.as_str())
    }
}

/// One line of `git diff-tree -r -z --no-renames` (raw format).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TreeChange {
    path: Vec<u8>,
    old: TreeSide,
    new: TreeSide,
}

/// Parses raw `-z` output: `:<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0`...
fn parse_diff_tree(raw: &[u8]) -> Result<Vec<TreeChange>, String> {
    let mut fields = raw.split(|&byte| byte == 0);
    let mut changes = Vec::new();
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            // The output ends with a NUL, which leaves one empty field.
            continue;
        }
        let meta = std::str::from_utf8(meta).map_err(|_| "a change line is not UTF-8".to_owned())?;
        let parts: Vec<&str> = meta.strip_prefix(':').unwrap_or(meta).split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, _status] = parts[..] else {
            return Err(format!("a change line has {} fields: {meta:?}", parts.len()));
        };
        let path = fields.next().filter(|path| !path.is_empty()).ok_or_else(|| format!("no path after {meta:?}"))?;
        changes.push(TreeChange {
            path: path.to_vec(),
            old: TreeSide { mode: old_mode.to_owned(), oid: old_oid.to_owned() },
            new: TreeSide { mode: new_mode.to_owned(), oid: new_oid.to_owned() },
        });
    }
    Ok(changes)
}

/// Reads the old and new content of each change, within `budget`.
async fn read_changes(
    git: &Git<'_>,
    changed: Vec<TreeChange>,
    budget: &mut TextBudget,
) -> Result<Vec<SnapshotChange>, SnapshotError> {
    let mut kept = Vec::new();
    for change in changed {
        let (old, new) = (change.old.file_blob(), change.new.file_blob());
        // Neither side a file (a link or nested repository changed), or the same content with
        // another mode: nothing a text review could show.
        if old == new {
            continue;
        }
        let Ok(path) = String::from_utf8(change.path) else {
            tracing::warn!("a changed file whose name is not UTF-8 is left out of the review");
            continue;
        };
        kept.push((path, old.map(str::to_owned), new.map(str::to_owned)));
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0));

    let blobs: BTreeSet<&str> =
        kept.iter().flat_map(|(_, old, new)| [old.as_deref(), new.as_deref()]).flatten().collect();
    let sizes = blob_sizes(git, &blobs).await?;
    let wanted: Vec<&str> = blobs.iter().copied().filter(|oid| budget.should_read(sizes[*oid])).collect();
    let contents = blob_contents(git, &wanted).await?;

    let mut describe = |oid: Option<String>| match oid {
        None => SnapshotText::Absent,
        Some(oid) => budget.describe(sizes[&oid], contents.get(&oid).map(Vec::as_slice)),
    };
    Ok(kept
        .into_iter()
        .map(|(path, old, new)| SnapshotChange { path, old: describe(old), new: describe(new) })
        .collect())
}

/// The size of each blob, from `git cat-file --batch-check`.
async fn blob_sizes(git: &Git<'_>, blobs: &BTreeSet<&str>) -> Result<HashMap<String, u64>, SnapshotError> {
    if blobs.is_empty() {
        return Ok(HashMap::new());
    }
    let input: String = blobs.iter().map(|oid| format!("{oid}\n")).collect();
    let output = git.run_ok(&["cat-file", "--batch-check"], Some(input.as_bytes())).await?;
    let mut sizes = HashMap::new();
    for line in String::from_utf8_lossy(&output).lines() {
        let mut words = line.split(' ');
        let (Some(oid), Some("blob"), Some(size)) = (words.next(), words.next(), words.next()) else {
            return Err(SnapshotError::Failed(format!("the snapshot store lacks a file's content: git said {line:?}")));
        };
        let size = size.parse().map_err(|_| SnapshotError::Failed(format!("git cat-file printed {line:?}")))?;
        sizes.insert(oid.to_owned(), size);
    }
    match blobs.iter().find(|oid| !sizes.contains_key(**oid)) {
        Some(missing) => Err(SnapshotError::Failed(format!("git cat-file said nothing about {missing}"))),
        None => Ok(sizes),
    }
}

/// The content of each blob, from `git cat-file --batch`.
async fn blob_contents(git: &Git<'_>, blobs: &[&str]) -> Result<HashMap<String, Vec<u8>>, SnapshotError> {
    if blobs.is_empty() {
        return Ok(HashMap::new());
    }
    let input: String = blobs.iter().map(|oid| format!("{oid}\n")).collect();
    let output = git.run_ok(&["cat-file", "--batch"], Some(input.as_bytes())).await?;
    parse_batch(&output).map_err(|error| SnapshotError::Failed(format!("git cat-file --batch: {error}")))
}

/// Parses `git cat-file --batch` output: `<oid> <type> <size>\n<content>\n`, repeated.
fn parse_batch(mut output: &[u8]) -> Result<HashMap<String, Vec<u8>>, String> {
    let mut contents = HashMap::new();
    while !output.is_empty() {
        let header_end = output.iter().position(|&byte| byte == b'\n').ok_or("a header without an end")?;
        let header = String::from_utf8_lossy(&output[..header_end]).into_owned();
        let mut words = header.split(' ');
        let (Some(oid), Some(_kind), Some(size)) = (words.next(), words.next(), words.next()) else {
            return Err(format!("unexpected header {header:?}"));
        };
        let size: usize = size.parse().map_err(|_| format!("unexpected header {header:?}"))?;
        let rest = &output[header_end + 1..];
        let content = rest.get(..size).ok_or_else(|| format!("{oid} is cut short"))?;
        if rest.get(size) != Some(&b'\n') {
            return Err(format!("{oid} is not followed by a line end"));
        }
        contents.insert(oid.to_owned(), content.to_vec());
        output = &rest[size + 1..];
    }
    Ok(contents)
}

/// Decides which files' text a response carries: each at most the file limit, all together at
/// most the response budget.
#[derive(Debug)]
struct TextBudget {
    file_limit: u64,
    /// Bytes still worth reading from the store.
    read_left: u64,
    /// JSON-escaped bytes of text the response may still carry.
    text_left: usize,
}

impl TextBudget {
    fn new(file_limit: u64, response_limit: usize) -> Self {
        Self { file_limit, read_left: u64::try_from(response_limit).unwrap_or(u64::MAX), text_left: response_limit }
    }

    /// Whether a blob of `size` bytes should be read; it is then counted against the budget.
    fn should_read(&mut self, size: u64) -> bool {
        if size > self.file_limit || size > self.read_left {
            return false;
        }
        self.read_left -= size;
        true
    }

    /// One side of a change: `content` is `None` when the blob was not read.
    fn describe(&mut self, size: u64, content: Option<&[u8]>) -> SnapshotText {
        let Some(content) = content else {
            return SnapshotText::TooLarge { size };
        };
        let Ok(text) = std::str::from_utf8(content) else {
            return SnapshotText::Binary { size };
        };
        let escaped = json_string_len(text);
        if escaped > self.text_left {
            return SnapshotText::TooLarge { size };
        }
        self.text_left -= escaped;
        SnapshotText::Text { text: text.to_owned() }
    }
}

/// How many bytes `text` takes inside a JSON string as serde_json writes it.
fn json_string_len(text: &str) -> usize {
    text.bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum()
}

/// A builder for folders only their owner can enter: the store holds copies of the
/// workspace's files.
fn private_dir_builder() -> std::fs::DirBuilder {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "only Unix has modes to set"))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// git, set up for one request on one store.
#[derive(Debug)]
struct Git<'a> {
    program: &'a OsStr,
    workspace: Workspace,
    /// When the request's git commands must all have finished.
    deadline: Instant,
    timeout: Duration,
}

/// What a finished git command left.
#[derive(Debug)]
struct GitOutput {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl GitOutput {
    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// The end of stderr, one line, cut at a character boundary.
    fn stderr_tail(&self) -> String {
        let text = self.stderr_text();
        let text = text.trim();
        let mut start = text.len().saturating_sub(STDERR_TAIL_BYTES);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        let tail = text[start..].lines().collect::<Vec<_>>().join(" | ");
        if start > 0 { format!("…{tail}") } else { tail }
    }

    fn failure(&self, command: &str) -> SnapshotError {
        let tail = self.stderr_tail();
        let said = if tail.is_empty() { "it printed nothing".to_owned() } else { format!("git said: {tail}") };
        SnapshotError::Failed(format!("git {command} failed ({}); {said}", self.status))
    }
}

impl Git<'_> {
    /// Runs git with `args`, feeding it `input`; fails only when git cannot run to the end.
    async fn run<S: AsRef<OsStr>>(&self, args: &[S], input: Option<&[u8]>) -> Result<GitOutput, SnapshotError> {
        let name = args.first().map(|arg| arg.as_ref().to_string_lossy().into_owned()).unwrap_or_default();
        self.execute(self.command(args), &name, input).await
    }

    /// Runs `command` (git's `command_name`, for messages) until it ends or the deadline passes.
    async fn execute(
        &self,
        mut command: Command,
        command_name: &str,
        input: Option<&[u8]>,
    ) -> Result<GitOutput, SnapshotError> {
        command.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = command.spawn().map_err(|error| {
            if error.kind() == ErrorKind::NotFound {
                SnapshotError::Failed(format!(
                    "git is not installed (or not on tetherd's PATH): Tether needs git to take snapshots of the workspace ({} not found)",
                    self.program.to_string_lossy()
                ))
            } else {
                SnapshotError::Failed(format!("cannot start git ({}): {error}", self.program.to_string_lossy()))
            }
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let finished = tokio::time::timeout_at(self.deadline, async {
            let feed = async {
                if let (Some(mut pipe), Some(input)) = (stdin, input) {
                    // git may stop reading early (it failed, or needs no more); its exit status
                    // then says what happened, so a broken pipe here adds nothing.
                    let _unread = pipe.write_all(input).await;
                }
            };
            let ((), stdout, stderr, status) = tokio::join!(feed, read_all(stdout), read_all(stderr), child.wait());
            (stdout, stderr, status)
        })
        .await;
        let Ok((stdout, stderr, status)) = finished else {
            // The killed git may have held the store's index lock; nobody else takes it
            // while this request holds the store.
            if let Err(error) = child.kill().await {
                tracing::warn!(%error, "cannot kill a git that ran past its deadline");
            }
            match std::fs::remove_file(self.workspace.index_lock()) {
                Ok(()) => {}
                Err(error) if error.kind() == ErrorKind::NotFound => {}
                Err(error) => tracing::warn!(%error, "cannot remove the index lock of a killed git"),
            }
            return Err(SnapshotError::Failed(format!(
                "git {command_name} did not finish within {} s in {}, and was stopped; is a large folder missing from .gitignore?",
                self.timeout.as_secs_f32(),
                self.workspace.root.display()
            )));
        };
        let io_failure = |error: std::io::Error| SnapshotError::Failed(format!("git {command_name}: {error}"));
        Ok(GitOutput {
            status: status.map_err(io_failure)?,
            stdout: stdout.map_err(io_failure)?,
            stderr: stderr.map_err(io_failure)?,
        })
    }

    /// Runs git and returns its stdout; any exit status but success is a failure.
    async fn run_ok<S: AsRef<OsStr>>(&self, args: &[S], input: Option<&[u8]>) -> Result<Vec<u8>, SnapshotError> {
        let output = self.run(args, input).await?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            let command = args.first().map(|arg| arg.as_ref().to_string_lossy().into_owned()).unwrap_or_default();
            Err(output.failure(&command))
        }
    }

    /// The git command line, with the store's environment and none of the person's
    /// configuration.
    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let Workspace { root, store } = &self.workspace;
        let mut command = Command::new(self.program);
        // Whatever git settings tetherd inherited (a GIT_DIR of the shell that started VS Code)
        // must not point these commands elsewhere.
        for (name, _) in std::env::vars_os() {
            if name.as_encoded_bytes().starts_with(b"GIT_") {
                command.env_remove(name);
            }
        }
        command
            .env("GIT_DIR", store)
            .env("GIT_WORK_TREE", root)
            .env("GIT_INDEX_FILE", store.join("index"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", NO_FILE)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("LC_ALL", "C");
        for setting in GIT_SETTINGS {
            command.arg("-c").arg(setting);
        }
        // Without global configuration git would still read the person's global ignore and
        // attributes files; point both at the store's own instead.
        let own_exclude = store.join("info").join("exclude");
        let exclude = self.workspace.repository_exclude().unwrap_or(own_exclude);
        command.arg("-c").arg(config_path("core.excludesFile", &exclude));
        command.arg("-c").arg(config_path("core.attributesFile", &store.join("info").join("attributes")));
        command.args(args).current_dir(root).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        command
    }
}

/// `name=path` for `git -c`.
fn config_path(name: &str, path: &Path) -> OsString {
    let mut setting = OsString::from(name);
    setting.push("=");
    setting.push(path);
    setting
}

async fn read_all(pipe: Option<impl AsyncRead + Unpin>) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        pipe.read_to_end(&mut bytes).await?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn texts_within_the_limits_are_sent_and_the_rest_described() {
        let mut budget = TextBudget::new(10, 16);
        let sides: [(&[u8], u64); 6] =
            [(b"0123456789", 10), (b"0123456789a", 11), (b"\xff\xfe", 2), (b"", 0), (b"\"quoted\"", 8), (b"ok", 2)];
        let described: Vec<SnapshotText> = sides
            .into_iter()
            .map(|(content, size)| {
                let read = budget.should_read(size);
                budget.describe(size, read.then_some(content))
            })
            .collect();
        assert_eq!(
            described,
            [
                SnapshotText::Text { text: "0123456789".to_owned() },
                // Over the file limit.
                SnapshotText::TooLarge { size: 11 },
                SnapshotText::Binary { size: 2 },
                SnapshotText::Text { text: String::new() },
                // Eight bytes of content but ten once escaped, and only six are left.
                SnapshotText::TooLarge { size: 8 },
                SnapshotText::Text { text: "ok".to_owned() },
            ]
        );
    }

    #[test]
    fn blobs_beyond_the_reading_budget_are_not_read() {
        let mut budget = TextBudget::new(10, 12);
        assert!(budget.should_read(10));
        assert!(!budget.should_read(3), "only 2 bytes are left");
        assert!(budget.should_read(2));
        assert_eq!(budget.describe(3, None), SnapshotText::TooLarge { size: 3 });
    }

    #[test]
    fn json_string_lengths_match_what_serde_json_writes() {
        for text in ["", "plain", "naïve ☕", "\"\\", "\n\r\t\u{8}\u{c}", "\u{0}\u{1f}\u{7f}", "a\u{2028}b"] {
            let written = serde_json::to_string(text).expect("a string serialises");
            assert_eq!(json_string_len(text), written.len() - 2, "{text:?}");
        }
    }

    #[test]
    fn diff_tree_output_is_read_path_by_path() {
        let zero = "0".repeat(40);
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let raw = format!(
            ":100644 100644 {a} {b} M\0src/main.rs\0:000000 100755 {zero} {a} A\0new file\0:120000 000000 {b} {zero} D\0link\0"
        );
        let changes = parse_diff_tree(raw.as_bytes()).expect("valid output");
        let lines: Vec<String> = changes
            .iter()
            .map(|change| {
                format!(
                    "{} {}:{} -> {}:{} {:?}",
                    String::from_utf8_lossy(&change.path),
                    change.old.mode,
                    &change.old.oid[..1],
                    change.new.mode,
                    &change.new.oid[..1],
                    (change.old.file_blob().is_some(), change.new.file_blob().is_some()),
                )
            })
            .collect();
        expect![[r#"
            src/main.rs 100644:a -> 100644:b (true, true)
            new file 000000:0 -> 100755:a (false, true)
            link 120000:b -> 000000:0 (false, false)"#]]
        .assert_eq(&lines.join("\n"));
        assert_eq!(parse_diff_tree(b""), Ok(Vec::new()));
        assert!(parse_diff_tree(b":100644 100644 x M\0path\0").is_err());
        assert!(parse_diff_tree(format!(":100644 100644 {a} {b} M\0").as_bytes()).is_err());
    }

    #[test]
    fn batch_output_is_split_into_blobs() {
        let output = b"aaa blob 5\nhello\nbbb blob 0\n\nccc blob 3\n\r\n\n\n";
        let contents = parse_batch(output).expect("valid output");
        assert_eq!(contents["aaa"], b"hello");
        assert_eq!(contents["bbb"], b"");
        assert_eq!(contents["ccc"], b"\r\n\n");
        assert!(parse_batch(b"aaa blob 5\nhell").is_err());
        assert!(parse_batch(b"aaa missing\n").is_err());
    }

    #[test]
    fn object_ids_are_full_lowercase_hex() {
        assert!(is_object_id(&"0a".repeat(20)));
        assert!(is_object_id(&"f".repeat(64)));
        assert!(!is_object_id(&"A".repeat(40)));
        assert!(!is_object_id("HEAD"));
        assert!(!is_object_id(&"a".repeat(39)));
        assert!(!is_object_id(&format!("-{}", "a".repeat(39))));
    }

    #[cfg(unix)]
    #[test]
    fn extra_paths_are_files_inside_the_root_outside_git_and_tether_folders() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path().join("root");
        let store = root.join("store.git");
        for file in ["a.txt", "sub/b.txt", ".git/config", ".tether/x", "store.git/index", "sub/.GIT/y"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
            std::fs::write(path, "").expect("a file");
        }
        std::fs::write(dir.path().join("outside.txt"), "").expect("a file");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).expect("a link to the root");
        let extra: Vec<String> = [
            root.join("sub/b.txt"),
            root.join("a.txt"),
            link.join("sub/b.txt"),
            root.join("sub"),
            root.join("missing.txt"),
            root.join(".git/config"),
            root.join(".tether/x"),
            root.join("sub/.GIT/y"),
            store.join("index"),
            root.join("sub/../a.txt"),
            dir.path().join("outside.txt"),
            root.clone(),
            PathBuf::from("a.txt"),
        ]
        .iter()
        .map(|path| path.to_str().expect("a UTF-8 temporary path").to_owned())
        .collect();
        let paths = extra_paths(&root, &store, &extra);
        assert_eq!(paths, [PathBuf::from("a.txt"), PathBuf::from("sub/b.txt")]);
    }

    /// A workspace and a store for requests that are expected to fail early.
    fn folders() -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path().to_str().expect("a UTF-8 temporary path").to_owned();
        let store = dir.path().join(".tether/snapshot.git").to_str().expect("a UTF-8 temporary path").to_owned();
        (dir, root, store)
    }

    #[tokio::test]
    async fn a_missing_git_is_named() {
        let (_dir, root, store) = folders();
        let snapshots = Snapshots::new(OsString::from("/nonexistent/git"), GIT_TIMEOUT);
        let error = snapshots.take(SnapshotTakeParams { root, store, extra: Vec::new() }).await.expect_err("no git");
        expect![[r#"Failed("git is not installed (or not on tetherd's PATH): Tether needs git to take snapshots of the workspace (/nonexistent/git not found)")"#]]
        .assert_eq(&format!("{error:?}"));
        assert_eq!(error.to_rpc_error().code, error_code::SNAPSHOT_FAILED.into());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_git_that_runs_past_the_deadline_is_killed() {
        let (dir, root, store) = folders();
        // A stand-in for git that records its pid and then never finishes.
        let pid_file = dir.path().join("pid");
        let script = dir.path().join("slow-git");
        std::fs::write(&script, format!("#!/bin/sh\necho $$ > '{}'\nexec sleep 600\n", pid_file.display()))
            .expect("the script");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
        let snapshots = Snapshots::new(script.into_os_string(), Duration::from_millis(300));

        let error = snapshots.take(SnapshotTakeParams { root, store, extra: Vec::new() }).await.expect_err("too slow");
        let SnapshotError::Failed(message) = error else { panic!("{error:?}") };
        assert!(message.starts_with("git init did not finish within 0.3 s in "), "{message}");
        let pid = std::fs::read_to_string(&pid_file).expect("the script ran");
        assert!(!Path::new(&format!("/proc/{}", pid.trim())).exists(), "git was killed and reaped");
    }

    #[tokio::test]
    async fn a_stale_index_lock_is_removed_and_a_fresh_one_is_respected() {
        let (_dir, root, store) = folders();
        let snapshots = Snapshots::default();
        let params = SnapshotTakeParams { root, store: store.clone(), extra: Vec::new() };
        snapshots.take(params.clone()).await.expect("a first snapshot");

        let lock = Path::new(&store).join("index.lock");
        std::fs::write(&lock, "").expect("a lock");
        let error = snapshots.take(params.clone()).await.expect_err("git sees the lock");
        assert!(
            error.to_string().starts_with("git add failed (exit status: 128); git said: fatal: Unable to create"),
            "{error}"
        );
        assert!(error.to_string().contains("index.lock': File exists."), "{error}");

        let long_ago = std::time::SystemTime::now() - STALE_LOCK_AGE - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&lock)
            .and_then(|file| file.set_modified(long_ago))
            .expect("an old lock");
        snapshots.take(params).await.expect("the stale lock is removed");
        assert!(!lock.exists());
    }
}
