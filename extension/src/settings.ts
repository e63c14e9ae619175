// Reads Tether's settings and shapes them into the engine's wire types.
//
// Settings are hand-written JSON, so an entry of `tether.agents` can be anything. The engine
// rejects a whole configuration that does not match its types, which would leave the person with
// no agents at all because of one typo; so entries that cannot be an agent profile are dropped
// here, each with a warning naming it, and the rest go through. Nothing here decides what a
// profile means: that is the engine's job.

import * as vscode from "vscode";

import type { AgentProfile } from "./generated/protocol";

/** The settings the engine is configured with, plus what was wrong with them. */
export interface AgentSettings {
  profiles: AgentProfile[];
  defaultProfile: string | null;
  /** One sentence per `tether.agents` entry that was dropped. */
  problems: string[];
}

/** The settings that only take effect when tetherd is started, i.e. at activation. */
export interface SidecarSettings {
  /** The `tether.tetherdPath` override, or undefined to use the bundled binary. */
  tetherdPath: string | undefined;
  graceSeconds: number;
}

const DEFAULT_GRACE_SECONDS = 30;

export function readAgentSettings(): AgentSettings {
  const configuration = vscode.workspace.getConfiguration("tether");
  const rawAgents: unknown = configuration.get("agents");
  const problems: string[] = [];
  const profiles: AgentProfile[] = [];
  if (rawAgents !== undefined && !Array.isArray(rawAgents)) {
    problems.push("tether.agents must be an array of {name, command, args?, env?, cwd?}; it was ignored.");
  } else {
    (rawAgents ?? []).forEach((entry: unknown, index: number) => {
      const profile = toProfile(entry);
      if (typeof profile === "string") {
        problems.push(`tether.agents[${index}] was ignored: ${profile}`);
      } else {
        profiles.push(profile);
      }
    });
  }
  const rawDefault: unknown = configuration.get("defaultAgent");
  const defaultProfile = typeof rawDefault === "string" && rawDefault.trim() !== "" ? rawDefault.trim() : null;
  return { profiles, defaultProfile, problems };
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

/** The profile an entry describes, or a sentence saying why it is not one. */
function toProfile(entry: unknown): AgentProfile | string {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return "it is not an object.";
  }
  const record = entry as Record<string, unknown>;
  const { name, command, args, env, cwd } = record;
  if (typeof name !== "string" || name.trim() === "") {
    return "it has no \"name\".";
  }
  if (typeof command !== "string" || command.trim() === "") {
    return `"${name}" has no "command".`;
  }
  if (args !== undefined && !(Array.isArray(args) && args.every((arg) => typeof arg === "string"))) {
    return `"${name}": "args" must be an array of strings.`;
  }
  if (
    env !== undefined &&
    !(typeof env === "object" && env !== null && !Array.isArray(env) &&
      Object.values(env).every((value) => typeof value === "string"))
  ) {
    return `"${name}": "env" must map names to strings.`;
  }
  if (cwd !== undefined && cwd !== null && typeof cwd !== "string") {
    return `"${name}": "cwd" must be a string.`;
  }
  return {
    name,
    command,
    args: (args as string[] | undefined) ?? [],
    env: (env as Record<string, string> | undefined) ?? {},
    cwd: typeof cwd === "string" && cwd !== "" ? cwd : null,
  };
}
