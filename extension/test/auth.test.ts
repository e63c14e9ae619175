// Signing in to an agent: the methods the agent offers are picked from a quick pick; a key is
// typed into a password box, kept in the secret storage (never in the settings) and sent to the
// engine with `authenticate`; at the next start the kept keys go to the engine before any agent
// starts. A terminal login runs in a VS Code terminal and is sent once it exits with success.
// Dismissing any step sends and keeps nothing.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { AgentSignIn, loginProcess } from "../src/auth";
import type { AuthMethodView, HostCommand } from "../src/generated/protocol";
import { recordingLog } from "./fakes";
import {
  createdProcessTerminals,
  inputAnswers,
  quickPickAnswers,
  resetWorkspace,
  shownInputBoxes,
  shownMessages,
  shownQuickPicks,
  workspace,
} from "./vscodeStub";

// Codex's methods, as the engine reads them from its initialize answer.
const CODEX_METHODS: AuthMethodView[] = [
  { id: "chatgpt", name: "Login with ChatGPT", description: null, kind: { type: "agent" } },
  {
    id: "openai-api-key",
    name: "Use OPENAI_API_KEY",
    description: "Requires setting the `OPENAI_API_KEY` environment variable.",
    kind: { type: "envVar", vars: [{ name: "OPENAI_API_KEY", label: null, optional: false }] },
  },
];

class MemorySecrets {
  readonly stored = new Map<string, string>();
  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.stored.get(key));
  }
  store(key: string, value: string): Promise<void> {
    this.stored.set(key, value);
    return Promise.resolve();
  }
}

class MemoryState {
  readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
}

function signIn(secrets = new MemorySecrets(), state = new MemoryState()) {
  const sent: HostCommand[] = [];
  const auth = new AgentSignIn(
    secrets as never,
    state as never,
    (command) => sent.push(command),
    recordingLog().log,
  );
  return { auth, sent, secrets, state };
}

/** Lets the sign-in's chain of dialogs run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => resetWorkspace());

test("a key is asked in a password box, kept in the secret storage and sent with authenticate", async () => {
  const { auth, sent, secrets, state } = signIn();
  quickPickAnswers.push("Use OPENAI_API_KEY");
  inputAnswers.push("sk-test");
  auth.ask("Codex", CODEX_METHODS);
  await settle();
  assert.deepEqual(shownQuickPicks, [["Login with ChatGPT", "Use OPENAI_API_KEY"]]);
  assert.equal(shownInputBoxes[0]?.password, true, "the key is not shown as it is typed");
  assert.deepEqual(sent, [{ type: "authenticate", methodId: "openai-api-key", env: { OPENAI_API_KEY: "sk-test" } }]);
  assert.deepEqual([...secrets.stored.values()], ["sk-test"]);
  assert.ok(![...state.values.values()].flat().includes("sk-test"), "only the variable's name is in the state");

  // The next start hands the kept key to the engine, for that agent only.
  const restarted = signIn(secrets, state);
  await restarted.auth.sendKeptSecrets(["Demo", "Codex"]);
  assert.deepEqual(restarted.sent, [{ type: "agentSecrets", profile: "Codex", env: { OPENAI_API_KEY: "sk-test" } }]);
});

test("in an untrusted workspace nothing is asked and no login terminal runs", async () => {
  const { auth, sent } = signIn();
  workspace.isTrusted = false;
  auth.ask("Codex", CODEX_METHODS);
  await settle();
  assert.deepEqual([shownQuickPicks, createdProcessTerminals.length, sent], [[], 0, []]);
});

test("a method the agent signs in by itself is sent at once", async () => {
  const { auth, sent } = signIn();
  quickPickAnswers.push("Login with ChatGPT");
  auth.ask("Codex", CODEX_METHODS);
  await settle();
  assert.deepEqual(sent, [{ type: "authenticate", methodId: "chatgpt", env: {} }]);
  assert.equal(shownInputBoxes.length, 0);
});

test("dismissing the pick or the key box sends and keeps nothing", async () => {
  const { auth, sent, secrets } = signIn();
  quickPickAnswers.push(undefined);
  auth.ask("Codex", CODEX_METHODS);
  await settle();
  quickPickAnswers.push("Use OPENAI_API_KEY");
  inputAnswers.push(undefined);
  auth.ask("Codex", CODEX_METHODS);
  await settle();
  assert.deepEqual(sent, []);
  assert.equal(secrets.stored.size, 0);
});

// Claude's login, as the engine offers it from claude-code-acp's `_meta["terminal-auth"]`.
const CLAUDE_LOGIN: AuthMethodView = {
  id: "claude-login",
  name: "Log in with Claude Code",
  description: "Run `claude /login` in the terminal",
  kind: {
    type: "terminal",
    command: "node",
    args: ["/agents/node_modules/@anthropic-ai/claude-agent-sdk/cli.js"],
    env: { CLAUDE_CONFIG_DIR: "/claude" },
  },
};

test("a terminal login runs in a terminal under VS Code's Node, and its success is sent with authenticate", async () => {
  const { auth, sent } = signIn();
  quickPickAnswers.push("Log in with Claude Code");
  auth.ask("Claude Code", [CLAUDE_LOGIN]);
  await settle();
  const [terminal] = createdProcessTerminals;
  assert.equal(terminal?.name, "Sign in: Claude Code");
  assert.ok(terminal.shown, "the terminal is shown for the person to log in");
  assert.equal(terminal.options.shellPath, process.execPath, "no Node on PATH is needed");
  assert.deepEqual(terminal.options.shellArgs, ["/agents/node_modules/@anthropic-ai/claude-agent-sdk/cli.js"]);
  assert.deepEqual(terminal.options.env, { CLAUDE_CONFIG_DIR: "/claude", ELECTRON_RUN_AS_NODE: "1" });
  assert.deepEqual(sent, [], "nothing is sent while the login runs");
  terminal.exit(0);
  assert.deepEqual(sent, [{ type: "authenticate", methodId: "claude-login", env: {} }]);
});

test("a terminal login closed before it finished sends nothing and says so", async () => {
  const { auth, sent } = signIn();
  quickPickAnswers.push("Log in with Claude Code");
  auth.ask("Claude Code", [CLAUDE_LOGIN]);
  await settle();
  createdProcessTerminals[0]?.exit(undefined);
  assert.deepEqual(sent, []);
  assert.match(shownMessages.at(-1)?.text ?? "", /sign-in to Claude Code did not finish.*Use Sign in in the chat header/);
});

test("a terminal login naming its own program runs it as it is", () => {
  assert.deepEqual(loginProcess({ command: "/opt/vibe", args: ["--setup"], env: {} }, "/vscode/electron"), {
    shellPath: "/opt/vibe",
    shellArgs: ["--setup"],
    env: {},
  });
});
