// The engine hears which files are open, at start and as editors open and close, and hears once
// per burst when a file under review is edited, saved or changed on disk, and only while it is.

import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import {
  reportOpenDocuments,
  reportReviewedFileChanges,
  reportSavedDocuments,
  reportWorkspaceFolders,
} from "../src/documentEvents";
import type { HostCommand, ReviewDocument } from "../src/generated/protocol";
import { ReviewRegistry } from "../src/review";
import { eventually, recordingLog, tempFolder } from "./fakes";
import {
  TextDocument,
  Uri,
  changeWorkspaceFolders,
  closeDocument,
  fileWatchers,
  openDocument,
  resetWorkspace,
  workspace,
} from "./vscodeStub";

test("the open file documents are reported at start and when documents open or close", async () => {
  resetWorkspace();
  openDocument("/workspace/b.ts", "");
  openDocument("/outside/a.ts", "");
  const sent: HostCommand[] = [];
  const reporter = reportOpenDocuments((command) => sent.push(command));
  assert.deepEqual(sent, [{ type: "openDocuments", paths: ["/outside/a.ts", "/workspace/b.ts"] }]);

  // A diff editor's side is not a file; then a burst of files opening is one report.
  workspace.textDocuments.push(new TextDocument(Uri.from({ scheme: "tether-review", path: "/workspace/b.ts" }), ""));
  openDocument("/workspace/c.ts", "");
  const d = openDocument("/workspace/d.ts", "");
  await eventually(() => sent.length === 2, "the report of the opened documents");
  closeDocument(d);
  await eventually(() => sent.length === 3, "the report of the closed document");
  assert.deepEqual(sent.slice(1), [
    { type: "openDocuments", paths: ["/outside/a.ts", "/workspace/b.ts", "/workspace/c.ts", "/workspace/d.ts"] },
    { type: "openDocuments", paths: ["/outside/a.ts", "/workspace/b.ts", "/workspace/c.ts"] },
  ]);
  reporter.dispose();
});

test("every file document saved is reported, and nothing else", async (t) => {
  resetWorkspace();
  const folder = tempFolder(t);
  const sent: HostCommand[] = [];
  const reporter = reportSavedDocuments((command) => sent.push(command));
  const notes = path.join(folder, "notes.md");
  await openDocument(notes, "# Notes\n").save();
  await new TextDocument(Uri.from({ scheme: "untitled", path: path.join(folder, "Untitled-1") }), "draft").save();
  assert.deepEqual(sent, [{ type: "documentSaved", path: notes }]);
  reporter.dispose();
});

test("a folder added to or removed from the workspace is reported with every folder, in order", () => {
  resetWorkspace();
  changeWorkspaceFolders(["/workspace", "/lib"]);
  const sent: HostCommand[] = [];
  const reporter = reportWorkspaceFolders((command) => sent.push(command));
  // The engine starts with the folders of its configuration: nothing is sent until they change.
  assert.deepEqual(sent, []);
  changeWorkspaceFolders(["/workspace", "/lib", "/docs"]);
  changeWorkspaceFolders(["/workspace", "/docs"]);
  assert.deepEqual(sent, [
    { type: "workspaceFolders", folders: ["/workspace", "/lib", "/docs"] },
    { type: "workspaceFolders", folders: ["/workspace", "/docs"] },
  ]);
  reporter.dispose();
  changeWorkspaceFolders(["/workspace"]);
  assert.equal(sent.length, 2, "nothing is reported once the reporter is disposed");
  workspace.workspaceFolders = undefined;
});

test("a file under review is reported once per burst of edits, on save and on disk changes", async (t) => {
  resetWorkspace();
  const folder = tempFolder(t);
  const app = path.join(folder, "app.ts");
  const other = path.join(folder, "other.ts");
  const { log } = recordingLog();
  const registry = new ReviewRegistry(log);
  const sent: HostCommand[] = [];
  const reporter = reportReviewedFileChanges(registry, (command) => sent.push(command));
  const review: ReviewDocument = {
    change: 1,
    path: app,
    label: "app.ts",
    original: "",
    proposed: null,
    applied: true,
    hunks: [],
    settled: false,
    session: 1,
  };
  registry.show(review, false);
  const watcher = fileWatchers[0];
  assert.ok(watcher, "the file is watched on disk");
  assert.deepEqual([watcher.pattern.base.fsPath, watcher.pattern.pattern], [folder, "app.ts"]);

  const unrelated = openDocument(other, "");
  const document = openDocument(app, "");
  unrelated.setText("typing elsewhere", true);
  for (const text of ["t", "ty", "typ", "type"]) {
    document.setText(text, true);
  }
  await eventually(() => sent.length === 1, "one report for the burst");
  assert.deepEqual(sent, [{ type: "fileChanged", path: app }]);

  await document.save();
  await eventually(() => sent.length === 2, "the report of the save");
  watcher.fireChange();
  await eventually(() => sent.length === 3, "the report of the change on disk");

  registry.clear();
  assert.equal(watcher.disposed, true, "a file no longer under review is not watched");
  document.setText("typing after review", true);
  unrelated.setText("and elsewhere", true);
  // Registering another change afterwards reports that file only, proving the earlier typing
  // left nothing behind: its report would have arrived first.
  registry.show({ ...review, change: 2, path: other }, false);
  unrelated.setText("now under review", true);
  await eventually(() => sent.length === 4, "the report of the newly reviewed file");
  assert.deepEqual(sent.slice(3), [{ type: "fileChanged", path: other }]);
  reporter.dispose();
});
