// What the composer's "@" list is made of: the workspace's files and the selection of the editor
// the person used last. The engine asks (`listWorkspaceFiles`) when an "@" is typed and ranks
// the answer itself; "Tether: Mention Selection" sends the selection on its own.
//
// The chat view takes the focus when the person types in it, so the editor they came from is
// no longer `activeTextEditor`: the last text editor is remembered instead.

import * as vscode from "vscode";

import type { EditorSelection } from "./generated/protocol";

/** The most files listed: beyond this a workspace is a monorepo the person narrows by typing. */
export const MAX_LISTED_FILES = 20_000;

/** The most text of a selection a mention carries (the engine embeds it in the prompt). */
export const MAX_SELECTION_CHARS = 512 * 1024;

export class WorkspaceMentions implements vscode.Disposable {
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly subscription: vscode.Disposable;

  constructor() {
    this.subscription = vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor !== undefined) this.lastEditor = editor;
    });
  }

  /** The workspace's files (absolute paths) without what the person excluded from search. */
  async files(): Promise<string[]> {
    const found = await vscode.workspace.findFiles("**/*", excludeGlob(), MAX_LISTED_FILES);
    return found.filter((uri) => uri.scheme === "file").map((uri) => uri.fsPath);
  }

  /** The last text editor's selection, if it has one that is not empty. */
  selection(): EditorSelection | undefined {
    const editor = this.lastEditor;
    if (editor === undefined || editor.document.isClosed || editor.selection.isEmpty) return undefined;
    return selectionOf(editor, editor.selection);
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

/**
 * The selection of `editor` as a mention: the selected lines, or the caret's line when nothing
 * is selected ("Tether: Mention Selection" with only a caret mentions that line). A selection
 * that ends at the start of a line does not include that line, as in VS Code's own commands.
 */
export function selectionOf(editor: vscode.TextEditor, selection: vscode.Selection): EditorSelection | undefined {
  if (editor.document.uri.scheme !== "file") return undefined;
  const startLine = selection.start.line;
  let endLine = selection.end.line;
  if (!selection.isEmpty && selection.end.character === 0 && endLine > startLine) endLine -= 1;
  const range = selection.isEmpty
    ? editor.document.lineAt(startLine).range
    : new vscode.Range(selection.start, selection.end);
  return {
    path: editor.document.uri.fsPath,
    startLine: startLine + 1,
    endLine: endLine + 1,
    text: editor.document.getText(range).slice(0, MAX_SELECTION_CHARS),
  };
}

/**
 * One glob of everything `files.exclude` and `search.exclude` turn on (passing a pattern to
 * `findFiles` replaces its default, `files.exclude`, so both are named). Conditional entries
 * (`{ "when": ... }`) count as excluded.
 */
function excludeGlob(): string {
  const patterns = new Set<string>();
  for (const section of ["files", "search"]) {
    const excluded = vscode.workspace.getConfiguration(section).get<Record<string, unknown>>("exclude") ?? {};
    for (const [pattern, on] of Object.entries(excluded)) {
      if (on !== false) patterns.add(pattern);
    }
  }
  // Never list what Tether itself keeps in the workspace.
  patterns.add("**/.tether/**");
  return `{${[...patterns].join(",")}}`;
}
