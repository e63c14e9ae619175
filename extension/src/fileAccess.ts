// Reads and edits files for the engine (`readFile`, `editFile`): from the open document when an
// editor has the file open, since the person's unsaved edits are what the agent must see and
// must never be overwritten, else from the disk. Whether to read or change a file, and what to
// write, is the engine's decision; this file only carries it out with VS Code's APIs and reports
// what happened.

import * as fs from "node:fs/promises";

import * as vscode from "vscode";

import { describeError } from "./errors";
import type { EditOutcome, FileReadOutcome, TextEdit } from "./generated/protocol";

/** The answer to one `readFile`: the outcome, and the bytes when there are any. */
export interface FileChunk {
  outcome: FileReadOutcome;
  data: Uint8Array;
}

/** An `editFile` action's fields, as the engine sent them. */
export interface EditRequest {
  path: string;
  expected: string | null;
  result: string | null;
  edits: TextEdit[];
}

const NO_BYTES = new Uint8Array(0);
const utf8 = new TextEncoder();

/** How VS Code spells a file's path, so that paths from the engine and document URIs compare. */
export function fileKey(path: string): string {
  return vscode.Uri.file(path).fsPath;
}

/** The open `file:` document of `path`, if an editor (or another extension) has it open. */
export function findOpenDocument(path: string): vscode.TextDocument | undefined {
  const key = fileKey(path);
  return vscode.workspace.textDocuments.find(
    (document) => document.uri.scheme === "file" && document.uri.fsPath === key,
  );
}

export class FileAccess {
  /**
   * The UTF-8 bytes of each open document's text, for its version: a big document read in chunks
   * is encoded once, not once per chunk.
   */
  private readonly encoded = new WeakMap<vscode.TextDocument, { version: number; bytes: Uint8Array }>();
  /** The last edit queued for each file; the next one starts when it is done. */
  private readonly editQueues = new Map<string, Promise<EditOutcome>>();

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Up to `maxBytes` bytes of the file's UTF-8 text from byte `offset`. Never rejects. */
  async read(path: string, offset: number, maxBytes: number): Promise<FileChunk> {
    const document = findOpenDocument(path);
    if (document === undefined) {
      return readFromDisk(path, offset, maxBytes);
    }
    const bytes = this.documentBytes(document);
    const start = Math.min(offset, bytes.length);
    const end = Math.min(start + maxBytes, bytes.length);
    return {
      outcome: { type: "data", eof: end === bytes.length, fromEditor: true },
      data: bytes.subarray(start, end),
    };
  }

  /**
   * Changes the file if, and only if, it holds `expected` now. Edits of one file run one after
   * another in the order asked, so each checks the text the previous one left. Never rejects.
   */
  edit(request: EditRequest): Promise<EditOutcome> {
    const key = fileKey(request.path);
    const previous = this.editQueues.get(key) ?? Promise.resolve(undefined);
    const next = previous.then(() => this.editNow(request));
    this.editQueues.set(key, next);
    void next.then(() => {
      if (this.editQueues.get(key) === next) {
        this.editQueues.delete(key);
      }
    });
    return next;
  }

  private documentBytes(document: vscode.TextDocument): Uint8Array {
    const cached = this.encoded.get(document);
    if (cached !== undefined && cached.version === document.version) {
      return cached.bytes;
    }
    const bytes = utf8.encode(document.getText());
    this.encoded.set(document, { version: document.version, bytes });
    return bytes;
  }

  private async editNow({ path, expected, result, edits }: EditRequest): Promise<EditOutcome> {
    try {
      const uri = vscode.Uri.file(path);
      const open = findOpenDocument(path);
      const current = open !== undefined ? open.getText() : await readDiskText(path);
      if (current !== expected) {
        return { type: "conflict" };
      }
      if (expected === null || result === null) {
        if (expected === result) {
          // Nothing existed and nothing is wanted: the file is already as asked.
          return { type: "applied", saved: true };
        }
        const edit = new vscode.WorkspaceEdit();
        if (expected === null) {
          // Without `overwrite`, a file that appeared since the check above is left alone.
          edit.createFile(uri, { contents: utf8.encode(result ?? "") });
        } else {
          edit.deleteFile(uri, { ignoreIfNotExists: true });
        }
        if (!(await vscode.workspace.applyEdit(edit))) {
          return failed(`VS Code did not apply the change to ${path}.`);
        }
        return { type: "applied", saved: true };
      }
      return await this.replaceText(uri, path, open, expected, result, edits);
    } catch (error) {
      return failed(`Could not change ${path}: ${describeFileError(error)}`);
    }
  }

