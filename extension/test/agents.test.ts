// The built-in agents: found in the extension's storage first (a JavaScript agent run by the
// extension host's Node, Codex's native binary directly), then on PATH; still offered when
// missing; replaced by a `tether.agents` profile of the same name; and installed with npm (a fake
// npm here) behind a button, with progress and npm's output in the log.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeEach, test, type TestContext } from "node:test";

import { type AgentSearch, BuiltinAgents, ensureAgentInstalled, findBuiltinAgents } from "../src/agents";
import type { AgentProfile } from "../src/generated/protocol";
import { recordingLog, tempFolder } from "./fakes";
import { choiceAnswers, offeredChoices, shownMessages, shownProgress, workspace } from "./vscodeStub";

const NODE = "/opt/vscode/node";

beforeEach(() => {
  choiceAnswers.length = 0;
  offeredChoices.length = 0;
  shownMessages.length = 0;
  shownProgress.length = 0;
});

function search(t: TestContext, searchPath?: string): AgentSearch {
  return { agentsDir: path.join(tempFolder(t), "agents"), searchPath, nodePath: NODE };
}

function writeFile(file: string, text: string, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
}

/** Lays out package `name` under `<agentsDir>/node_modules` as npm would, with one bin script. */
function installPackage(agentsDir: string, name: string, bin: string, script: string): string {
  const packageDir = path.join(agentsDir, "node_modules", name);
  writeFile(path.join(packageDir, "package.json"), JSON.stringify({ name, bin: { [bin]: script } }));
  writeFile(path.join(packageDir, script), "#!/usr/bin/env node\n", 0o755);
  return path.join(packageDir, script);
}

test("with nothing installed every built-in is offered, by its PATH name, marked as not found", (t) => {
  const found = findBuiltinAgents(search(t, ""));
  assert.deepEqual(
    found.map(({ profile, found }) => [profile.name, profile.command, profile.args, profile.env, found]),
    [
      ["Claude Code", "claude-code-acp", [], { IS_SANDBOX: "" }, false],
      ["Claude Code (direct)", "claude", [], { IS_SANDBOX: "" }, false],
      ["Codex", "codex-acp", [], {}, false],
      ["Gemini CLI", "gemini", ["--acp"], {}, false],
    ],
  );
  assert.deepEqual(
    found.map(({ profile }) => profile.protocol),
    ["acp", "claude-cli", "acp", "acp"],
  );
});

test("an install in the extension's storage is used: JavaScript under the host's Node, Codex's binary directly", (t) => {
  const where = search(t, "");
  const claude = installPackage(where.agentsDir, "@zed-industries/claude-code-acp", "claude-code-acp", "dist/index.js");
  const gemini = installPackage(where.agentsDir, "@google/gemini-cli", "gemini", "dist/index.js");
  const codex = path.join(
    where.agentsDir,
    "node_modules",
    `@zed-industries/codex-acp-${process.platform}-${process.arch}/bin/codex-acp`,
  );
  writeFile(codex, "#!/bin/sh\n", 0o755);
  // Recent Claude CLIs are a native binary behind their `bin` entry (not a Node script).
  const claudeCli = path.join(where.agentsDir, "node_modules", "@anthropic-ai/claude-code", "bin/claude.exe");
  writeFile(
    path.join(where.agentsDir, "node_modules", "@anthropic-ai/claude-code", "package.json"),
    JSON.stringify({ name: "@anthropic-ai/claude-code", bin: { claude: "bin/claude.exe" } }),
  );
  writeFile(claudeCli, "\x7fELF native", 0o755);
  const profiles = findBuiltinAgents(where).map(({ profile, found }) => ({ ...profile, found }));
  assert.deepEqual(profiles, [
    {
      name: "Claude Code",
      command: NODE,
      args: [claude],
      env: { IS_SANDBOX: "", ELECTRON_RUN_AS_NODE: "1" },
      cwd: null,
      protocol: "acp",
      found: true,
    },
    {
      name: "Claude Code (direct)",
      command: claudeCli,
      args: [],
      env: { IS_SANDBOX: "" },
      cwd: null,
      protocol: "claude-cli",
      found: true,
    },
    { name: "Codex", command: codex, args: [], env: {}, cwd: null, protocol: "acp", found: true },
    {
      name: "Gemini CLI",
      command: NODE,
      args: [gemini, "--acp"],
      env: { ELECTRON_RUN_AS_NODE: "1" },
      cwd: null,
      protocol: "acp",
      found: true,
    },
  ]);
});

test("an older Claude CLI whose bin is a Node script runs under the host's Node", (t) => {
  const where = search(t, "");
  const script = installPackage(where.agentsDir, "@anthropic-ai/claude-code", "claude", "cli.js");
  const direct = findBuiltinAgents(where).find(({ profile }) => profile.name === "Claude Code (direct)");
  assert.deepEqual(direct?.profile.command, NODE);
  assert.deepEqual(direct?.profile.args, [script]);
});

test("an agent not in the storage is found on PATH, executable files only", (t) => {
  const bin = tempFolder(t);
  const other = tempFolder(t);
  writeFile(path.join(bin, "gemini"), "#!/bin/sh\n", 0o755);
  writeFile(path.join(other, "codex-acp"), "not executable", 0o644);
  const found = findBuiltinAgents(search(t, [other, bin].join(path.delimiter)));
  assert.deepEqual(
    found.map(({ profile, found }) => [profile.name, profile.command, profile.args, found]),
    [
      ["Claude Code", "claude-code-acp", [], false],
      ["Claude Code (direct)", "claude", [], false],
      ["Codex", "codex-acp", [], false],
      ["Gemini CLI", path.join(bin, "gemini"), ["--acp"], true],
    ],
  );
});

