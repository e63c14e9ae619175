// Reads and edits for the engine: an open document is read with the person's unsaved edits, in
// chunks; a file on disk is read in chunks without reading it whole; missing files and folders
// are told apart. An edit changes nothing unless the file holds what the engine expected, goes
// through the workspace edit API, saves only what the person had no unsaved edits in, and leaves
// the file with exactly the text asked for.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test, type TestContext } from "node:test";

import { FileAccess, type FileChunk } from "../src/fileAccess";
import { recordingLog, tempFolder } from "./fakes";
import { appliedEdits, openDocument, resetWorkspace, workspace } from "./vscodeStub";

const decoder = new TextDecoder();

function setup(t: TestContext) {
  resetWorkspace();
  appliedEdits.length = 0;
  const { log, lines } = recordingLog();
  return { files: new FileAccess(log), lines, folder: tempFolder(t) };
}

/** Reads the whole file in chunks of `chunkSize`, as the engine does for a big file. */
async function readInChunks(files: FileAccess, file: string, chunkSize: number): Promise<FileChunk[]> {
  const chunks: FileChunk[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await files.read(file, offset, chunkSize);
    chunks.push(chunk);
    if (chunk.outcome.type !== "data" || chunk.outcome.eof) {
      return chunks;
    }
    offset += chunk.data.length;
  }
}

function joined(chunks: FileChunk[]): string {
  return decoder.decode(Buffer.concat(chunks.map((chunk) => chunk.data)));
}

test("an open document is read in chunks from its text, unsaved edits included", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "notes.md");
  fs.writeFileSync(file, "what the disk holds\n");
  const text = "naïve ünsaved text, not on disk\n";
  const document = openDocument(file, text, { dirty: true });

  const chunks = await readInChunks(files, file, 5);
  assert.equal(joined(chunks), text);
  const bytes = Buffer.byteLength(text);
  assert.equal(chunks.length, Math.ceil(bytes / 5), "every chunk but the last is full");
  assert.deepEqual(
    chunks.map((chunk) => chunk.outcome),
    chunks.map((_, index) => ({ type: "data", eof: index === chunks.length - 1, fromEditor: true })),
  );

  // The person types on: the next read sees the new version.
  document.setText("edited again", true);
  assert.equal(joined(await readInChunks(files, file, 100)), "edited again");
});

test("a file on disk is read in chunks from an offset, with eof on the last one", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "digits.txt");
  fs.writeFileSync(file, "0123456789");

  const read = async (offset: number, maxBytes: number) => {
    const { outcome, data } = await files.read(file, offset, maxBytes);
    return { outcome, text: decoder.decode(data) };
  };
  const data = (text: string, eof: boolean) => ({ outcome: { type: "data", eof, fromEditor: false }, text });
  assert.deepEqual(await read(0, 4), data("0123", false));
  assert.deepEqual(await read(4, 4), data("4567", false));
  assert.deepEqual(await read(6, 4), data("6789", true), "a chunk ending exactly at the end is the last");
  assert.deepEqual(await read(8, 4), data("89", true));
  assert.deepEqual(await read(10, 4), data("", true));
  assert.deepEqual(await read(25, 4), data("", true), "an offset past the end reads nothing");
  assert.equal(joined(await readInChunks(files, file, 3)), "0123456789");
});

test("a missing file is not found, and a folder is a failure saying so", async (t) => {
  const { files, folder } = setup(t);
  const missing = await files.read(path.join(folder, "gone.txt"), 0, 100);
  assert.deepEqual(missing.outcome, { type: "notFound" });
  assert.equal(missing.data.length, 0);

  const directory = await files.read(folder, 0, 100);
  assert.deepEqual(directory.outcome, { type: "failed", message: `${folder} is a folder, not a file.` });
  assert.equal(directory.data.length, 0);
});

test("an edit of a file that no longer holds the expected text is a conflict and changes nothing", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "a.txt");
  fs.writeFileSync(file, "changed by someone\n");
  const outcome = await files.edit({
    path: file,
    expected: "original\n",
    result: "proposed\n",
    edits: [{ start: 0, end: 9, text: "proposed\n" }],
  });
  assert.deepEqual(outcome, { type: "conflict" });
  assert.equal(fs.readFileSync(file, "utf8"), "changed by someone\n");
  assert.equal(appliedEdits.length, 0);

  // Unsaved edits in an open editor count: the disk still holding `expected` is not enough.
  fs.writeFileSync(file, "original\n");
  openDocument(file, "original, then typing\n", { dirty: true });
  assert.deepEqual(
    await files.edit({ path: file, expected: "original\n", result: "proposed\n", edits: [] }),
    { type: "conflict" },
  );
  assert.equal(fs.readFileSync(file, "utf8"), "original\n");

  // A file expected not to exist, but which does, is not replaced.
  assert.deepEqual(await files.edit({ path: file, expected: null, result: "new\n", edits: [] }), { type: "conflict" });
  assert.equal(appliedEdits.length, 0);
});

