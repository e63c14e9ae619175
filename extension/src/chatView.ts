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
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly engineHost: EngineHost,
    private readonly deliver: (message: unknown) => void = (message) => engineHost.webviewMessage(message),
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    const webviewRoot = vscode.Uri.joinPath(this.extensionUri, "dist", "webview");
    view.webview.options = { enableScripts: true, localResourceRoots: [webviewRoot] };
    // Attach first, so that the webview's `ready` cannot arrive before its view is known.
    this.engineHost.attachView(view);
    const subscription = view.webview.onDidReceiveMessage((message: unknown) => {
      this.deliver(message);
    });
    view.onDidDispose(() => subscription.dispose());
    view.webview.html = chatHtml(view.webview, webviewRoot);
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
    view.webview.html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none';">
<title>Tether</title>
</head>
<body>
<div id="app"><p>Tether could not start: ${escapeHtml(this.failure)}</p><p>The Tether output channel has details.</p></div>
</body>
</html>`;
  }
}

function chatHtml(webview: vscode.Webview, webviewRoot: vscode.Uri): string {
  // A fresh nonce each time the page is built: only our own script tag may run.
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
<script nonce="${nonce}" src="${scriptUri.toString()}"></script>
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
