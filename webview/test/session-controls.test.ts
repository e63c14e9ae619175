// The agent's session controls as the person meets them: the session title in the header, a
// picker per config option in the composer's footer (posting setConfigOption), the context
// meter, the MCP servers' list, and slash-command completion in the composer.

import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { SessionControlsView } from "../src/protocol";
import { formatCost, formatDuration, formatTokens } from "../src/session-controls-view";
import { patch, session, snapshot } from "./fixtures";
import { type Harness, harness } from "./support";

function controls(overrides: Partial<SessionControlsView> = {}): SessionControlsView {
  return { title: null, commands: [], configOptions: [], usage: null, prompt: { image: false, embeddedContext: false }, mcpServers: [], ...overrides };
}

const modeOption = {
  id: "approval",
  name: "Approval",
  description: null,
  category: "mode",
  kind: {
    type: "select" as const,
    current: "auto",
    choices: [{ value: "auto", name: "Auto", description: null, group: null }],
  },
};

const modelOption = {
  id: "model",
  name: "Model",
  description: "Which model answers",
  category: "model",
  kind: {
    type: "select" as const,
    current: "small",
    choices: [
      { value: "small", name: "Small", description: "Quick answers", group: "Fast" },
      { value: "large", name: "Large", description: null, group: "Smart" },
    ],
  },
};

const webOption = {
  id: "web",
  name: "Web search",
  description: null,
  category: null,
  kind: { type: "boolean" as const, current: false },
};

const commands = [
  { name: "review", description: "Review the current changes", inputHint: null },
  { name: "memory", description: "Show or add to memory", inputHint: "show | add <text>" },
  { name: "mcp", description: "List MCP servers", inputHint: null },
];

describe("session controls in the composer", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
  });

  it("shows the session's title once the agent names it, and drops it when cleared", () => {
    ui.frame(snapshot([]));
    const title = ui.query("header.session .session-title");
    assert.equal(title.hidden, true, "no title before the agent gives one");
    ui.frame(patch([], session({ controls: controls({ title: "Fix the parser test" }) })));
    assert.equal(title.hidden, false);
    assert.equal(title.textContent, "Fix the parser test");
    ui.frame(patch([], session({ controls: controls() })));
    assert.equal(title.hidden, true);
  });

  it("offers a picker per config option (the mode left to the mode picker) and posts the choice", () => {
    ui.frame(snapshot([], { session: session({ controls: controls({ configOptions: [modeOption, modelOption, webOption] }) }) }));
    const pickers = ui.queryAll("footer.composer .config-option-select");
    assert.deepEqual(
      pickers.map((picker) => picker.dataset["configId"]),
      ["model"],
      "one picker for the model; the agent's mode option is not a second mode picker",
    );
    const model = pickers[0]!;
    const button = model.querySelector<HTMLButtonElement>("button.picker-button")!;
    assert.equal(model.dataset["value"], "small");
    assert.equal(button.getAttribute("aria-label"), "Model: Small");
    assert.equal(button.title, "Which model answers");
    assert.deepEqual(
      [...model.querySelectorAll(".picker-group")].map((group) => group.textContent),
      ["Fast", "Smart"],
    );
    assert.deepEqual(ui.posted, [], "drawing the host's values sends nothing");

    model.querySelector<HTMLElement>('[role="option"][data-value="large"]')!.click();
    assert.equal(model.dataset["value"], "large", "the choice shows at once");
    const web = ui.query<HTMLButtonElement>('footer.composer button.config-option-toggle[data-config-id="web"]');
    assert.equal(web.getAttribute("aria-pressed"), "false");
    web.click();
    assert.deepEqual(ui.posted, [
      { type: "setConfigOption", configId: "model", value: "large" },
      { type: "setConfigOption", configId: "web", value: true },
    ]);

    // The host refused both: the controls show the host's values again.
    ui.frame(patch([], session({ controls: controls({ configOptions: [modeOption, modelOption, webOption] }) })));
    assert.equal(web.getAttribute("aria-pressed"), "false");
    assert.equal(model.dataset["value"], "small");
    assert.equal(button.getAttribute("aria-label"), "Model: Small");
  });

  it("opens a picker's list from the keyboard, moves with the arrows, picks with Enter, closes with Escape", () => {
    ui.frame(snapshot([], { session: session({ controls: controls({ configOptions: [modelOption] }) }) }));
    const model = ui.query('footer.composer .config-option-select[data-config-id="model"]');
    const button = model.querySelector<HTMLButtonElement>("button.picker-button")!;
    const list = model.querySelector<HTMLElement>('[role="listbox"]')!;
    assert.equal(list.hidden, true);
    button.focus();
    ui.press("ArrowDown");
    assert.equal(list.hidden, false);
    assert.equal(button.getAttribute("aria-expanded"), "true");
    const focusedValue = () => (ui.window.document.activeElement as HTMLElement).dataset["value"];
    assert.equal(focusedValue(), "small", "the list opens on the chosen item");
    assert.equal(
      model.querySelector('[data-value="small"]')!.getAttribute("aria-selected"),
      "true",
    );
    ui.press("Escape");
    assert.equal(list.hidden, true);
    assert.equal(ui.window.document.activeElement, button, "Escape gives the focus back");
    assert.deepEqual(ui.posted, []);
    ui.press("ArrowDown");
    ui.press("ArrowDown");
    assert.equal(focusedValue(), "large");
    ui.press("Enter");
    assert.equal(list.hidden, true);
    assert.deepEqual(ui.posted, [{ type: "setConfigOption", configId: "model", value: "large" }]);
  });

  it("shows the context meter with the tokens and cost in its accessible label", () => {
    ui.frame(snapshot([]));
    const meter = ui.query("footer.composer .context-meter");
    assert.equal(meter.hidden, true, "no meter before a usage update");
    ui.frame(
      patch([], session({ controls: controls({ usage: { used: 53000, size: 200000, cost: { amount: 0.42, currency: "USD" }, lastTurnMs: null } }) })),
    );
    assert.equal(meter.hidden, false);
    assert.equal(meter.textContent, "27% · $0.42");
    assert.equal(meter.getAttribute("aria-label"), "Context: 53k of 200k tokens used (27%); cost so far $0.42");
    assert.equal(meter.dataset["level"], "normal");
    ui.frame(patch([], session({ controls: controls({ usage: { used: 190000, size: 200000, cost: null, lastTurnMs: null } }) })));
    assert.equal(meter.textContent, "95%");
    assert.equal(meter.dataset["level"], "full");
    // An agent that says how long its turn took (the Claude CLI's result does): shown last.
    ui.frame(patch([], session({ controls: controls({ usage: { used: 53000, size: 200000, cost: null, lastTurnMs: 12_400 } }) })));
    assert.equal(meter.textContent, "27% · 12 s");
    assert.equal(meter.getAttribute("aria-label"), "Context: 53k of 200k tokens used (27%); the last turn took 12 s");
  });

  it("formats token counts and costs for a glance", () => {
    assert.equal(formatTokens(950), "950");
    assert.equal(formatTokens(12_345), "12.3k");
    assert.equal(formatTokens(1_200_000), "1.2M");
    assert.equal(formatCost(1.5, "EUR"), "€1.50");
    // Before, "$0.00": as if the turn had cost nothing.
    assert.equal(formatCost(0.0003, "USD"), "<$0.01");
    assert.equal(formatCost(0, "USD"), "$0.00");
    assert.equal(formatCost(2, "not a currency"), "2.00 not a currency");
    assert.equal(formatDuration(840), "0.8 s");
    assert.equal(formatDuration(12_400), "12 s");
    assert.equal(formatDuration(185_000), "3 min 5 s");
  });
});

