// End to end: the editor as the agent's tool. The scripted test agent is given Tether's MCP
// server in session/new, starts it as real agents do (`tetherd mcp`, the stdio bridge), calls
// its tools and says in the chat what came back, which must match the editor: the selection the
// person made, the definition VS Code's built-in TypeScript server finds, the Problems of a file
// with a type error, and a file opened at a line without the chat losing the focus. A server of
// the person's own (`tether.mcpServers`) reaches the agent in session/new too, and each call the
// agent showed no card for gets Tether's card in the chat.
//
// Every wait is for something to appear; none measures time. The language server needs a while
// to load the project: the questions that depend on it wait for the Problems count it produces.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { startAnthropicMock } from "./anthropic-mock.mjs";
import { ACTIVATION_TIMEOUT_MS, STEP_TIMEOUT_MS, orderedSteps, testAgent, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 10 * 60_000;

// The JSON a tool answered, from the agent's message (the test agent shows it in a code block).
const jsonIn = (said) => JSON.parse(said.slice(said.indexOf("{"), said.lastIndexOf("}") + 1));

const SCENARIO = `
description = "Asks the editor through Tether's MCP server"

[[prompt]]
match = "servers"
steps = [{ report_mcp_servers = true }, { stop = "end_turn" }]

[[prompt]]
match = "selection"
steps = [{ mcp_call = { server = "tether", tool = "get_selection" } }, { stop = "end_turn" }]

[[prompt]]
match = "definition"
steps = [
  { mcp_call = { server = "tether", tool = "lsp_definition", arguments = { path = "src/main.ts", line = 3, symbol = "greet" } } },
  { stop = "end_turn" },
]

[[prompt]]
match = "problems"
steps = [{ mcp_call = { server = "tether", tool = "get_diagnostics", arguments = { path = "src/main.ts" } } }, { stop = "end_turn" }]

[[prompt]]
match = "open"
steps = [{ mcp_call = { server = "tether", tool = "open_file", arguments = { path = "src/greet.ts", line = 2 } } }, { stop = "end_turn" }]
`;

const workspaceFiles = {
  "mcp-agent.toml": SCENARIO,
  "tsconfig.json": '{ "compilerOptions": { "strict": true, "target": "es2022", "module": "commonjs" } }\n',
  "src/greet.ts": 'export function greet(name: string): string {\n  return "Hello, " + name;\n}\n',
  "src/main.ts": 'import { greet } from "./greet";\n\nconsole.log(greet("world"));\nconst count: number = "three";\n',
};

test("an agent asks the editor through Tether's MCP server: selection, definition, problems, open file", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  const settings = (folder) => ({
    "tether.agents": [
      { name: "MCP agent", command: testAgent, args: ["--scenario", path.join(folder, "workspace", "mcp-agent.toml")] },
    ],
    "tether.defaultAgent": "MCP agent",
    "tether.mcpServers": [{ name: "extra", command: "node", args: ["--version"] }],
  });
  await withVSCode({ name: "mcp", settings, workspaceFiles }, async (vscode) => {
    const step = orderedSteps(t, vscode);
    const chat = vscode.chatFrame();
    // The agent's answer to the latest prompt: its last message.
    const answer = (tool) => chat.locator(".entry.agent", { hasText: `MCP ${tool} ` }).last();
    // Asks once VS Code's TypeScript server has loaded the project: the Problems count in the
    // status bar shows main.ts's type error then. Returns the agent's answer.
    const askOnceLoaded = async (prompt, tool) => {
      await vscode.page.locator("#status\\.problems", { hasText: /[1-9]/ }).waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
      const before = await chat.locator(".entry.agent", { hasText: `MCP ${tool} ` }).count();
      await vscode.sendPrompt(prompt);
      await chat.locator(".entry.agent", { hasText: `MCP ${tool} ` }).nth(before).waitFor({ timeout: STEP_TIMEOUT_MS });
      await chat.locator('.session-status[data-status="ready"]').waitFor();
      return answer(tool).innerText();
    };

    await step("the session's agent got Tether's server and the person's own in session/new", async () => {
      await vscode.openTetherView();
      await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
      await vscode.sendPrompt("Which MCP servers do you have?");
      const said = await chat.locator(".entry.agent", { hasText: "MCP servers:" }).innerText();
      assert.match(said, /tether \(stdio: [^)]*tetherd\)/, said);
      assert.match(said, /extra \(stdio: node\)/, said);
      // The composer's plug button lists the servers the session gave its agent.
      await chat.locator("button.mcp-button").click();
      const header = chat.locator(".mcp-servers");
      await header.locator(".mcp-server", { hasText: "tether (editor tools)" }).waitFor();
      await header.locator(".mcp-server", { hasText: "extra" }).waitFor();
      // The whole list is in sight: it opens against the composer's right edge, not the plug's.
      const list = await header.boundingBox();
      const view = await chat.locator("body").boundingBox();
      assert.ok(
        list.x >= view.x && list.x + list.width <= view.x + view.width,
        `the list (${list.x}–${list.x + list.width}) is cut by the view's edge (${view.x}–${view.x + view.width})`,
      );
    });

    await step("get_selection answers with the person's selection", async () => {
      await vscode.openFile("src/main.ts");
      await vscode.page.keyboard.press("Control+Home");
      await vscode.page.keyboard.press("ArrowDown");
      await vscode.page.keyboard.press("ArrowDown");
      await vscode.page.keyboard.press("Shift+End");
      await vscode.sendPrompt("What is my selection?");
      const said = await answer("get_selection").innerText();
      const result = jsonIn(said);
      assert.equal(result.path, "src/main.ts");
      assert.deepEqual(result.start, { line: 3, column: 1 });
      assert.equal(result.text, 'console.log(greet("world"));');
      assert.equal(result.language, "typescript");
      await chat.locator(".entry.tool-call", { hasText: "get_selection (Tether)" }).waitFor();
    });

    await step("lsp_definition finds greet where VS Code's TypeScript server says it is", async () => {
      const said = await askOnceLoaded("Where is the definition of greet?", "lsp_definition");
      const result = jsonIn(said);
      assert.equal(result.definitions[0].path, "src/greet.ts", said);
      assert.equal(result.definitions[0].start.line, 1, said);
      assert.match(result.definitions[0].text, /export function greet/);
    });

    await step("get_diagnostics reports the type error the Problems panel shows", async () => {
      const said = await askOnceLoaded("Any problems in main.ts?", "get_diagnostics");
      const result = jsonIn(said);
      const problem = result.problems.find((found) => /not assignable to type 'number'/.test(found.message));
      assert.ok(problem, said);
      assert.equal(problem.severity, "error");
      assert.equal(problem.path, "src/main.ts");
      assert.equal(problem.start.line, 4);
      assert.equal(problem.source, "ts");
    });

    await step("open_file shows the file at the line, and the chat keeps the focus", async () => {
      await vscode.sendPrompt("Please open greet.ts for me");
      const said = await answer("open_file").innerText();
      assert.match(said, /"opened":"src\/greet.ts"/, said);
      await vscode.activeEditorTab("greet.ts").waitFor();
      const focusedInChat = await chat.locator("textarea.composer-input").evaluate((input) => document.activeElement === input);
      assert.ok(focusedInChat, "the composer keeps the keyboard focus");
    });
  });
});

