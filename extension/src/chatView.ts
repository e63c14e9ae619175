// The `tether.chat` webview view: loads the chat UI (dist/webview) under a strict Content
// Security Policy and connects it to the engine host. The webview's messages go to `deliver`
// (the engine, untouched, unless the extension puts something in between); what the webview shows
// comes from the engine's `postWebview` actions.
//
// `retainContextWhenHidden` is deliberately off: a webview that is shown again reloads and asks
// the engine for a snapshot, which is cheaper than keeping a hidden page alive.

import { randomBytes } from "node:crypto";

import * as vscode from "vscode";

import type { EngineHost } from "./engineHost";

export const CHAT_VIEW_ID = "tether.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  /** Set when the engine is gone for good: every page from then on only says why. */
  private failure: string | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly engineHost: EngineHost,
    private readonly deliver: (message: unknown) => void = (message) => engineHost.webviewMessage(message),
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    if (this.failure !== undefined) {
      view.webview.options = { enableScripts: false, localResourceRoots: [] };
      view.webview.html = failedHtml(this.failure);
      return;
    }
    const webviewRoot = vscode.Uri.joinPath(this.extensionUri, "dist", "webview");
    view.webview.options = { enableScripts: true, localResourceRoots: [webviewRoot] };
    // Attach first, so that the webview's `ready` cannot arrive before its view is known.
    this.engineHost.attachView(view);
    const subscription = view.webview.onDidReceiveMessage((message: unknown) => {
      this.deliver(message);
    });
    this.view = view;
    view.onDidDispose(() => {
      subscription.dispose();
      if (this.view === view) {
        this.view = undefined;
      }
    });
    view.webview.html = chatHtml(view.webview, webviewRoot);
  }

  /**
   * Loads the chat page again (a new engine replaced the one that panicked): the new page says
   * `ready`, and the engine sends it the whole session.
   */
  reload(): void {
    const view = this.view;
    if (view !== undefined) {
      // A fresh nonce makes the page differ, so the webview always loads it again.
      view.webview.html = chatHtml(view.webview, vscode.Uri.joinPath(this.extensionUri, "dist", "webview"));
    }
  }

  /** Replaces the chat with `failure` (the engine is gone for good); no scripts run any more. */
  fail(failure: string): void {
    this.failure = failure;
    if (this.view !== undefined) {
      this.view.webview.options = { enableScripts: false, localResourceRoots: [] };
      this.view.webview.html = failedHtml(failure);
    }
  }
}

/**
 * Shown instead of the chat when Tether could not start (the engine failed to load), so the view
 * says why rather than staying blank. No scripts run in it.
 */
export class FailedChatViewProvider implements vscode.WebviewViewProvider {
  constructor(private readonly failure: string) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    view.webview.options = { enableScripts: false, localResourceRoots: [] };
    view.webview.html = failedHtml(`Tether could not start: ${this.failure}`);
  }
}

/** A page that only says `failure` and where the details are. */
function failedHtml(failure: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none';">
<title>Tether</title>
</head>
<body>
<div id="app"><p>${escapeHtml(failure)}</p><p>The Tether output channel has details.</p></div>
</body>
</html>`;
}

function chatHtml(webview: vscode.Webview, webviewRoot: vscode.Uri): string {
  // A fresh nonce each time the page is built: only our own script tag may run. It is a module
  // (main.js loads the highlighter's chunks with `import()`), and what a module imports inherits
  // its nonce, so the chunks need no other permission.
  const nonce = randomBytes(16).toString("hex");
  const scriptUri = webview.asWebviewUri(vscode.Uri.joinPath(webviewRoot, "main.js"));
  const styleUri = webview.asWebviewUri(vscode.Uri.joinPath(webviewRoot, "main.css"));
  const source = webview.cspSource;
  const csp = [
    "default-src 'none'",
    `style-src ${source}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${source} data:`,
    `font-src ${source}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styleUri.toString()}">
<title>Tether</title>
</head>
<body>
<div id="app"></div>
<script type="module" nonce="${nonce}" src="${scriptUri.toString()}"></script>
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