/**
 * Puts a fake `npm` first on PATH for the test: it prints a line and lays out the package it is
 * asked for as the real one would (or fails, with `fail`).
 */
function fakeNpm(t: TestContext, { fail = false } = {}): { calls: string } {
  const bin = tempFolder(t);
  const calls = path.join(bin, "calls");
  const script = fail
    ? `#!/bin/sh\necho "$@" >> "${calls}"\necho "npm error 404 Not Found" >&2\nexit 1\n`
    : [
        "#!/bin/sh",
        `echo "$@" >> "${calls}"`,
        'prefix="$5"; package="$6"',
        'mkdir -p "$prefix/node_modules/$package/dist"',
        `printf '{"bin":{"claude-code-acp":"dist/index.js"}}' > "$prefix/node_modules/$package/package.json"`,
        'touch "$prefix/node_modules/$package/dist/index.js"',
        'echo "added 1 package in 1s"',
        "",
      ].join("\n");
  writeFile(path.join(bin, "npm"), script, 0o755);
  const original = process.env.PATH;
  process.env.PATH = `${bin}${path.delimiter}${original ?? ""}`;
  t.after(() => {
    process.env.PATH = original;
  });
  return { calls };
}

test("choosing a missing agent offers Install; npm installs it into the storage with progress and its output logged", async (t) => {
  const { calls } = fakeNpm(t);
  const where = search(t, "");
  const { log, lines } = recordingLog();
  choiceAnswers.push("Install Claude Code");
  assert.equal(await ensureAgentInstalled("Claude Code", where, [], log), "installed");
  assert.deepEqual(offeredChoices.map((choice) => choice.items), [["Install Claude Code"]]);
  assert.deepEqual(fs.readFileSync(calls, "utf8").trim(), `install --no-fund --no-audit --prefix ${where.agentsDir} @zed-industries/claude-code-acp`);
  assert.deepEqual(shownProgress, [{ title: "Installing Claude Code", messages: ["added 1 package in 1s"] }]);
  assert.ok(lines.some((line) => line.text === "npm: added 1 package in 1s"), JSON.stringify(lines));
  const claude = findBuiltinAgents(where)[0];
  assert.deepEqual([claude?.found, claude?.profile.command], [true, NODE]);
  // Installed now: choosing it again offers nothing.
  assert.equal(await ensureAgentInstalled("Claude Code", where, [], log), "present");
  assert.equal(offeredChoices.length, 1);
});

test("in an untrusted workspace no install is offered and no npm runs", async (t) => {
  const { calls } = fakeNpm(t);
  workspace.isTrusted = false;
  t.after(() => {
    workspace.isTrusted = true;
  });
  assert.equal(await ensureAgentInstalled("Claude Code", search(t, ""), [], recordingLog().log), "missing");
  assert.deepEqual(offeredChoices, []);
  assert.equal(fs.existsSync(calls), false);
});

test("declining the install runs no npm and leaves the agent missing", async (t) => {
  const { calls } = fakeNpm(t);
  choiceAnswers.push(undefined);
  assert.equal(await ensureAgentInstalled("Gemini CLI", search(t, ""), [], recordingLog().log), "missing");
  assert.equal(offeredChoices.length, 1);
  assert.equal(fs.existsSync(calls), false);
});

test("a failed npm install is shown with its exit status, and npm's output is in the log", async (t) => {
  fakeNpm(t, { fail: true });
  const { log, lines } = recordingLog();
  choiceAnswers.push("Install Codex");
  assert.equal(await ensureAgentInstalled("Codex", search(t, ""), [], log), "missing");
  assert.deepEqual(shownMessages.filter((message) => message.level === "error"), [
    {
      level: "error",
      text: "Tether could not install Codex: npm exited with status 1 (the Tether log has npm's output).",
    },
  ]);
  assert.ok(lines.some((line) => line.text === "npm: npm error 404 Not Found"), JSON.stringify(lines));
});

test("no install is offered for an agent that is not built in, or that tether.agents redefines", async (t) => {
  const where = search(t, "");
  const log = recordingLog().log;
  const mine: AgentProfile = {
    name: "Claude Code",
    command: "/opt/claude-acp",
    args: [],
    env: {},
    cwd: null,
    protocol: "acp",
  };
  assert.equal(await ensureAgentInstalled("Claude Code", where, [mine], log), "present");
  assert.equal(await ensureAgentInstalled("Demo", where, [], log), "present");
  assert.equal(offeredChoices.length, 0);
});

test("an agent installed from a terminal after the engine was told is noticed once, until the engine is told again", (t) => {
  const folder = tempFolder(t);
  const where: AgentSearch = { agentsDir: path.join(folder, "agents"), searchPath: path.join(folder, "bin"), nodePath: NODE };
  const builtins = new BuiltinAgents(() => where);
  assert.equal(builtins.changed(), false, "nothing was told yet, so nothing to tell again");
  assert.deepEqual(
    builtins.find().filter((agent) => !agent.found).map((agent) => agent.agent.name),
    ["Claude Code", "Claude Code (direct)", "Codex", "Gemini CLI"],
  );
  assert.equal(builtins.changed(), false);

  // `npm install -g @zed-industries/codex-acp` in a terminal puts codex-acp on PATH.
  writeFile(path.join(folder, "bin", "codex-acp"), "#!/bin/sh\n", 0o755);
  assert.equal(builtins.changed(), true, "the engine still runs (and lists) Codex as missing");
  const codex = builtins.find().find((agent) => agent.agent.name === "Codex");
  assert.deepEqual([codex?.found, codex?.profile.command], [true, path.join(folder, "bin", "codex-acp")]);
  assert.equal(builtins.changed(), false, "told now");
});