test("an edit creates a missing file, and deletes one", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "new.txt");
  assert.deepEqual(await files.edit({ path: file, expected: null, result: "fresh\r\nfile\n", edits: [] }), {
    type: "applied",
    saved: true,
  });
  assert.equal(fs.readFileSync(file, "utf8"), "fresh\r\nfile\n", "created with exactly these bytes");

  assert.deepEqual(await files.edit({ path: file, expected: "fresh\r\nfile\n", result: null, edits: [] }), {
    type: "applied",
    saved: true,
  });
  assert.equal(fs.existsSync(file), false);
  assert.equal(appliedEdits.length, 2, "both went through the workspace edit API");
});

test("an edit replaces ranges in the document and saves it", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "list.txt");
  fs.writeFileSync(file, "one\ntwo\nthree\nfour\n");
  const outcome = await files.edit({
    path: file,
    expected: "one\ntwo\nthree\nfour\n",
    result: "one\nTWO\nthree\n4\nfive\n",
    edits: [
      { start: 4, end: 8, text: "TWO\n" },
      { start: 14, end: 19, text: "4\nfive\n" },
    ],
  });
  assert.deepEqual(outcome, { type: "applied", saved: true });
  assert.equal(fs.readFileSync(file, "utf8"), "one\nTWO\nthree\n4\nfive\n");
  assert.equal(appliedEdits[0]?.entries.length, 2, "one replacement per edit, not the whole file");
  assert.equal(workspace.textDocuments[0]?.isDirty, false);
});

test("an edit of a document with unsaved edits stays unsaved", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "draft.txt");
  fs.writeFileSync(file, "saved\n");
  const document = openDocument(file, "typed\nmore\n", { dirty: true });
  const outcome = await files.edit({
    path: file,
    expected: "typed\nmore\n",
    result: "typed\nMORE\n",
    edits: [{ start: 6, end: 11, text: "MORE\n" }],
  });
  assert.deepEqual(outcome, { type: "applied", saved: false });
  assert.equal(document.getText(), "typed\nMORE\n");
  assert.equal(document.isDirty, true);
  assert.equal(fs.readFileSync(file, "utf8"), "saved\n", "the person's draft is theirs to save");
});

test("the file gets exactly the result even where the editor would change its line endings", async (t) => {
  const { files, folder, lines } = setup(t);
  // A CRLF document gives the inserted LF its own CRLF.
  const crlf = path.join(folder, "crlf.txt");
  fs.writeFileSync(crlf, "one\r\ntwo\r\n");
  const outcome = await files.edit({
    path: crlf,
    expected: "one\r\ntwo\r\n",
    result: "one\r\nTWO\nthree\n",
    edits: [{ start: 5, end: 10, text: "TWO\nthree\n" }],
  });
  assert.deepEqual(outcome, { type: "applied", saved: true });
  assert.equal(fs.readFileSync(crlf, "utf8"), "one\r\nTWO\nthree\n");

  // A file with mixed line endings reads differently once open; the disk is what was expected.
  const mixed = path.join(folder, "mixed.txt");
  fs.writeFileSync(mixed, "a\r\nb\nc\r\n");
  assert.deepEqual(
    await files.edit({ path: mixed, expected: "a\r\nb\nc\r\n", result: "a\r\nB\nc\r\n", edits: [{ start: 3, end: 5, text: "B\n" }] }),
    { type: "applied", saved: true },
  );
  assert.equal(fs.readFileSync(mixed, "utf8"), "a\r\nB\nc\r\n");
  assert.equal(lines.filter((line) => line.level === "debug").length, 2, "each exact write is logged");
});

test("edits of one file run in the order asked, each checking what the previous left", async (t) => {
  const { files, folder } = setup(t);
  const file = path.join(folder, "counter.txt");
  fs.writeFileSync(file, "1\n");
  const step = (from: string, to: string) =>
    files.edit({ path: file, expected: from, result: to, edits: [{ start: 0, end: from.length, text: to }] });
  const outcomes = await Promise.all([step("1\n", "2\n"), step("2\n", "3\n"), step("1\n", "9\n")]);
  assert.deepEqual(outcomes, [
    { type: "applied", saved: true },
    { type: "applied", saved: true },
    { type: "conflict" },
  ]);
  assert.equal(fs.readFileSync(file, "utf8"), "3\n");
});
