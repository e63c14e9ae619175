// The settings the engine is configured with: `tether.agents` and the permission rules passed as
// written (the engine judges each profile and each rule), wrong shapes of the settings the wire
// fixes reported instead of breaking the configuration, the workspace's `.tether` folder, and a
// `configure` for every change the engine cares about.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { BUILTIN_AGENTS, type FoundAgent } from "../src/agents";
import type { AgentProfile, HostCommand } from "../src/generated/protocol";
import { configureCommand, readAgentSettings, watchSettings, workspaceTetherDir } from "../src/settings";
import { recordingLog } from "./fakes";
import { Uri, changeSettings, settings, shownMessages, userSettings, workspace } from "./vscodeStub";

beforeEach(() => {
  settings.clear();
  userSettings.clear();
  shownMessages.length = 0;
  workspace.workspaceFolders = undefined;
});

test("the agents and the permission settings go to the engine as written, bad ones included", () => {
  const rules = [
    { decision: "allow", kinds: ["execute"], pattern: "npm test" },
    { decision: "deny", path: ".env" },
    { decision: "allow", kinds: ["exec"] },
    "not even an object",
  ];
  settings.set("tether.permissions.defaultMode", "acceptEdits");
  settings.set("tether.permissions.rules", rules);
  const agents = [{ name: "Gemini", command: "gemini", args: ["--acp"] }, { name: "Codex" }, "not a profile"];
  settings.set("tether.agents", agents);
  settings.set("tether.defaultAgent", "Gemini");
  const read = readAgentSettings();
  assert.deepEqual(read.problems, []);
  const builtin: AgentProfile = {
    name: "Claude Code",
    command: "/opt/claude-code-acp",
    args: [],
    env: {},
    cwd: null,
    protocol: "acp",
  };
  // Claude Code was found; Codex was not, so the engine's agent picker says it is not installed.
  const codex: AgentProfile = { ...builtin, name: "Codex", command: "codex-acp" };
  const found: FoundAgent[] = [
    { agent: BUILTIN_AGENTS[0]!, profile: builtin, found: true },
    { agent: BUILTIN_AGENTS[2]!, profile: codex, found: false },
  ];
  assert.deepEqual(configureCommand(read, found), {
    type: "configure",
    agents,
    builtinProfiles: [builtin, codex],
    missingBuiltins: ["Codex"],
    defaultProfile: "Gemini",
    permissions: { defaultMode: "acceptEdits", rules },
    claudeCli: { persistent: false, idleTimeoutMinutes: 30 },
    mcpServers: null,
  });
});

test("tether.mcpServers comes from the user settings only: a workspace's value names no program to run", () => {
  const mine = [{ name: "fs", command: "npx", args: ["server-fs"], env: { KEY: "${secret:fs}" } }];
  userSettings.set("tether.mcpServers", mine);
  settings.set("tether.mcpServers", [{ name: "evil", command: "/tmp/evil" }]);
  const read = readAgentSettings();
  assert.deepEqual(read.mcpServers, mine, "the person's own list, as written (the engine reads it)");
  assert.deepEqual(read.problems, [
    "tether.mcpServers in a workspace's settings is not used: MCP servers are set in your user settings.",
  ]);
  assert.deepEqual((configureCommand(read) as { mcpServers: unknown }).mcpServers, mine);
});

test("tether.claudeCode settings: persistent with its idle time, or oneshot with a sentence for a wrong shape", () => {
  settings.set("tether.claudeCode.processMode", "persistent");
  settings.set("tether.claudeCode.idleTimeoutMinutes", 5);
  let read = readAgentSettings();
  assert.deepEqual(read.claudeCli, { persistent: true, idleTimeoutMinutes: 5 });
  assert.deepEqual(read.problems, []);
  settings.set("tether.claudeCode.processMode", "forever");
  settings.set("tether.claudeCode.idleTimeoutMinutes", 0);
  read = readAgentSettings();
  assert.deepEqual(read.claudeCli, { persistent: false, idleTimeoutMinutes: 30 });
  assert.deepEqual(read.problems, [
    'tether.claudeCode.processMode must be "oneshot" or "persistent"; "oneshot" is used.',
    "tether.claudeCode.idleTimeoutMinutes must be a whole number of minutes, 1 or more; 30 is used.",
  ]);
});