describe("slash commands in the composer", () => {
  let ui: Harness;
  beforeEach(() => {
    ui = harness();
    ui.frame(snapshot([], { session: session({ controls: controls({ commands }) }) }));
  });

  const input = () => ui.query<HTMLTextAreaElement>("footer.composer textarea");
  const list = () => ui.query("footer.composer .composer-commands");
  const shown = () => ui.queryAll(".composer-command-name").map((name) => name.textContent);
  const selected = () => ui.query('.composer-command[aria-selected="true"] .composer-command-name').textContent;
  const type = (text: string) => {
    input().value = text;
    input().dispatchEvent(new ui.window.Event("input"));
  };
  const press = (key: string) =>
    input().dispatchEvent(new ui.window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));

  it("lists the commands after a leading slash and filters them as the person types", () => {
    type("hello /");
    assert.equal(list().hidden, true, "only a slash at the start opens the list");
    type("/");
    assert.equal(list().hidden, false);
    assert.deepEqual(shown(), ["/review", "/memory", "/mcp"]);
    assert.equal(input().getAttribute("aria-expanded"), "true");
    type("/m");
    assert.deepEqual(shown(), ["/memory", "/mcp"]);
    assert.ok(ui.query(".composer-command").textContent?.includes("show | add <text>"), "the input hint is shown");
    type("/x");
    assert.equal(list().hidden, true, "nothing matches: no list");
  });

  it("moves with the arrow keys and picks with Enter, inserting the command without sending", () => {
    type("/");
    assert.equal(selected(), "/review");
    press("ArrowDown");
    assert.equal(selected(), "/memory");
    assert.equal(input().getAttribute("aria-activedescendant"), ui.query('.composer-command[aria-selected="true"]').id);
    press("ArrowUp");
    press("ArrowUp");
    assert.equal(selected(), "/mcp", "up from the first wraps to the last");
    press("Enter");
    assert.equal(input().value, "/mcp ");
    assert.equal(list().hidden, true);
    assert.deepEqual(ui.posted, [], "Enter picked; it did not send");
    press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "/mcp ", attachments: [] }], "the next Enter sends");
  });

  it("picks with Tab and with a click", () => {
    type("/me");
    press("Tab");
    assert.equal(input().value, "/memory ");
    type("/r");
    ui.query<HTMLElement>(".composer-command").click();
    assert.equal(input().value, "/review ");
  });

  it("closes with Escape until the person types again", () => {
    type("/");
    press("Escape");
    assert.equal(list().hidden, true);
    assert.equal(input().getAttribute("aria-expanded"), "false");
    press("Enter");
    assert.deepEqual(ui.posted, [{ type: "prompt", text: "/", attachments: [] }], "with the list closed, Enter sends");
    type("/r");
    assert.deepEqual(shown(), ["/review"]);
  });
});