// A real agent: Claude Code's ACP adapter from npm, given Tether's server in session/new, starts
// it and names its tools to the model (this test's mock of the Messages API sees them).
test("Claude Code's ACP adapter gets Tether's tools and names them to the model", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  const agents = path.join(process.env.TETHER_TOOLS_DIR ?? path.join(os.homedir(), ".cache", "tether-dev"), "agents");
  assert.ok(fs.existsSync(path.join(agents, "node_modules", "@zed-industries", "claude-code-acp")), "run `cargo xtask setup`");
  const mock = await startAnthropicMock();
  t.after(() => mock.close());
  const settings = (root) => {
    const storage = path.join(root, "user-data", "User", "globalStorage", "tether.tether");
    fs.mkdirSync(storage, { recursive: true });
    fs.symlinkSync(agents, path.join(storage, "agents"), "dir");
    return { "tether.defaultAgent": "Claude Code", "tether.sidecarGraceSeconds": 5 };
  };
  const env = (root) => {
    const home = path.join(root, "claude-home");
    fs.mkdirSync(home, { recursive: true });
    return { CLAUDE_CONFIG_DIR: home, ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-tether-e2e-not-a-key" };
  };
  await withVSCode({ name: "mcp-claude-adapter", settings, env }, async (vscode) => {
    mock.cwd = vscode.workspace;
    await vscode.openTetherView();
    const chat = vscode.chatFrame();
    await chat.locator('.session-status[data-status="ready"]').waitFor({ timeout: ACTIVATION_TIMEOUT_MS });
    await vscode.sendPrompt("hello there");
    await chat.locator(".entry.agent", { hasText: "You said: hello there." }).waitFor({ timeout: STEP_TIMEOUT_MS });
    const asked = JSON.stringify(mock.requests.filter((request) => request.body.stream).map((request) => request.body));
    for (const tool of ["mcp__tether__search_text", "mcp__tether__get_selection", "mcp__tether__lsp_definition"]) {
      assert.ok(asked.includes(tool), `the model is told of ${tool}`);
    }
  });
});
