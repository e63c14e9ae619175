//! Workspace snapshots through the real tetherd and real git: `snapshot/take` records a folder,
//! `snapshot/changes` reports exactly the files that changed since with their exact old and new
//! bytes, `.gitignore` is honoured except for files open in editors, and the person's own
//! repository is never touched.

#![cfg(unix)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use support::{Client, Tetherd};
use tether_core::sidecar::SNAPSHOT_TEXT_LIMIT;

/// A workspace folder with the store where the host would put it.
struct Workspace {
    /// Kept for its lifetime: the folder is removed when it is dropped.
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path().join("project");
        std::fs::create_dir(&root).expect("the workspace folder");
        Workspace { _dir: dir, root }
    }

    fn store(&self) -> PathBuf {
        self.root.join(".tether/snapshot.git")
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the file's folder");
        std::fs::write(path, bytes).expect("a workspace file");
    }

    fn remove(&self, relative: &str) {
        std::fs::remove_file(self.path(relative)).expect("the file existed");
    }

    fn params(&self, extra: &[PathBuf]) -> Value {
        json!({ "root": text(&self.root), "store": text(&self.store()), "extra": extra.iter().map(|path| text(path)).collect::<Vec<_>>() })
    }

    fn take(&self, host: &mut Client, extra: &[PathBuf]) -> String {
        let result = host.call("snapshot/take", self.params(extra)).expect("snapshot/take succeeds");
        result["tree"].as_str().expect("a tree id").to_owned()
    }

    /// `(tree, changes)` since `base`.
    fn changes(&self, host: &mut Client, base: &str, extra: &[PathBuf]) -> (String, Value) {
        let mut params = self.params(extra);
        params["base"] = json!(base);
        let result = host.call("snapshot/changes", params).expect("snapshot/changes succeeds");
        (result["tree"].as_str().expect("a tree id").to_owned(), result["changes"].clone())
    }
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

