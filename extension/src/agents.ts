// The agents Tether offers without any setting (Claude Code, Codex, Gemini CLI): where each one's
// command is found, and installing a missing one with npm into the extension's storage.
//
// Finding a program is host work: the engine gets plain profiles (name, command, args, env) and
// cannot tell a built-in from a `tether.agents` entry. An agent installed by "Install" lives in
// `<globalStorage>/agents/node_modules` and is looked for there first, then on PATH. A JavaScript
// agent from that install runs under the extension host's own Node (`process.execPath`, which in
// VS Code desktop is Electron, hence ELECTRON_RUN_AS_NODE), so the person needs no Node on PATH.

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

import * as vscode from "vscode";

import { describeError } from "./errors";
import type { AgentProfile, AgentProtocol } from "./generated/protocol";

/** An agent Tether knows how to find and install. */
export interface BuiltinAgent {
  name: string;
  /** The npm package "Install" installs. */
  packageName: string;
  /**
   * How it runs from an install: the package's JavaScript `bin` entry of that name, or a native
   * binary (a path under `node_modules`).
   */
  installed: { bin: string } | { binary: string };
  /** The program looked for on PATH when it is not installed in the extension's storage. */
  pathCommand: string;
  args: string[];
  /** Added to the agent's environment; an empty value removes the variable. */
  env: Record<string, string>;
  /** What it speaks on its stdio. */
  protocol: AgentProtocol;
}

const EXE = process.platform === "win32" ? ".exe" : "";

export const BUILTIN_AGENTS: readonly BuiltinAgent[] = [
  {
    name: "Claude Code",
    packageName: "@zed-industries/claude-code-acp",
    installed: { bin: "claude-code-acp" },
    pathCommand: "claude-code-acp",
    args: [],
    // The Claude CLI refuses to run as root when IS_SANDBOX is set (as it is in some containers).
    env: { IS_SANDBOX: "" },
    protocol: "acp",
  },
  {
    // The `claude` CLI itself, driven over its stream-json and control protocol: no adapter.
    name: "Claude Code (direct)",
    packageName: "@anthropic-ai/claude-code",
    // A native binary in recent versions, a JavaScript file in older ones: `bin` finds either.
    installed: { bin: "claude" },
    pathCommand: "claude",
    args: [],
    env: { IS_SANDBOX: "" },
    protocol: "claude-cli",
  },
  {
    name: "Codex",
    packageName: "@zed-industries/codex-acp",
    // The package's JavaScript wrapper starts this binary and, when stopped, leaves it running:
    // the binary is run directly so that stopping the agent stops it.
    installed: {
      binary: `@zed-industries/codex-acp-${process.platform}-${process.arch}/bin/codex-acp${EXE}`,
    },
    pathCommand: "codex-acp",
    args: [],
    env: {},
    protocol: "acp",
  },
  {
    name: "Gemini CLI",
    packageName: "@google/gemini-cli",
    installed: { bin: "gemini" },
    pathCommand: "gemini",
    args: ["--acp"],
    env: {},
    protocol: "acp",
  },
];

/** A built-in agent's profile as found on this machine. */
export interface FoundAgent {
  agent: BuiltinAgent;
  profile: AgentProfile;
  /** False when neither the extension's storage nor PATH has it: choosing it offers "Install". */
  found: boolean;
}

/** Where the built-ins are looked for. */
export interface AgentSearch {
  /** The npm prefix "Install" installs into: `<globalStorage>/agents`. */
  agentsDir: string;
  /** The PATH to search (`process.env.PATH`). */
  searchPath: string | undefined;
  /** The Node that runs a JavaScript agent from the install. */
  nodePath: string;
}

/** The extension's install folder for agents, under its global storage. */
export function agentsDir(globalStorage: string): string {
  return path.join(globalStorage, "agents");
}

/** Every built-in agent, with the command it runs with here. */
export function findBuiltinAgents(search: AgentSearch): FoundAgent[] {
  return BUILTIN_AGENTS.map((agent) => findAgent(agent, search));
}

function findAgent(agent: BuiltinAgent, search: AgentSearch): FoundAgent {
  const profile = (command: string, args: string[], env: Record<string, string>): AgentProfile => ({
    name: agent.name,
    command,
    args: [...args, ...agent.args],
    env: { ...agent.env, ...env },
    cwd: null,
    protocol: agent.protocol,
  });
  const nodeModules = path.join(search.agentsDir, "node_modules");
  if ("binary" in agent.installed) {
    const binary = path.join(nodeModules, agent.installed.binary);
    if (isExecutable(binary)) {
      return { agent, profile: profile(binary, [], {}), found: true };
    }
  } else {
    const script = packageBin(path.join(nodeModules, agent.packageName), agent.installed.bin);
    if (script !== undefined && isJavaScript(script)) {
      return { agent, profile: profile(search.nodePath, [script], { ELECTRON_RUN_AS_NODE: "1" }), found: true };
    }
    if (script !== undefined && isExecutable(script)) {
      return { agent, profile: profile(script, [], {}), found: true };
    }
  }
  const onPath = findOnPath(agent.pathCommand, search.searchPath);
  return { agent, profile: profile(onPath ?? agent.pathCommand, [], {}), found: onPath !== undefined };
}

/**
 * The built-in agents as the engine was last told of them. An agent installed from a terminal
 * while the window is open (or removed) changes what the engine should run and what its agent
 * picker says; `changed` tells the host to configure the engine again.
 */
export class BuiltinAgents {
  /** What the engine was last given, as compared: each agent's command, args and whether found. */
  private told: string | null = null;

  constructor(private readonly search: () => AgentSearch) {}

