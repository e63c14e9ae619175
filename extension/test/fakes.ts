// Fakes shared by the unit tests: a log channel that remembers its lines (and being shown), a webview view that
// remembers what was posted to it and which badge it shows, and a temporary folder for files.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { TestContext } from "node:test";

import type * as vscode from "vscode";

export interface LoggedLine {
  level: "trace" | "debug" | "info" | "warn" | "error";
  text: string;
}

/** A log channel that keeps its lines, and each `show(preserveFocus)` asked of it. */
export function recordingLog(): { log: vscode.LogOutputChannel; lines: LoggedLine[]; shown: Array<boolean | undefined> } {
  const lines: LoggedLine[] = [];
  const shown: Array<boolean | undefined> = [];
  const record = (level: LoggedLine["level"]) => (text: string) => {
    lines.push({ level, text });
  };
  const log = {
    trace: record("trace"),
    debug: record("debug"),
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
    show: (preserveFocus?: boolean) => shown.push(preserveFocus),
  };
  return { log: log as unknown as vscode.LogOutputChannel, lines, shown };
}

export interface FakeView {
  view: vscode.WebviewView;
  posted: unknown[];
  dispose(): void;
}

export function fakeView(): FakeView {
  const posted: unknown[] = [];
  const disposeListeners: Array<() => void> = [];
  const view = {
    badge: undefined as vscode.ViewBadge | undefined,
    webview: {
      postMessage(message: unknown): Promise<boolean> {
        // Read as the webview reads it (webview/src/host-message.ts): the host posts JSON bytes.
        if (!(message instanceof Uint8Array)) {
          throw new Error(`posted ${JSON.stringify(message)}, not the JSON bytes the webview reads`);
        }
        posted.push(JSON.parse(new TextDecoder().decode(message)));
        return Promise.resolve(true);
      },
    },
    onDidDispose(listener: () => void) {
      disposeListeners.push(listener);
      return { dispose() {} };
    },
  };
  return {
    view: view as unknown as vscode.WebviewView,
    posted,
    dispose: () => disposeListeners.forEach((listener) => listener()),
  };
}

/** Resolves once `condition` holds, polling; rejects after a generous timeout. */
export async function eventually(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A fresh temporary folder, removed after the test. */
export function tempFolder(t: TestContext): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "tether-test-"));
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }));
  return folder;
}