/// git in the person's repository, with none of this machine's configuration.
fn persons_git(root: &Path, args: &[&str]) -> Vec<u8> {
    let output = Command::new("git")
        .args(["-c", "user.name=Person", "-c", "user.email=person@example.com", "-c", "commit.gpgSign=false"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

#[test]
fn changes_lists_exactly_the_modified_added_and_deleted_files_with_their_exact_bytes() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    // The attributes ask git to turn CRLF into LF; a snapshot must keep the bytes anyway.
    workspace.write(".gitattributes", "* text=auto eol=lf\n");
    workspace.write("src/windows.txt", "one\r\ntwo\r\n");
    workspace.write("no-newline.txt", "the last line has no newline");
    workspace.write("untouched.txt", "stays\n");
    workspace.write("script.sh", "echo hi\n");
    let base = workspace.take(&mut host, &[]);

    workspace.write("src/windows.txt", "one\r\nTWO\r\nthree");
    workspace.remove("no-newline.txt");
    workspace.write("notes/café.md", "naïve ☕ — ünïcödé\n\twith a tab and \"quotes\"");
    std::fs::set_permissions(workspace.path("script.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let (tree, changes) = workspace.changes(&mut host, &base, &[]);

    assert_ne!(tree, base);
    assert_eq!(
        changes,
        json!([
            {
                "path": "no-newline.txt",
                "old": { "type": "text", "text": "the last line has no newline" },
                "new": { "type": "absent" },
            },
            {
                "path": "notes/café.md",
                "old": { "type": "absent" },
                "new": { "type": "text", "text": "naïve ☕ — ünïcödé\n\twith a tab and \"quotes\"" },
            },
            {
                "path": "src/windows.txt",
                "old": { "type": "text", "text": "one\r\ntwo\r\n" },
                "new": { "type": "text", "text": "one\r\nTWO\r\nthree" },
            },
        ]),
        "a changed mode alone (script.sh) is not a change"
    );

    // The new tree is a base like any other.
    let (same, nothing) = workspace.changes(&mut host, &tree, &[]);
    assert_eq!(same, tree);
    assert_eq!(nothing, json!([]));
}

#[test]
fn an_unchanged_workspace_gives_the_same_snapshot_again() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    workspace.write("a.txt", "a\n");
    workspace.write("deep/er/b.txt", "b\n");
    let first = workspace.take(&mut host, &[]);
    let second = workspace.take(&mut host, &[]);
    assert_eq!(first, second);

    // Same size, new content: found even though the store's index holds the old stat data.
    workspace.write("a.txt", "A\n");
    let third = workspace.take(&mut host, &[]);
    assert_ne!(third, first);
    let (_, changes) = workspace.changes(&mut host, &first, &[]);
    assert_eq!(changes[0]["path"], json!("a.txt"));
    assert_eq!(changes[0]["new"], json!({ "type": "text", "text": "A\n" }));
}

#[test]
fn ignored_files_are_left_out_unless_open_in_an_editor() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    workspace.write(".gitignore", "node_modules/\n*.log\n");
    workspace.write("node_modules/pkg/index.js", "module.exports = 1;\n");
    workspace.write("node_modules/pkg/other.js", "other\n");
    workspace.write("debug.log", "started\n");
    workspace.write(".tether/settings.json", "{}\n");
    workspace.write("main.js", "main\n");
    let outside = tempfile::NamedTempFile::new().expect("a file outside the workspace");
    // Only the first is a file open in an editor that the snapshot should record; the others
    // are skipped without failing the request.
    let extra = [
        workspace.path("node_modules/pkg/index.js"),
        workspace.path("node_modules/pkg"),
        workspace.path("node_modules/pkg/missing.js"),
        workspace.path(".tether/settings.json"),
        outside.path().to_path_buf(),
        PathBuf::from("relative/path.js"),
    ];
    let base = workspace.take(&mut host, &extra);

    workspace.write("node_modules/pkg/index.js", "module.exports = 2;\n");
    workspace.write("node_modules/pkg/other.js", "changed\n");
    workspace.write("debug.log", "started\nfailed\n");
    workspace.write(".tether/settings.json", "{\"changed\":true}\n");
    workspace.write("main.js", "main\nmore\n");
    let (_, changes) = workspace.changes(&mut host, &base, &extra);
    let paths: Vec<&str> =
        changes.as_array().expect("a list").iter().filter_map(|change| change["path"].as_str()).collect();
    assert_eq!(paths, ["main.js", "node_modules/pkg/index.js"]);
    assert_eq!(changes[1]["old"], json!({ "type": "text", "text": "module.exports = 1;\n" }));

    // An ignored file that was never open is not in the store at all: opening it later shows
    // it as new, not as a change the agent made.
    let (_, changes) = workspace.changes(&mut host, &base, &[workspace.path("debug.log")]);
    assert_eq!(changes[0]["path"], json!("debug.log"));
    assert_eq!(changes[0]["old"], json!({ "type": "absent" }));
}

#[test]
fn the_persons_own_repository_is_untouched() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    persons_git(&workspace.root, &["init", "--quiet"]);
    workspace.write("committed.txt", "v1\n");
    workspace.write("staged.txt", "staged v1\n");
    persons_git(&workspace.root, &["add", "committed.txt", "staged.txt"]);
    persons_git(&workspace.root, &["commit", "--quiet", "-m", "first"]);
    workspace.write("staged.txt", "staged v2\n");
    persons_git(&workspace.root, &["add", "staged.txt"]);
    workspace.write("untracked.txt", "new\n");
    // The person's own exclude file is honoured too.
    workspace.write(".git/info/exclude", "secret.env\n");
    workspace.write("secret.env", "TOKEN=1\n");

    let index = workspace.path(".git/index");
    let index_before = std::fs::read(&index).expect("the person's index");
    let status_before = persons_git(&workspace.root, &["status", "--porcelain", "--untracked-files=all"]);
    let refs_before = persons_git(&workspace.root, &["show-ref", "--head"]);

    let base = workspace.take(&mut host, &[]);
    workspace.write("committed.txt", "v3\n");
    workspace.write("secret.env", "TOKEN=2\n");
    let (_, changes) = workspace.changes(&mut host, &base, &[]);
    assert_eq!(
        changes,
        json!([{
            "path": "committed.txt",
            "old": { "type": "text", "text": "v1\n" },
            "new": { "type": "text", "text": "v3\n" },
        }])
    );

    // A store pointing at the person's repository by mistake is refused before git runs.
    let mut params = workspace.params(&[]);
    params["store"] = json!(text(&workspace.path(".git")));
    let error = host.call("snapshot/take", params).expect_err("not a store");
    assert_eq!(error["code"], json!(-32020));
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains("a git repository that tetherd did not create")),
        "{error}"
    );

    // The agent's edits undone, the person's repository must look exactly as before.
    workspace.write("committed.txt", "v1\n");
    workspace.write("secret.env", "TOKEN=1\n");
    assert_eq!(std::fs::read(&index).expect("the person's index"), index_before, "the index bytes");
    let status_after = persons_git(&workspace.root, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(String::from_utf8_lossy(&status_after), String::from_utf8_lossy(&status_before));
    assert_eq!(persons_git(&workspace.root, &["show-ref", "--head"]), refs_before);
}

