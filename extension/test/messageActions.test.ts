// The chat's code block actions as the host carries them out: Copy writes VS Code's clipboard,
// Insert at cursor replaces every selection of the editor the person used last (or says there is
// none), Open in new file opens an untitled document in the block's language when VS Code knows
// it, as plain text otherwise.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import type * as vscode from "vscode";

import { MessageActions } from "../src/messageActions";
import {
  Position,
  Range,
  TextDocument,
  Uri,
  clipboardWrites,
  resetWorkspace,
  shownMessages,
  untitledDocuments,
  window,
} from "./vscodeStub";

const log = { error: () => {}, warn: () => {}, info: () => {} } as unknown as vscode.LogOutputChannel;

beforeEach(() => {
  resetWorkspace();
  clipboardWrites.length = 0;
  untitledDocuments.length = 0;
  shownMessages.length = 0;
  window.activeTextEditor = undefined;
});

test("Copy writes the text to VS Code's clipboard", async () => {
  const actions = new MessageActions(log);
  await actions.copy("cargo test\n");
  assert.deepEqual(clipboardWrites, ["cargo test\n"]);
  actions.dispose();
});

test("Open in new file opens the code in its language, or as plain text in one VS Code does not know", async () => {
  const actions = new MessageActions(log);
  await actions.openUntitled("fn main() {}\n", "rust");
  await actions.openUntitled("+++\n", "brainfuck");
  await actions.openUntitled("words\n", null);
  assert.deepEqual(untitledDocuments, [
    { language: "rust", content: "fn main() {}\n" },
    { content: "+++\n" },
    { content: "words\n" },
  ]);
  actions.dispose();
});

test("Insert at cursor replaces every selection of the editor, as typed", async () => {
  const document = new TextDocument(Uri.file("/ws/a.rs"), "one two three");
  const replaced: Array<[number, number, string]> = [];
  const selections = [new Range(new Position(0, 0), new Position(0, 3)), new Range(new Position(0, 8), new Position(0, 8))];
  const editor = {
    document,
    selections,
    viewColumn: 1,
    edit(build: (edit: { replace(range: Range, text: string): void }) => void): Promise<boolean> {
      build({ replace: (range, text) => replaced.push([range.start.character, range.end.character, text]) });
      return Promise.resolve(true);
    },
  };
  window.activeTextEditor = editor as unknown as typeof window.activeTextEditor;
  const actions = new MessageActions(log);
  await actions.insert("$1 x");
  assert.deepEqual(replaced, [
    [0, 3, "$1 x"],
    [8, 8, "$1 x"],
  ]);
  assert.deepEqual(shownMessages, []);
  actions.dispose();
});

test("Insert at cursor with no editor open says to open one", async () => {
  const actions = new MessageActions(log);
  await actions.insert("x");
  assert.deepEqual(shownMessages, [
    { level: "information", text: "Open a file in an editor to insert the code at its cursor." },
  ]);
  actions.dispose();
});