describe("the session's MCP servers in the composer", () => {
  it("lists Tether's server and the person's behind a count, a left-out one struck through with why", () => {
    const ui = harness();
    ui.frame(snapshot([], { session: session({ controls: controls() }) }));
    const button = ui.query<HTMLButtonElement>("footer.composer button.mcp-button");
    assert.equal(button.hidden, true, "no servers, no button");
    const servers = [
      { name: "tether", transport: "stdio", builtIn: true, leftOut: null, state: "connected", remote: null },
      { name: "fs", transport: "stdio", builtIn: false, leftOut: null, state: "failed", remote: null },
      { name: "github", transport: "http", builtIn: false, leftOut: "The MCP server \"github\" was left out: this agent does not connect to MCP servers over HTTP.", state: null, remote: "api.github.example" },
    ];
    ui.frame(patch([], session({ controls: controls({ mcpServers: servers }) })));
    assert.equal(button.hidden, false);
    assert.equal(button.textContent, "2", "two of the three are offered");
    assert.equal(button.getAttribute("aria-label"), "MCP servers: 2 offered to the agent, 1 left out");
    const section = ui.query("footer.composer .mcp-servers");
    assert.equal(section.hidden, true, "the list opens on demand");
    button.click();
    assert.equal(section.hidden, false);
    assert.equal(button.getAttribute("aria-expanded"), "true");
    const items = [...section.querySelectorAll<HTMLElement>(".mcp-server")];
    assert.deepEqual(
      items.map((item) => item.querySelector(".mcp-server-name")!.textContent),
      ["tether (editor tools)", "fs", "github"],
    );
    assert.deepEqual(items.map((item) => item.classList.contains("left-out")), [false, false, true]);
    assert.match(items[2]!.title, /does not connect to MCP servers over HTTP/);
    assert.match(items[0]!.title, /language servers \(the agent says: connected\)/);
    assert.deepEqual(items.map((item) => item.dataset["state"] ?? null), ["connected", "failed", null]);
    section.dispatchEvent(new ui.window.KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    assert.equal(section.hidden, true, "Escape closes the list");
  });

  it("says which servers are off this machine, where the person looks at them", () => {
    const ui = harness();
    const servers = [
      { name: "tether", transport: "http", builtIn: true, leftOut: null, state: null, remote: null },
      { name: "search", transport: "http", builtIn: false, leftOut: null, state: null, remote: "mcp.example.com" },
      { name: "local", transport: "sse", builtIn: false, leftOut: null, state: null, remote: null },
    ];
    ui.frame(snapshot([], { session: session({ controls: controls({ mcpServers: servers }) }) }));
    const button = ui.query<HTMLButtonElement>("footer.composer button.mcp-button");
    assert.equal(button.getAttribute("aria-label"), "MCP servers: 3 offered to the agent, 1 of them off this machine");
    assert.ok(button.classList.contains("remote"), "the button is marked before the list is opened");
    const items = ui.queryAll<HTMLElement>("footer.composer .mcp-server");
    assert.deepEqual(items.map((item) => item.dataset["remote"] ?? null), [null, "mcp.example.com", null]);
    assert.equal(
      items[1]!.querySelector(".mcp-server-detail")!.textContent,
      "Offered to the agent over http, at mcp.example.com: off this machine, so what the agent sends it leaves your computer",
    );

    // Once the person removes it, nothing is marked.
    ui.frame(patch([], session({ controls: controls({ mcpServers: [servers[0]!, servers[2]!] }) })));
    assert.equal(button.classList.contains("remote"), false);
    assert.equal(button.getAttribute("aria-label"), "MCP servers: 2 offered to the agent");
  });
});