#[test]
fn binary_and_too_large_files_are_described_instead_of_sent() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    let limit = usize::try_from(SNAPSHOT_TEXT_LIMIT).expect("the limit fits");
    workspace.write("image.png", [0x89, b'P', b'N', b'G', 0xff, 0x00]);
    workspace.write("big.txt", "small for now\n");
    let base = workspace.take(&mut host, &[]);

    workspace.write("image.png", [0x89, b'P', b'N', b'G', 0xfe]);
    workspace.write("big.txt", "a".repeat(limit + 1));
    let (_, changes) = workspace.changes(&mut host, &base, &[]);
    assert_eq!(
        changes,
        json!([
            {
                "path": "big.txt",
                "old": { "type": "text", "text": "small for now\n" },
                "new": { "type": "tooLarge", "size": limit + 1 },
            },
            {
                "path": "image.png",
                "old": { "type": "binary", "size": 6 },
                "new": { "type": "binary", "size": 5 },
            },
        ])
    );
}

#[test]
fn a_nested_repository_without_a_commit_does_not_stop_snapshots() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    workspace.write("app.txt", "v1\n");
    std::fs::create_dir(workspace.path("vendored")).expect("a folder");
    persons_git(&workspace.path("vendored"), &["init", "--quiet"]);
    workspace.write("vendored/lib.txt", "lib\n");
    let base = workspace.take(&mut host, &[]);
    workspace.write("app.txt", "v2\n");
    let (_, changes) = workspace.changes(&mut host, &base, &[]);
    let paths: Vec<&str> =
        changes.as_array().expect("a list").iter().filter_map(|change| change["path"].as_str()).collect();
    assert_eq!(paths, ["app.txt"]);
}

#[test]
fn requests_on_one_store_at_the_same_time_all_succeed() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let mut other_host = tetherd.host();
    let workspace = Workspace::new();
    for index in 0..50 {
        workspace.write(&format!("file-{index}.txt"), format!("{index}\n"));
    }
    // Sent before any answer is read, so that they overlap inside tetherd.
    let first = host.request("snapshot/take", workspace.params(&[]));
    let second = host.request("snapshot/take", workspace.params(&[]));
    let third = other_host.request("snapshot/take", workspace.params(&[]));
    let trees: Vec<Value> = [host.response(first), host.response(second), other_host.response(third)]
        .into_iter()
        .map(|answer| answer.expect("every snapshot succeeds")["tree"].clone())
        .collect();
    assert_eq!(trees[0], trees[1]);
    assert_eq!(trees[0], trees[2]);
}

