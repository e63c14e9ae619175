// The secrets `tether.mcpServers` names (`${secret:<name>}` in a header or an environment
// value), kept in VS Code's SecretStorage so that a token never sits in a settings file. The
// command "Tether: Set MCP Server Secret" asks for a name and a value; at start, and after each
// change, every kept secret is handed to the engine (`mcpSecrets`), which fills them in.
// SecretStorage cannot list its keys, so the names (not the values) are remembered in the
// extension's global state.

import * as vscode from "vscode";

import type { HostCommand } from "./generated/protocol";

type Send = (command: HostCommand) => void;

/** Where the names of the kept secrets are remembered. */
const NAMES_KEY = "tether.mcpSecretNames";

/** A secret's name: what `${secret:<name>}` may hold. */
const NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;

export class McpSecrets {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
    private readonly send: Send,
  ) {}

  /** Hands the engine every kept secret. */
  async sendKept(): Promise<void> {
    const values: Record<string, string> = {};
    for (const name of this.names()) {
      const value = await this.secrets.get(secretKey(name));
      if (value !== undefined) values[name] = value;
    }
    this.send({ type: "mcpSecrets", values });
  }

  /** The command: asks for a name and a value, keeps them, and tells the engine. */
  async set(): Promise<void> {
    const name = await vscode.window.showInputBox({
      title: "Tether: Set MCP Server Secret",
      prompt: "The secret's name, as tether.mcpServers uses it: ${secret:<name>}",
      placeHolder: "github-token",
      ignoreFocusOut: true,
      validateInput: (text) => (NAME_PATTERN.test(text) ? null : "Letters, digits, '_', '.' and '-' only"),
    });
    if (name === undefined || !NAME_PATTERN.test(name)) return;
    const value = await vscode.window.showInputBox({
      title: `Tether: the value of ${name}`,
      prompt: "Kept in VS Code's secret storage; never written to a settings file or a log",
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return;
    await this.secrets.store(secretKey(name), value);
    const names = this.names();
    if (!names.includes(name)) {
      await this.state.update(NAMES_KEY, [...names, name]);
    }
    await this.sendKept();
  }

  private names(): string[] {
    const names = this.state.get<unknown>(NAMES_KEY);
    return Array.isArray(names) ? names.filter((name): name is string => typeof name === "string") : [];
  }
}

function secretKey(name: string): string {
  return `tether.mcpSecret/${name}`;
}