  /** Applies `edits` to the file's document, and saves it unless the person had unsaved edits. */
  private async replaceText(
    uri: vscode.Uri,
    path: string,
    open: vscode.TextDocument | undefined,
    expected: string,
    result: string,
    edits: TextEdit[],
  ): Promise<EditOutcome> {
    const wasDirty = open?.isDirty ?? false;
    const document = open ?? (await vscode.workspace.openTextDocument(uri));
    if (document.getText() !== expected) {
      // Opening a file can change its text: VS Code gives a document one kind of line ending, so
      // a file with mixed ones reads differently in the editor. The disk still holding exactly
      // `expected` tells that apart from a file that changed since it was checked.
      if (open === undefined && (await readDiskText(path)) === expected) {
        await this.writeExactly(uri, result, `${path} has mixed line endings`);
        return { type: "applied", saved: true };
      }
      return { type: "conflict" };
    }
    const edit = new vscode.WorkspaceEdit();
    for (const change of edits) {
      const range = new vscode.Range(document.positionAt(change.start), document.positionAt(change.end));
      edit.replace(uri, range, change.text);
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      return failed(`VS Code did not apply the change to ${path}.`);
    }
    const saved = !wasDirty && (await document.save());
    if (document.getText() === result) {
      return { type: "applied", saved };
    }
    // VS Code gives inserted text the document's line endings. With the person's unsaved edits
    // in the document, its text is theirs to save; otherwise the file gets exactly `result`.
    if (wasDirty) {
      this.log.debug(`The edit of ${path} is in its unsaved document with the document's line endings.`);
      return { type: "applied", saved };
    }
    await this.writeExactly(uri, result, `the editor changed the line endings of ${path}`);
    return { type: "applied", saved: true };
  }

  /** Writes `text` as the file's bytes through VS Code, so open editors and watchers follow. */
  private async writeExactly(uri: vscode.Uri, text: string, why: string): Promise<void> {
    this.log.debug(`Wrote the exact text of ${uri.fsPath} to disk: ${why}.`);
    await vscode.workspace.fs.writeFile(uri, utf8.encode(text));
  }
}

async function readFromDisk(path: string, offset: number, maxBytes: number): Promise<FileChunk> {
  let handle: fs.FileHandle | undefined;
  try {
    // Checked before opening: opening a named pipe would wait for a writer, maybe forever.
    const stats = await fs.stat(path);
    if (stats.isDirectory()) {
      return failedRead(`${path} is a folder, not a file.`);
    }
    if (!stats.isFile()) {
      return failedRead(`${path} is not a regular file.`);
    }
    handle = await fs.open(path, "r");
    const size = (await handle.stat()).size;
    // Only the chunk is read, never the whole file: the engine reads a big file in pieces.
    const length = Math.max(0, Math.min(maxBytes, size - offset));
    const buffer = new Uint8Array(length);
    let filled = 0;
    let ended = offset + length >= size;
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled);
      if (bytesRead === 0) {
        // The file shrank since it was measured: what was read is all there is.
        ended = true;
        break;
      }
      filled += bytesRead;
    }
    return { outcome: { type: "data", eof: ended, fromEditor: false }, data: buffer.subarray(0, filled) };
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return { outcome: { type: "notFound" }, data: NO_BYTES };
    }
    return failedRead(`Could not read ${path}: ${describeFileError(error)}`);
  } finally {
    // A read-only handle has nothing to flush: failing to close it loses nothing.
    await handle?.close().catch(() => undefined);
  }
}

/** The file's text from disk, or null when there is no file. */
async function readDiskText(path: string): Promise<string | null> {
  try {
    // Decoded as Node does, keeping a byte order mark: the engine's text of the file has it too.
    return (await fs.readFile(path)).toString("utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return null;
    }
    throw error;
  }
}

function failedRead(message: string): FileChunk {
  return { outcome: { type: "failed", message }, data: NO_BYTES };
}

function failed(message: string): EditOutcome {
  return { type: "failed", message };
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Node's file errors, in words: its own messages lead with a code (`EACCES: permission denied`). */
function describeFileError(error: unknown): string {
  switch (errorCode(error)) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a folder, not a file";
    case "ENOTDIR":
      return "a part of the path is not a folder";
    default:
      return describeError(error);
  }
}
