// The document and file events the engine listens to, as commands: which files are open in
// editors (`openDocuments`: the engine snapshots them before each turn), which file under
// review changed in an editor or on disk (`fileChanged`: the engine checks whether its change
// still fits), which file the person saved (`documentSaved`: during a turn, a change found in it
// is theirs as much as the agent's), and which folders the workspace has (`workspaceFolders`:
// each is inside). Bursts
// are coalesced: typing fires an event per keystroke, and the engine only needs to hear about a
// file once the burst is over.

import * as path from "node:path";

import * as vscode from "vscode";

import { fileKey } from "./fileAccess";
import type { HostCommand } from "./generated/protocol";
import type { ReviewRegistry } from "./review";

/** How long a file under review must stay quiet before its change is reported. */
const FILE_CHANGED_DELAY_MS = 150;
/** Opening a folder's worth of editors reports the open documents once. */
const OPEN_DOCUMENTS_DELAY_MS = 150;

/** Runs the last task scheduled for a key once no other was scheduled for it for `delayMs`. */
class Debouncer implements vscode.Disposable {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly delayMs: number) {}

  schedule(key: string, task: () => void): void {
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        task();
      }, this.delayMs),
    );
  }

  cancel(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  dispose(): void {
    this.timers.forEach((timer) => clearTimeout(timer));
    this.timers.clear();
  }
}

/** Sends `openDocuments` now, and again whenever the open `file:` documents change. */
export function reportOpenDocuments(send: (command: HostCommand) => void): vscode.Disposable {
  const debouncer = new Debouncer(OPEN_DOCUMENTS_DELAY_MS);
  let lastSent: string | undefined;
  const sendPaths = () => {
    const paths = [
      ...new Set(
        vscode.workspace.textDocuments
          .filter((document) => document.uri.scheme === "file")
          .map((document) => document.uri.fsPath),
      ),
    ].sort();
    // Opening a diff or a settings page opens documents of other schemes: nothing to report.
    const key = JSON.stringify(paths);
    if (key !== lastSent) {
      lastSent = key;
      send({ type: "openDocuments", paths });
    }
  };
  const changed = () => debouncer.schedule("", sendPaths);
  sendPaths();
  return vscode.Disposable.from(
    debouncer,
    vscode.workspace.onDidOpenTextDocument(changed),
    vscode.workspace.onDidCloseTextDocument(changed),
  );
}

/**
 * Sends `documentSaved` for every `file:` document saved. The engine tells the person's saves
 * from Tether's own (a write it is carrying out).
 */
export function reportSavedDocuments(send: (command: HostCommand) => void): vscode.Disposable {
  return vscode.workspace.onDidSaveTextDocument((document) => {
    if (document.uri.scheme === "file") {
      send({ type: "documentSaved", path: document.uri.fsPath });
    }
  });
}

/** The workspace's folders as the engine names them: absolute paths, in VS Code's order. */
export function workspaceFolderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
}

/**
 * Sends `workspaceFolders` whenever a folder is added to or removed from the workspace while the
 * window is open (the engine was configured with the folders it had then). A change of the first
 * folder never gets here: VS Code restarts the extensions for it.
 */
export function reportWorkspaceFolders(send: (command: HostCommand) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeWorkspaceFolders(() =>
    send({ type: "workspaceFolders", folders: workspaceFolderPaths() }),
  );
}

/**
 * Sends `fileChanged` for a file while a change of it is registered: when its document is edited
 * or saved, and when the file changes on disk.
 */
export function reportReviewedFileChanges(
  registry: ReviewRegistry,
  send: (command: HostCommand) => void,
): vscode.Disposable {
  const debouncer = new Debouncer(FILE_CHANGED_DELAY_MS);
  /** The watched files, by `fileKey`, with the path as the engine spelled it. */
  const watched = new Map<string, { path: string; watcher: vscode.Disposable }>();
  const changed = (key: string) => {
    const entry = watched.get(key);
    if (entry !== undefined) {
      debouncer.schedule(key, () => send({ type: "fileChanged", path: entry.path }));
    }
  };
  const documentChanged = (document: vscode.TextDocument) => {
    if (document.uri.scheme === "file") {
      changed(document.uri.fsPath);
    }
  };
  const followRegistry = () => {
    const wanted = new Map(registry.all().map((review) => [fileKey(review.path), review.path]));
    for (const [key, entry] of watched) {
      if (!wanted.has(key)) {
        entry.watcher.dispose();
        watched.delete(key);
        debouncer.cancel(key);
      }
    }
    for (const [key, filePath] of wanted) {
      if (!watched.has(key)) {
        watched.set(key, { path: filePath, watcher: watchFile(filePath, () => changed(key)) });
      }
    }
  };
  followRegistry();
  return vscode.Disposable.from(
    registry.onDidChange(followRegistry),
    vscode.workspace.onDidChangeTextDocument((event) => documentChanged(event.document)),
    vscode.workspace.onDidSaveTextDocument(documentChanged),
    debouncer,
    {
      dispose: () => {
        watched.forEach((entry) => entry.watcher.dispose());
        watched.clear();
      },
    },
  );
}

/** Watches one file on disk, inside the workspace or not: created, changed or deleted. */
function watchFile(filePath: string, changed: () => void): vscode.Disposable {
  const pattern = new vscode.RelativePattern(vscode.Uri.file(path.dirname(filePath)), path.basename(filePath));
  const watcher = vscode.workspace.createFileSystemWatcher(pattern);
  return vscode.Disposable.from(
    watcher,
    watcher.onDidCreate(changed),
    watcher.onDidChange(changed),
    watcher.onDidDelete(changed),
  );
}
