// Reads Tether's settings, shapes them into the engine's wire types, and tells the engine when
// they change.
//
// Nothing here decides what a profile or a rule means: that is the engine's job. `tether.agents`
// goes through exactly as the person wrote it (the engine reads each entry, drops those that are
// not agent profiles with a warning naming each, and merges the rest with the built-in agents),
// and so do the permission rules (the engine checks each one, shows the person what is wrong with
// the ones it cannot use, and writes them back untouched when it saves the workspace's rules).
// Only settings whose shape the wire fixes (the default mode, the rules being a list) are checked
// here, so that the engine's configuration can be built at all.

import * as path from "node:path";

import * as vscode from "vscode";

import type { FoundAgent } from "./agents";
import type { AgentProfile, ClaudeCliSettings, HostCommand, Mode, PermissionSettings } from "./generated/protocol";
import { MODES as GENERATED_MODES } from "./generated/protocol";

/** The settings the engine is configured with, plus what was wrong with them. */
export interface AgentSettings {
  /** The `tether.agents` setting as written (the engine reads it), `null` when not set. */
  agents: unknown;
  defaultProfile: string | null;
  permissions: PermissionSettings;
  /** `tether.claudeCode.*`: how the Claude CLI is run. */
  claudeCli: ClaudeCliSettings;
  /** The `tether.mcpServers` setting as the person wrote it in their user settings (the engine reads it), `null` when not set. */
  mcpServers: unknown;
  /** One sentence per setting (or `tether.agents` entry) that was ignored. */
  problems: string[];
}

/** The modes the setting may name, as tether-core defines them. */
const MODES: readonly Mode[] = GENERATED_MODES.map((choice) => choice.mode);

/** The settings whose change the engine hears about through `configure`. */
const ENGINE_SETTINGS = ["tether.agents", "tether.defaultAgent", "tether.permissions", "tether.claudeCode", "tether.mcpServers"];

/** The settings tetherd is started with; a change waits for the next start. */
const SIDECAR_SETTINGS = ["tether.tetherdPath", "tether.sidecarGraceSeconds"];

/** The settings that only take effect when tetherd is started, i.e. at activation. */
export interface SidecarSettings {
  /** The `tether.tetherdPath` override, or undefined to use the bundled binary. */
  tetherdPath: string | undefined;
  graceSeconds: number;
}

const DEFAULT_GRACE_SECONDS = 30;

export function readAgentSettings(): AgentSettings {
  const configuration = vscode.workspace.getConfiguration("tether");
  const agents: unknown = configuration.get("agents") ?? null;
  const problems: string[] = [];
  const rawDefault: unknown = configuration.get("defaultAgent");
  const defaultProfile = typeof rawDefault === "string" && rawDefault.trim() !== "" ? rawDefault.trim() : null;
  const permissions = readPermissions(configuration, problems);
  // A server's command is a program the agent runs for Tether: only the person's own value
  // counts, never a workspace's (which a repository can commit).
  const inspectedServers = configuration.inspect<unknown>("mcpServers");
  const mcpServers: unknown = inspectedServers?.globalValue ?? null;
  if (inspectedServers?.workspaceValue !== undefined || inspectedServers?.workspaceFolderValue !== undefined) {
    problems.push("tether.mcpServers in a workspace's settings is not used: MCP servers are set in your user settings.");
  }
  return { agents, defaultProfile, permissions, claudeCli: readClaudeCli(configuration, problems), mcpServers, problems };
}

const DEFAULT_IDLE_MINUTES = 30;

/** `tether.claudeCode.*`; a setting of the wrong shape is reported and its default used. */
function readClaudeCli(configuration: vscode.WorkspaceConfiguration, problems: string[]): ClaudeCliSettings {
  const rawMode: unknown = configuration.get("claudeCode.processMode");
  if (rawMode !== undefined && rawMode !== null && rawMode !== "oneshot" && rawMode !== "persistent") {
    problems.push('tether.claudeCode.processMode must be "oneshot" or "persistent"; "oneshot" is used.');
  }
  const rawIdle: unknown = configuration.get("claudeCode.idleTimeoutMinutes");
  let idleTimeoutMinutes = DEFAULT_IDLE_MINUTES;
  if (typeof rawIdle === "number" && Number.isInteger(rawIdle) && rawIdle >= 1) {
    idleTimeoutMinutes = rawIdle;
  } else if (rawIdle !== undefined && rawIdle !== null) {
    problems.push(`tether.claudeCode.idleTimeoutMinutes must be a whole number of minutes, 1 or more; ${DEFAULT_IDLE_MINUTES} is used.`);
  }
  return { persistent: rawMode === "persistent", idleTimeoutMinutes };
}