#[test]
fn failures_say_what_went_wrong() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    workspace.write("a.txt", "a\n");
    let tree = workspace.take(&mut host, &[]);

    let mut messages = Vec::new();
    let mut failure = |method: &str, params: Value| {
        let error = host.call(method, params).expect_err("the request fails");
        messages.push(format!("{} {}", error["code"], error["message"].as_str().expect("a message")));
    };
    let store = text(&workspace.store()).to_owned();
    let root = text(&workspace.root).to_owned();
    let missing = format!("{root}/missing");
    failure("snapshot/changes", json!({ "root": root, "store": store, "base": "0".repeat(40) }));
    failure("snapshot/changes", json!({ "root": root, "store": store, "base": "--output=/tmp/x" }));
    failure("snapshot/changes", json!({ "root": missing, "store": store, "base": tree }));
    failure("snapshot/take", json!({ "root": missing, "store": store }));
    failure("snapshot/take", json!({ "root": "project", "store": store }));
    failure("snapshot/take", json!({ "root": root }));
    failure("snapshot/take", json!({ "root": root, "store": root }));
    let messages = messages.join("\n").replace(&root, "<root>");
    expect_test::expect![[r#"
        -32020 the snapshot "0000000000000000000000000000000000000000" is not in <root>/.tether/snapshot.git: it was taken with another store, or the store was deleted since
        -32020 the snapshot "--output=/tmp/x" is not in <root>/.tether/snapshot.git: it was taken with another store, or the store was deleted since
        -32020 the workspace folder <root>/missing does not exist
        -32020 the workspace folder <root>/missing does not exist
        -32602 Invalid params: root must be an absolute path, not "project"
        -32602 Invalid params: missing field `store` at line 1 column 34
        -32602 Invalid params: the store <root> must be a folder of its own, not the workspace folder or one around it"#]]
    .assert_eq(&messages);

    // tetherd is still serving.
    assert_eq!(workspace.take(&mut host, &[]), tree);
}

/// A repository can commit `.tether/snapshot.git` itself. Nothing in it runs (a hook git would
/// call while it adds the workspace), and nothing in it makes tetherd write elsewhere (a link in
/// place of a file tetherd rewrites, or in place of the store).
#[test]
fn a_store_the_repository_committed_runs_nothing_and_writes_nowhere_else() {
    let tetherd = Tetherd::start(&[]);
    let mut host = tetherd.host();
    let workspace = Workspace::new();
    workspace.write("app.txt", "v1\n");
    // A store as tetherd makes it, taken over by the repository: a hook git calls whenever it
    // writes the index.
    workspace.take(&mut host, &[]);
    let marker = workspace.path("../hook-ran");
    let hook = workspace.store().join("hooks/post-index-change");
    std::fs::create_dir_all(hook.parent().expect("a parent")).expect("the hooks folder");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", text(&marker))).expect("a hook");
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("an executable hook");
    workspace.write("app.txt", "v2\n");
    workspace.take(&mut host, &[]);
    assert!(!marker.exists(), "the store's hook never runs");

    // A file tetherd rewrites in the store, replaced by a link to the person's file.
    let outside = workspace.path("../bashrc");
    std::fs::write(&outside, "export SECRET=1\n").expect("a file outside");
    let attributes = workspace.store().join("info/attributes");
    std::fs::remove_file(&attributes).expect("the store's attributes");
    std::os::unix::fs::symlink(&outside, &attributes).expect("a symbolic link");
    let error = host.call("snapshot/take", workspace.params(&[])).expect_err("a link in the store is refused");
    assert!(error["message"].as_str().expect("a message").contains("symbolic link"), "{error}");
    assert_eq!(std::fs::read_to_string(&outside).expect("the file"), "export SECRET=1\n");

    // The store itself as a link to a folder elsewhere.
    let linked = Workspace::new();
    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir_all(linked.path(".tether")).expect("the .tether folder");
    std::os::unix::fs::symlink(elsewhere.path(), linked.store()).expect("a symbolic link");
    let error = host.call("snapshot/take", linked.params(&[])).expect_err("a store that is a link is refused");
    assert!(error["message"].as_str().expect("a message").contains("symbolic link"), "{error}");
    assert!(std::fs::read_dir(elsewhere.path()).expect("the folder").next().is_none(), "nothing written there");
}
