// What the chat's messages ask of the editor: copy text (a code block, a whole message), insert
// a code block at the cursor, open a code block in a new untitled editor. The engine turns the
// webview's intents into the `writeClipboard`, `insertAtCursor` and `openUntitled` actions;
// this carries them out with VS Code's API.
//
// The person clicks in the chat to insert, so the chat has the focus and the editor they mean is
// no longer `activeTextEditor`: the last text editor is remembered instead.

import * as vscode from "vscode";

import { describeError } from "./errors";

export class MessageActions implements vscode.Disposable {
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.subscription = vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor !== undefined) this.lastEditor = editor;
    });
  }

  dispose(): void {
    this.subscription.dispose();
  }

  /** Puts `text` on the clipboard. Never rejects: a failure is logged and shown. */
  async copy(text: string): Promise<void> {
    try {
      await vscode.env.clipboard.writeText(text);
    } catch (error) {
      this.failed("copy to the clipboard", error);
    }
  }

  /**
   * Replaces the selections of the editor the person used last with `text` (as typed, not as a
   * snippet: `$1` in code stays `$1`). Never rejects.
   */
  async insert(text: string): Promise<void> {
    const editor = this.editor();
    if (editor === undefined) {
      void vscode.window.showInformationMessage("Open a file in an editor to insert the code at its cursor.");
      return;
    }
    try {
      const applied = await editor.edit((edit) => {
        for (const selection of editor.selections) edit.replace(selection, text);
      });
      if (!applied) throw new Error("the editor refused the edit");
      await vscode.window.showTextDocument(editor.document, editor.viewColumn);
    } catch (error) {
      this.failed("insert the code", error);
    }
  }

  /** Opens an untitled editor holding `content`, in `language` if VS Code knows it. Never rejects. */
  async openUntitled(content: string, language: string | null): Promise<void> {
    try {
      const known = language !== null && (await vscode.languages.getLanguages()).includes(language);
      const document = await vscode.workspace.openTextDocument(known ? { language, content } : { content });
      await vscode.window.showTextDocument(document);
    } catch (error) {
      this.failed("open the code in a new file", error);
    }
  }

  /** The last text editor that is still open. */
  private editor(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active !== undefined) return active;
    const last = this.lastEditor;
    if (last === undefined || last.document.isClosed) return undefined;
    // The same document may be shown by a newer editor object: prefer a visible one.
    return vscode.window.visibleTextEditors.find((editor) => editor.document === last.document) ?? last;
  }

  private failed(what: string, error: unknown): void {
    const message = `Tether could not ${what}: ${describeError(error)}`;
    this.log.error(message);
    void vscode.window.showErrorMessage(message);
  }
}