  /** Looks for every built-in now; what this returns is taken to be what the engine is told. */
  find(): FoundAgent[] {
    const found = findBuiltinAgents(this.search());
    this.told = shapeOf(found);
    return found;
  }

  /** Whether looking again finds other than what the engine was last told. */
  changed(): boolean {
    return this.told !== null && shapeOf(findBuiltinAgents(this.search())) !== this.told;
  }
}

function shapeOf(found: readonly FoundAgent[]): string {
  return JSON.stringify(found.map(({ profile, found }) => [profile.command, profile.args, found]));
}

/** Whether a package's `bin` file is JavaScript (run under Node) rather than a native binary. */
function isJavaScript(file: string): boolean {
  if (/\.(c|m)?js$/.test(file)) {
    return true;
  }
  try {
    const start = Buffer.alloc(64);
    const fd = fs.openSync(file, "r");
    try {
      fs.readSync(fd, start, 0, start.length, 0);
    } finally {
      fs.closeSync(fd);
    }
    return start.toString("latin1").startsWith("#!") && start.toString("latin1").includes("node");
  } catch {
    // Unreadable: not something to run under Node.
    return false;
  }
}

/** The file of the `bin` entry `name` of the package in `packageDir`, when it is there. */
function packageBin(packageDir: string, name: string): string | undefined {
  let manifest: unknown;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
  } catch {
    // Not installed (or a broken install, which "Install" repairs).
    return undefined;
  }
  const bin = (manifest as { bin?: unknown }).bin;
  const relative = typeof bin === "string" ? bin : typeof bin === "object" && bin !== null ? (bin as Record<string, unknown>)[name] : undefined;
  if (typeof relative !== "string") {
    return undefined;
  }
  const script = path.join(packageDir, relative);
  return fs.existsSync(script) ? script : undefined;
}

/** The first executable file named `command` in the folders of `searchPath`. */
function findOnPath(command: string, searchPath: string | undefined): string | undefined {
  const extensions = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
  for (const folder of (searchPath ?? "").split(path.delimiter)) {
    for (const extension of extensions) {
      const candidate = path.join(folder, command + extension);
      if (folder !== "" && isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Offers to install a built-in agent that was chosen and is not found (unless a `tether.agents`
 * profile of that name replaces it). "present": nothing to install; "installed": it is now (the
 * engine needs the new command); "missing": the person declined, or the install failed (told).
 */
export async function ensureAgentInstalled(
  name: string,
  search: AgentSearch,
  engineProfiles: readonly AgentProfile[],
  log: vscode.LogOutputChannel,
): Promise<"present" | "installed" | "missing"> {
  const found = findBuiltinAgents(search).find((candidate) => candidate.agent.name === name);
  // The engine runs the profile it has under that name: a `tether.agents` profile that replaced
  // the built-in one needs nothing installed.
  const replaced = engineProfiles.some((profile) => profile.name === name && profile.command !== found?.profile.command);
  if (found === undefined || found.found || replaced) {
    return "present";
  }
  if (!vscode.workspace.isTrusted) {
    // npm runs install scripts: nothing is installed from an untrusted workspace.
    return "missing";
  }
  const install = `Install ${name}`;
  const answer = await vscode.window.showInformationMessage(
    `${name} is not installed. Tether can install ${found.agent.packageName} with npm into its own storage.`,
    install,
  );
  if (answer !== install) {
    return "missing";
  }
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Installing ${name}` },
      (progress) => npmInstall(found.agent.packageName, search.agentsDir, log, (line) => progress.report({ message: line })),
    );
  } catch (error) {
    const failure = describeError(error);
    log.error(`Installing ${found.agent.packageName} failed: ${failure}`);
    void vscode.window.showErrorMessage(`Tether could not install ${name}: ${failure} (the Tether log has npm's output).`);
    return "missing";
  }
  const installed = findBuiltinAgents(search).find((candidate) => candidate.agent.name === name);
  if (installed?.found !== true) {
    const message = `npm installed ${found.agent.packageName}, but Tether does not find ${name} in ${search.agentsDir}.`;
    log.error(message);
    void vscode.window.showErrorMessage(`Tether: ${message}`);
    return "missing";
  }
  log.info(`Installed ${name}: ${installed.profile.command} ${installed.profile.args.join(" ")}`);
  return "installed";
}

/**
 * `npm install --prefix <agentsDir> <package>`, its output line by line into the log (and the
 * last line to `progress`); rejects with the exit status when npm fails.
 */
function npmInstall(
  packageName: string,
  agentsDirectory: string,
  log: vscode.LogOutputChannel,
  progress: (line: string) => void,
): Promise<void> {
  fs.mkdirSync(agentsDirectory, { recursive: true });
  const args = ["install", "--no-fund", "--no-audit", "--prefix", agentsDirectory, packageName];
  log.info(`npm ${args.join(" ")}`);
  return new Promise((resolve, reject) => {
    // npm is a script (npm.cmd) on Windows, which only a shell runs.
    const npm = spawn("npm", args, { shell: process.platform === "win32", stdio: ["ignore", "pipe", "pipe"] });
    const forward = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split(/\r?\n/)) {
        if (line.trim() !== "") {
          log.info(`npm: ${line}`);
          progress(line);
        }
      }
    };
    npm.stdout.on("data", forward);
    npm.stderr.on("data", forward);
    npm.on("error", (error) => reject(new Error(`npm could not be started (${describeError(error)}); is npm on PATH?`)));
    npm.on("close", (code, signal) => {
      if (code === 0) {
        resolve();
      } else {
        reject(new Error(`npm exited with ${signal ?? `status ${code}`}`));
      }
    });
  });
}
