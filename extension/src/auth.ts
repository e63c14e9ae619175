// Signing in to an agent. The engine says when an agent needs it and which methods the agent
// offers (`askAuthentication`); this asks the person, with VS Code's own UI: a quick pick of the
// methods, then a password box per variable for a key, or a terminal running the agent's login.
// Keys go to VS Code's SecretStorage and to the engine (`authenticate`), which restarts the agent
// with them in its environment; they are never written to the settings or a log.
//
// At start, the keys kept for each agent are handed to the engine (`agentSecrets`) so that a key
// given once is used on every start. SecretStorage cannot list its keys, so the names of the
// variables kept per agent (not their values) are remembered in the extension's global state.

import * as vscode from "vscode";

import type { AuthMethodView, HostCommand } from "./generated/protocol";

/** What the engine host asks of the sign-in UI. */
export interface AuthActions {
  /** The agent of profile `agent` needs the person to sign in with one of `methods`. */
  ask(agent: string, methods: AuthMethodView[]): void;
}

type Send = (command: HostCommand) => void;

export class AgentSignIn implements AuthActions {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
    private readonly send: Send,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  ask(agent: string, methods: AuthMethodView[]): void {
    if (!vscode.workspace.isTrusted) {
      // No agent runs in an untrusted workspace, so none can ask; a terminal login runs a
      // program the agent names, which must not happen there either way.
      this.log.error(`Not signing in to ${agent}: the workspace is not trusted.`);
      return;
    }
    this.signIn(agent, methods).catch((error: unknown) => {
      this.log.error(`Signing in to ${agent} failed: ${String(error)}`);
    });
  }

  /** Hands the engine the keys kept for each of `profiles`, so their agents start with them. */
  async sendKeptSecrets(profiles: readonly string[]): Promise<void> {
    for (const profile of profiles) {
      const env: Record<string, string> = {};
      for (const name of this.keptNames(profile)) {
        const value = await this.secrets.get(secretKey(profile, name));
        if (value !== undefined) env[name] = value;
      }
      if (Object.keys(env).length > 0) {
        this.send({ type: "agentSecrets", profile, env });
      }
    }
  }

  private async signIn(agent: string, methods: AuthMethodView[]): Promise<void> {
    const picked = await vscode.window.showQuickPick(
      methods.map((method) => ({
        label: method.name,
        description: describeKind(method),
        ...(method.description === null ? {} : { detail: method.description }),
        method,
      })),
      { title: `Sign in to ${agent}`, placeHolder: "Choose how to sign in", ignoreFocusOut: true },
    );
    if (picked === undefined) {
      return; // The session waits; the header offers Sign in, and the next prompt asks again too.
    }
    const { method } = picked;
    switch (method.kind.type) {
      case "agent":
        this.send({ type: "authenticate", methodId: method.id, env: {} });
        return;
      case "envVar": {
        const env: Record<string, string> = {};
        for (const variable of method.kind.vars) {
          const value = await vscode.window.showInputBox({
            title: `Sign in to ${agent}`,
            prompt: `${variable.label ?? variable.name} (kept in VS Code's secret storage)`,
            password: true,
            ignoreFocusOut: true,
            validateInput: (text) => (text.trim() === "" && !variable.optional ? "Enter a value" : null),
          });
          if (value === undefined) {
            return; // Dismissed: nothing is kept, nothing is sent.
          }
          if (value !== "") env[variable.name] = value;
        }
        await this.keep(agent, env);
        this.send({ type: "authenticate", methodId: method.id, env });
        return;
      }
      case "terminal": {
        const terminal = vscode.window.createTerminal({
          name: `Sign in: ${agent}`,
          ...loginProcess(method.kind, process.execPath),
        });
        terminal.show();
        const closed = vscode.window.onDidCloseTerminal((which) => {
          if (which !== terminal) return;
          closed.dispose();
          if (which.exitStatus?.code === 0) {
            this.send({ type: "authenticate", methodId: method.id, env: {} });
          } else {
            void vscode.window.showWarningMessage(
              `The sign-in to ${agent} did not finish (exit ${which.exitStatus?.code ?? "unknown"}). Use Sign in in the chat header to try again.`,
            );
          }
        });
        return;
      }
    }
  }

  private async keep(profile: string, env: Record<string, string>): Promise<void> {
    const names = new Set(this.keptNames(profile));
    for (const [name, value] of Object.entries(env)) {
      await this.secrets.store(secretKey(profile, name), value);
      names.add(name);
    }
    await this.state.update(namesKey(profile), [...names].sort());
  }

  private keptNames(profile: string): string[] {
    const names = this.state.get<unknown>(namesKey(profile));
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === "string") : [];
  }
}

/**
 * The process a terminal login runs. A login that names `node` (Claude's adapter runs Claude Code's
 * `cli.js` so) runs under the extension host's own Node, `nodePath`, as the JavaScript agents do
 * (see agents.ts): PATH may have no Node. In VS Code desktop that is Electron, which
 * ELECTRON_RUN_AS_NODE makes a plain Node.
 */
export function loginProcess(
  login: { command: string; args: string[]; env: Record<string, string> },
  nodePath: string,
): { shellPath: string; shellArgs: string[]; env: Record<string, string> } {
  if (login.command === "node") {
    return { shellPath: nodePath, shellArgs: login.args, env: { ...login.env, ELECTRON_RUN_AS_NODE: "1" } };
  }
  return { shellPath: login.command, shellArgs: login.args, env: login.env };
}

function describeKind(method: AuthMethodView): string {
  switch (method.kind.type) {
    case "envVar":
      return `key: ${method.kind.vars.map((variable) => variable.name).join(", ")}`;
    case "terminal":
      return "log in in a terminal";
    case "agent":
      return "the agent signs in";
  }
}

function secretKey(profile: string, variable: string): string {
  return `tether.agentSecret/${profile}/${variable}`;
}

function namesKey(profile: string): string {
  return `tether.agentSecretNames/${profile}`;
}