/** `tether.permissions.*`; a setting of the wrong shape is reported and its default used. */
function readPermissions(configuration: vscode.WorkspaceConfiguration, problems: string[]): PermissionSettings {
  const rawMode: unknown = configuration.get("permissions.defaultMode");
  let defaultMode: Mode = "ask";
  if (MODES.includes(rawMode as Mode)) {
    defaultMode = rawMode as Mode;
  } else if (rawMode !== undefined && rawMode !== null) {
    problems.push(`tether.permissions.defaultMode must be one of ${MODES.join(", ")}; "ask" is used.`);
  }
  // Rules belong to a workspace: only the workspace's own value is read. Merged with the user's
  // settings, rules of every project would count as this one's, and the first save from the
  // Rules panel would copy them into this workspace's settings file.
  const inspected = configuration.inspect<unknown>("permissions.rules");
  const rawRules: unknown = inspected?.workspaceValue;
  if (Array.isArray(inspected?.globalValue) && inspected.globalValue.length > 0) {
    problems.push(
      "tether.permissions.rules in your user settings are not used: rules belong to a workspace " +
        "(its settings, or the Rules panel in the chat).",
    );
  }
  let rules: unknown[] = [];
  if (Array.isArray(rawRules)) {
    rules = rawRules;
  } else if (rawRules !== undefined && rawRules !== null) {
    problems.push("tether.permissions.rules must be an array of rules; it was ignored.");
  }
  return { defaultMode, rules };
}

/** The built-in agents as the engine's configuration has them: their profiles, and which are missing. */
export function builtinsOf(builtins: readonly FoundAgent[]): { builtinProfiles: AgentProfile[]; missingBuiltins: string[] } {
  return {
    builtinProfiles: builtins.map((found) => found.profile),
    missingBuiltins: builtins.filter((found) => !found.found).map((found) => found.agent.name),
  };
}

/**
 * The `configure` command that tells the engine about the current settings and the built-in
 * agents (agents.ts), which a `tether.agents` profile of the same name replaces, with the ones
 * not found on this machine.
 */
export function configureCommand(settings: AgentSettings, builtins: readonly FoundAgent[] = []): HostCommand {
  return {
    type: "configure",
    agents: settings.agents,
    ...builtinsOf(builtins),
    defaultProfile: settings.defaultProfile,
    permissions: settings.permissions,
    claudeCli: settings.claudeCli,
    mcpServers: settings.mcpServers,
  };
}

/**
 * The workspace's `.tether` folder, where tetherd keeps sessions and audit logs: in the first
 * workspace folder (the one sessions run in), or null when no folder is open.
 */
export function workspaceTetherDir(): string | null {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder === undefined ? null : path.join(folder.uri.fsPath, ".tether");
}

/**
 * Sends `configure` (with the built-in agents as `builtins` finds them now) whenever a setting the
 * engine uses changes (including when the engine itself
 * had the workspace's rules saved: it expects them back this way), and reports what is wrong
 * with the new settings.
 */
export function watchSettings(
  configure: (command: HostCommand) => void,
  log: vscode.LogOutputChannel,
  builtins: () => readonly FoundAgent[] = () => [],
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((event) => {
    if (ENGINE_SETTINGS.some((section) => event.affectsConfiguration(section))) {
      const settings = readAgentSettings();
      reportProblems(settings, log);
      configure(configureCommand(settings, builtins()));
    }
    if (SIDECAR_SETTINGS.some((section) => event.affectsConfiguration(section))) {
      log.info("The tetherd settings take effect the next time tetherd starts (after a window reload).");
    }
  });
}

/** Logs each problem and shows them together, once per reading of the settings. */
export function reportProblems(settings: AgentSettings, log: vscode.LogOutputChannel): void {
  if (settings.problems.length === 0) {
    return;
  }
  for (const problem of settings.problems) {
    log.warn(problem);
  }
  void vscode.window.showWarningMessage(`Tether: ${settings.problems.join(" ")}`);
}

export function readSidecarSettings(): SidecarSettings {
  const configuration = vscode.workspace.getConfiguration("tether");
  const rawPath: unknown = configuration.get("tetherdPath");
  const rawGrace: unknown = configuration.get("sidecarGraceSeconds");
  return {
    tetherdPath: typeof rawPath === "string" && rawPath.trim() !== "" ? rawPath.trim() : undefined,
    graceSeconds:
      typeof rawGrace === "number" && Number.isFinite(rawGrace) && rawGrace >= 0
        ? Math.round(rawGrace)
        : DEFAULT_GRACE_SECONDS,
  };
}
