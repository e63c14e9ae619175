// What VS Code knows, in the wire's shape: Problems errors first (a cut list keeps the errors),
// definitions whichever form the language server gave them in, hover texts in every form, and
// outlines flattened with each symbol's container.

import assert from "node:assert/strict";
import { test } from "node:test";

import type * as vscode from "vscode";

import { diagnosticsOf, hoverTexts, locationsOf, symbolsOf } from "../src/editorQueries";
import { Position, Range, Uri } from "./vscodeStub";

const range = (line: number, start: number, end: number) => new Range(new Position(line, start), new Position(line, end));

test("problems come errors first, with their code and source, and a list cut at the limit keeps the errors", () => {
  const file = Uri.file("/ws/a.ts") as unknown as vscode.Uri;
  const diagnostics = [
    { range: range(4, 0, 3), message: "unused", severity: 1, source: "ts", code: 6133 },
    { range: range(1, 2, 5), message: "no such name", severity: 0, source: "ts", code: { value: 2304, target: file } },
    { range: range(7, 0, 1), message: "style", severity: 3 },
  ] as unknown as vscode.Diagnostic[];
  const untitled = { scheme: "untitled", fsPath: "Untitled-1" } as unknown as vscode.Uri;
  const listed = diagnosticsOf([[file, diagnostics], [untitled, diagnostics]], 2);
  assert.deepEqual(listed, [
    {
      path: "/ws/a.ts",
      range: { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } },
      severity: "error",
      message: "no such name",
      source: "ts",
      code: "2304",
    },
    {
      path: "/ws/a.ts",
      range: { start: { line: 4, character: 0 }, end: { line: 4, character: 3 } },
      severity: "warning",
      message: "unused",
      source: "ts",
      code: "6133",
    },
  ]);
});

test("a definition is where it is named, whether it came as a location or a link", () => {
  const found = [
    { uri: Uri.file("/ws/a.ts"), range: range(3, 9, 14) },
    { targetUri: Uri.file("/ws/b.ts"), targetRange: range(10, 0, 40), targetSelectionRange: range(10, 16, 21) },
    { targetUri: Uri.file("/ws/c.ts"), targetRange: range(2, 0, 9) },
  ] as unknown as vscode.LocationLink[];
  assert.deepEqual(
    locationsOf(found).map((location) => `${location.path}:${location.range.start.line}:${location.range.start.character}`),
    ["/ws/a.ts:3:9", "/ws/b.ts:10:16", "/ws/c.ts:2:0"],
  );
});

test("hover texts are Markdown whatever form they came in", () => {
  const hovers = [
    { contents: [{ value: "**greet**(name: string)" }, "plain words", { language: "typescript", value: "function greet(): void" }] },
  ] as unknown as vscode.Hover[];
  assert.deepEqual(hoverTexts(hovers), [
    "**greet**(name: string)",
    "plain words",
    "```typescript\nfunction greet(): void\n```",
  ]);
});

test("an outline is flattened with each symbol's container, and a workspace symbol keeps its own file", () => {
  const outline = [
    {
      name: "Greeter",
      kind: 4,
      range: range(0, 0, 1),
      children: [{ name: "greet", kind: 5, range: range(1, 2, 9), children: [] }],
    },
    { name: "main", kind: 11, range: range(5, 0, 4), children: [] },
  ] as unknown as vscode.DocumentSymbol[];
  assert.deepEqual(
    symbolsOf(outline, "/ws/a.ts", 10).map((symbol) => `${symbol.kind} ${symbol.name} in ${symbol.container} at ${symbol.path}:${symbol.range.start.line}`),
    ["Class Greeter in null at /ws/a.ts:0", "Method greet in Greeter at /ws/a.ts:1", "Function main in null at /ws/a.ts:5"],
  );
  assert.equal(symbolsOf(outline, "/ws/a.ts", 2).length, 2, "the limit holds inside children too");
  const found = [
    { name: "greet", kind: 11, containerName: "", location: { uri: Uri.file("/ws/b.ts"), range: range(2, 0, 5) } },
  ] as unknown as vscode.SymbolInformation[];
  assert.deepEqual(symbolsOf(found, "", 10), [
    { name: "greet", kind: "Function", path: "/ws/b.ts", range: { start: { line: 2, character: 0 }, end: { line: 2, character: 5 } }, container: null },
  ]);
});