test("permission settings of the wrong shape fall back to their defaults, with a sentence each", () => {
  const cases: Array<[unknown, unknown, { defaultMode: string; rules: unknown[] }, string[]]> = [
    [undefined, undefined, { defaultMode: "ask", rules: [] }, []],
    ["plan", [], { defaultMode: "plan", rules: [] }, []],
    [
      "yolo",
      { decision: "allow" },
      { defaultMode: "ask", rules: [] },
      [
        'tether.permissions.defaultMode must be one of ask, acceptEdits, plan, bypass; "ask" is used.',
        "tether.permissions.rules must be an array of rules; it was ignored.",
      ],
    ],
  ];
  for (const [mode, rules, expected, problems] of cases) {
    settings.clear();
    settings.set("tether.permissions.defaultMode", mode);
    settings.set("tether.permissions.rules", rules);
    const read = readAgentSettings();
    assert.deepEqual([read.permissions, read.problems], [expected, problems], JSON.stringify([mode, rules]));
  }
});

test("rules come from the workspace only; rules in the user settings are reported, not copied", () => {
  userSettings.set("tether.permissions.rules", [{ decision: "allow", kinds: ["execute"] }]);
  let read = readAgentSettings();
  assert.deepEqual(read.permissions.rules, []);
  assert.deepEqual(read.problems, [
    "tether.permissions.rules in your user settings are not used: rules belong to a workspace " +
      "(its settings, or the Rules panel in the chat).",
  ]);
  settings.set("tether.permissions.rules", [{ decision: "deny", path: ".env" }]);
  read = readAgentSettings();
  assert.deepEqual(read.permissions.rules, [{ decision: "deny", path: ".env" }]);
});

test("sessions and audit logs live in the first workspace folder's .tether, and nowhere without one", () => {
  assert.equal(workspaceTetherDir(), null);
  workspace.workspaceFolders = [{ uri: Uri.file("/home/me/project") }, { uri: Uri.file("/home/me/other") }];
  assert.equal(workspaceTetherDir(), "/home/me/project/.tether");
});

test("a change the engine cares about sends configure with every setting; tetherd's only log", () => {
  const sent: HostCommand[] = [];
  const { log, lines } = recordingLog();
  const watching = watchSettings((command) => sent.push(command), log);
  try {
    changeSettings({ "tether.permissions.rules": [{ decision: "deny", kinds: ["delete"] }] });
    changeSettings({ "tether.permissions.defaultMode": "bypass" });
    changeSettings({ "tether.agents": [{ name: "Codex" }] });
    changeSettings({ "tether.sidecarGraceSeconds": 5 });
    changeSettings({ "tether.claudeCode.processMode": "persistent" });
  } finally {
    watching.dispose();
  }
  changeSettings({ "tether.defaultAgent": "Codex" });

  const permissions = { defaultMode: "bypass", rules: [{ decision: "deny", kinds: ["delete"] }] };
  const oneshot = { persistent: false, idleTimeoutMinutes: 30 };
  const unset = { agents: null, builtinProfiles: [], missingBuiltins: [], defaultProfile: null, claudeCli: oneshot, mcpServers: null };
  assert.deepEqual(sent, [
    { type: "configure", ...unset, permissions: { defaultMode: "ask", rules: permissions.rules } },
    { type: "configure", ...unset, permissions },
    { type: "configure", ...unset, agents: [{ name: "Codex" }], permissions },
    {
      type: "configure",
      ...unset,
      agents: [{ name: "Codex" }],
      permissions,
      claudeCli: { persistent: true, idleTimeoutMinutes: 30 },
    },
  ]);
  // What is wrong with a profile is the engine's to say (tether-core's profiles.rs).
  assert.deepEqual(shownMessages, []);
  assert.deepEqual(lines.map((line) => line.level), ["info"], "the tetherd setting's delay is explained");
});
