// The session's controls in the composer's footer (`.session-controls`), compact pickers as in
// the peers' chats: Tether's permission mode, the agent's own mode (when it lists its modes), a
// picker per config option the agent offers (model, reasoning effort, ...; a toggle for an on/off
// option), the MCP servers the session gave its agent (a button that lists them: Tether's own,
// the person's, and those left out, with why), and the context meter (tokens used of the window,
// the cost when the agent reports one, how long the last turn took), small and out of the way.
//
// The agent's mode option is left to the mode pickers, which already send Tether's mode to the
// agent, so there is one mode control. Every control is set to the host's value on every update
// and only a person's choice posts (`setMode`, `setAgentMode`, `setConfigOption`).

import { element, icon } from "./element";
import { MODES, modeLabel } from "./permission-labels";
import { Picker } from "./picker-view";
import type {
  ConfigOptionView,
  McpServerView,
  Mode,
  PermissionsView,
  PostIntent,
  SessionControlsView,
  UsageView,
} from "./protocol";

/** Codicons for the config options people meet most, by the option's category or id. */
function optionIcon(option: ConfigOptionView): string | undefined {
  const key = `${option.category ?? ""} ${option.id}`.toLowerCase();
  if (key.includes("model")) return "sparkle";
  if (key.includes("thought") || key.includes("reason") || key.includes("effort")) return "lightbulb";
  return undefined;
}

export class SessionControlsPanel {
  readonly element = element("div", "session-controls");
  private readonly mode: Picker;
  private readonly agentMode: Picker;
  /** The agent's mode when it names one but does not list its modes: said, not picked. */
  private readonly agentModeText = element("span", "agent-mode");
  private readonly options = element("div", "config-options");
  private readonly pickers = new Map<string, Picker>();
  private readonly meter = element("div", "context-meter");
  private readonly meterBar = element("meter", "context-meter-bar");
  private readonly meterText = element("span", "context-meter-text");
  private readonly mcpButton = element("button", "icon-button mcp-button");
  private readonly mcpCount = element("span", "mcp-count");
  private readonly mcp = element("div", "mcp-servers");
  private readonly bypassWarning = element("div", "mode-warning");
  private shownOptions = "";
  private shownMcp = "";

  constructor(private readonly post: PostIntent) {
    this.mode = new Picker("mode-select", "Permission mode", (mode) => post({ type: "setMode", mode: mode as Mode }), {
      icon: "shield",
      opens: "above",
    });
    this.mode.setChoices(MODES.map((choice) => ({ value: choice.mode, label: choice.label, description: choice.description })));
    this.agentMode = new Picker("agent-mode-select", "Agent mode", (id) => post({ type: "setAgentMode", id }), {
      icon: "symbol-event",
      opens: "above",
    });
    this.agentMode.setTooltip("The agent's own mode; one that means one of Tether's modes moves Tether's with it");
    this.agentModeText.title = "The agent's own mode; Tether sends it yours when they match";
    this.meter.setAttribute("role", "group");
    this.meterBar.min = 0;
    this.meterBar.max = 1;
    this.meter.append(this.meterBar, this.meterText);
    this.mcpButton.type = "button";
    this.mcpButton.setAttribute("aria-expanded", "false");
    this.mcpButton.setAttribute("aria-controls", "tether-mcp-servers");
    this.mcpButton.append(icon("plug"), this.mcpCount);
    this.mcp.id = "tether-mcp-servers";
    this.mcp.setAttribute("role", "list");
    this.mcp.setAttribute("aria-label", "MCP servers");
    this.mcp.hidden = true;
    this.mcpButton.addEventListener("click", () => this.showMcpList(this.mcp.hidden));
    this.mcp.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.stopPropagation();
        this.showMcpList(false);
        this.mcpButton.focus();
      }
    });
    this.element.ownerDocument.addEventListener("pointerdown", (event) => {
      const target = event.target as Node | null;
      if (!this.mcp.contains(target) && !this.mcpButton.contains(target)) this.showMcpList(false);
    });
    this.bypassWarning.setAttribute("role", "note");
    this.bypassWarning.append(icon("warning"), element("span", undefined, "Bypass: every request is approved"));
    const pickers = element("div", "session-pickers");
    pickers.append(this.mode.element, this.agentMode.element, this.agentModeText, this.options);
    const aside = element("div", "session-aside");
    const mcpAnchor = element("div", "mcp-anchor");
    mcpAnchor.append(this.mcpButton, this.mcp);
    aside.append(mcpAnchor, this.meter);
    this.element.append(this.bypassWarning, pickers, aside);
  }

  render(permissions: PermissionsView | null, controls: SessionControlsView | null): void {
    this.showPermissions(permissions);
    const options = (controls?.configOptions ?? []).filter((option) => option.category !== "mode");
    this.showOptions(options);
    this.showUsage(controls?.usage ?? null);
    this.showMcp(controls?.mcpServers ?? []);
    this.element.hidden = permissions === null;
  }

  private showPermissions(permissions: PermissionsView | null): void {
    if (permissions === null) return;
    const mode = permissions.mode;
    this.element.dataset["mode"] = mode;
    if (!MODES.some((choice) => choice.mode === mode)) {
      // A mode a newer host added: shown as it is rather than as whichever mode comes first.
      this.mode.setChoices([
        ...MODES.map((choice) => ({ value: choice.mode, label: choice.label, description: choice.description })),
        { value: mode, label: modeLabel(mode) },
      ]);
    }
    this.mode.setValue(mode);
    this.mode.setTooltip(MODES.find((choice) => choice.mode === mode)?.description ?? modeLabel(mode));
    this.bypassWarning.hidden = mode !== "bypass";
    // With the agent's list of modes, it picks from them; without, the footer only says it.
    const modes = permissions.agentModes;
    this.agentMode.element.hidden = modes.length === 0;
    this.agentMode.setChoices(modes.map((choice) => ({ value: choice.id, label: choice.name })));
    if (permissions.agentModeId !== null) this.agentMode.setValue(permissions.agentModeId);
    const agentMode = modes.length === 0 ? permissions.agentMode : null;
    this.agentModeText.hidden = agentMode === null;
    this.agentModeText.textContent = agentMode === null ? "" : `Agent mode: ${agentMode}`;
  }

  private showMcpList(open: boolean): void {
    this.mcp.hidden = !open || this.mcpButton.hidden;
    this.mcpButton.setAttribute("aria-expanded", String(!this.mcp.hidden));
  }

  private showMcp(servers: McpServerView[]): void {
    const shape = JSON.stringify(servers);
    if (shape === this.shownMcp) return;
    this.shownMcp = shape;
    const offered = servers.filter((server) => server.leftOut === null).length;
    const remote = servers.filter((server) => server.leftOut === null && server.remote !== null).length;
    this.mcpButton.hidden = servers.length === 0;
    this.mcpButton.classList.toggle("remote", remote > 0);
    this.mcpCount.textContent = String(offered);
    const label =
      `MCP servers: ${offered} offered to the agent` +
      (remote === 0 ? "" : `, ${remote} of them off this machine`) +
      (offered === servers.length ? "" : `, ${servers.length - offered} left out`);
    this.mcpButton.title = label;
    this.mcpButton.setAttribute("aria-label", label);
    if (servers.length === 0) this.showMcpList(false);
    const items = servers.map((server) => {
      const item = element("div", "mcp-server");
      item.setAttribute("role", "listitem");
      item.dataset["transport"] = server.transport;
      if (server.state !== null) item.dataset["state"] = server.state;
      const name = element("span", "mcp-server-name", server.builtIn ? `${server.name} (editor tools)` : server.name);
      let detail: string;
      if (server.leftOut !== null) {
        item.classList.add("left-out");
        detail = server.leftOut;
      } else {
        const state = server.state === null ? "" : ` (the agent says: ${server.state})`;
        detail = server.builtIn
          ? `Tether's own server over ${server.transport}: search, git status, the selection, Problems and the language servers${state}`
          : `Offered to the agent over ${server.transport}${state}`;
        if (server.remote !== null) {
          // A server on the network sees what the agent sends it: the person chose it in their
          // settings, and the list says plainly where that goes.
          item.classList.add("remote");
          item.dataset["remote"] = server.remote;
          detail += `, at ${server.remote}: off this machine, so what the agent sends it leaves your computer`;
        }
      }
      item.title = detail;
      item.append(name, element("span", "mcp-server-detail", detail));
      return item;
    });
    this.mcp.replaceChildren(element("div", "mcp-title", "MCP servers"), ...items);
  }

  private showOptions(options: ConfigOptionView[]): void {
    // The controls are rebuilt only when the options themselves change (not their values), so a
    // picker the person has open keeps its focus across updates.
    const shape = JSON.stringify(
      options.map((option) => ({ ...option, kind: option.kind.type === "select" ? option.kind.choices : "boolean" })),
    );
    if (shape !== this.shownOptions) {
      this.shownOptions = shape;
      this.pickers.clear();
      this.options.replaceChildren(...options.map((option) => this.control(option)));
    }
    for (const option of options) {
      if (option.kind.type === "select") {
        this.pickers.get(option.id)?.setValue(option.kind.current);
      } else {
        const toggle = [...this.options.querySelectorAll<HTMLButtonElement>("button[data-config-id]")].find(
          (each) => each.dataset["configId"] === option.id,
        );
        toggle?.setAttribute("aria-pressed", String(option.kind.current));
      }
    }
  }

  private control(option: ConfigOptionView): HTMLElement {
    if (option.kind.type === "boolean") {
      // An on/off option is a toggle button, pressed when on.
      const toggle = element("button", "config-option-toggle", option.name);
      toggle.type = "button";
      toggle.dataset["configId"] = option.id;
      toggle.title = option.description ?? option.name;
      toggle.addEventListener("click", () => {
        const on = toggle.getAttribute("aria-pressed") !== "true";
        toggle.setAttribute("aria-pressed", String(on));
        this.post({ type: "setConfigOption", configId: option.id, value: on });
      });
      return toggle;
    }
    const optionIconName = optionIcon(option);
    const picker = new Picker(
      "config-option-select",
      option.name,
      (value) => this.post({ type: "setConfigOption", configId: option.id, value }),
      { opens: "above", ...(optionIconName === undefined ? {} : { icon: optionIconName }) },
    );
    picker.element.dataset["configId"] = option.id;
    picker.setTooltip(option.description ?? option.name);
    picker.setChoices(
      option.kind.choices.map((choice) => ({
        value: choice.value,
        label: choice.name,
        description: choice.description,
        group: choice.group,
      })),
    );
    this.pickers.set(option.id, picker);
    return picker.element;
  }

  private showUsage(usage: UsageView | null): void {
    this.meter.hidden = usage === null;
    if (usage === null) return;
    const fraction = usage.size > 0 ? Math.min(usage.used / usage.size, 1) : 0;
    const percent = Math.round(fraction * 100);
    this.meterBar.value = fraction;
    const cost = usage.cost === null ? "" : ` · ${formatCost(usage.cost.amount, usage.cost.currency)}`;
    const took = usage.lastTurnMs === null ? "" : ` · ${formatDuration(usage.lastTurnMs)}`;
    this.meterText.textContent = `${percent}%${cost}${took}`;
    const label =
      `Context: ${formatTokens(usage.used)} of ${formatTokens(usage.size)} tokens used (${percent}%)` +
      (usage.cost === null ? "" : `; cost so far ${formatCost(usage.cost.amount, usage.cost.currency)}`) +
      (usage.lastTurnMs === null ? "" : `; the last turn took ${formatDuration(usage.lastTurnMs)}`);
    this.meter.setAttribute("aria-label", label);
    this.meter.title = label;
    this.meter.dataset["level"] = fraction >= 0.9 ? "full" : fraction >= 0.7 ? "high" : "normal";
  }
}

/** "12k", "1.2M": token counts at a glance. */
export function formatTokens(tokens: number): string {
  if (tokens >= 1_000_000) return `${trim(tokens / 1_000_000)}M`;
  if (tokens >= 1_000) return `${trim(tokens / 1_000)}k`;
  return String(tokens);
}

function trim(value: number): string {
  return value >= 100 ? String(Math.round(value)) : String(Math.round(value * 10) / 10);
}

/** "0.8 s", "12 s", "3 min 5 s": how long a turn took. */
export function formatDuration(millis: number): string {
  const seconds = millis / 1000;
  if (seconds < 10) return `${Math.round(seconds * 10) / 10} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

/**
 * "$0.42" for a currency Intl knows, else "0.42 XYZ". An amount above nothing that rounds to
 * nothing reads "<$0.01": "$0.00" for a turn that cost $0.0003 said it was free.
 */
export function formatCost(amount: number, currency: string): string {
  if (amount > 0 && amount < 0.005) return `<${formatCost(0.01, currency)}`;
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency, maximumFractionDigits: 2 }).format(amount);
  } catch {
    // A code Intl does not know: the agent's own words.
    return `${amount.toFixed(2)} ${currency}`;
  }
}
