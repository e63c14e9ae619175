// The agent's session controls in the header (`.session-controls`): a picker per config option
// the agent offers (model, reasoning effort, ...; a checkbox for an on/off option), the context
// meter (tokens used of the window, and the cost when the agent reports one), and the MCP
// servers the session gave its agent (Tether's own, the person's, and those left out, why on
// hover).
//
// The agent's mode option is left to the header's mode picker, which already sends Tether's mode
// to the agent, so there is one mode control. Like the header's other pickers, each control is set
// to the host's value on every update and only a person's `change` posts `setConfigOption`.

import { element } from "./element";
import type { ConfigOptionView, McpServerView, PostIntent, SessionControlsView, UsageView } from "./protocol";

export class SessionControlsPanel {
  readonly element = element("div", "session-controls");
  private readonly options = element("div", "config-options");
  private readonly meter = element("div", "context-meter");
  private readonly meterBar = element("meter", "context-meter-bar");
  private readonly meterText = element("span", "context-meter-text");
  private readonly mcp = element("div", "mcp-servers");
  private shownOptions = "";
  private shownMcp = "";

  constructor(private readonly post: PostIntent) {
    this.meter.setAttribute("role", "group");
    this.meterBar.min = 0;
    this.meterBar.max = 1;
    this.meter.append(this.meterBar, this.meterText);
    this.mcp.setAttribute("role", "list");
    this.mcp.setAttribute("aria-label", "MCP servers");
    this.element.append(this.options, this.meter, this.mcp);
  }

  render(controls: SessionControlsView | null): void {
    const options = (controls?.configOptions ?? []).filter((option) => option.category !== "mode");
    this.showOptions(options);
    this.showUsage(controls?.usage ?? null);
    const servers = controls?.mcpServers ?? [];
    this.showMcp(servers);
    this.element.hidden = options.length === 0 && (controls?.usage ?? null) === null && servers.length === 0;
  }

  private showMcp(servers: McpServerView[]): void {
    const shape = JSON.stringify(servers);
    if (shape === this.shownMcp) return;
    this.shownMcp = shape;
    this.mcp.hidden = servers.length === 0;
    const label = element("span", "mcp-label");
    label.textContent = "MCP";
    const items = servers.map((server) => {
      const item = element("span", "mcp-server");
      item.setAttribute("role", "listitem");
      item.textContent = server.builtIn ? `${server.name} (editor tools)` : server.name;
      item.dataset["transport"] = server.transport;
      if (server.state !== null) item.dataset["state"] = server.state;
      if (server.leftOut !== null) {
        item.classList.add("left-out");
        item.title = server.leftOut;
      } else {
        const state = server.state === null ? "" : ` (the agent says: ${server.state})`;
        item.title = server.builtIn
          ? `Tether's own server over ${server.transport}: search, git status, the selection, Problems and the language servers${state}`
          : `Offered to the agent over ${server.transport}${state}`;
      }
      return item;
    });
    this.mcp.replaceChildren(label, ...items);
  }

  private showOptions(options: ConfigOptionView[]): void {
    // The controls are rebuilt only when the options themselves change (not their values), so a
    // picker the person has open keeps its focus across header updates.
    const shape = JSON.stringify(
      options.map((option) => ({ ...option, kind: option.kind.type === "select" ? option.kind.choices : "boolean" })),
    );
    if (shape !== this.shownOptions) {
      this.shownOptions = shape;
      this.options.replaceChildren(...options.map((option) => this.control(option)));
    }
    const controls = [...this.options.querySelectorAll<HTMLInputElement & HTMLSelectElement>("[data-config-id]")];
    for (const option of options) {
      const control = controls.find((each) => each.dataset["configId"] === option.id);
      if (control === undefined) continue;
      if (option.kind.type === "select") control.value = option.kind.current;
      else control.checked = option.kind.current;
    }
  }

  private control(option: ConfigOptionView): HTMLElement {
    const field = element("label", "config-option");
    field.title = option.description ?? option.name;
    if (option.kind.type === "boolean") {
      const checkbox = element("input", "config-option-checkbox");
      checkbox.type = "checkbox";
      checkbox.dataset["configId"] = option.id;
      checkbox.addEventListener("change", () => {
        this.post({ type: "setConfigOption", configId: option.id, value: checkbox.checked });
      });
      field.append(checkbox, element("span", "config-option-label", option.name));
      return field;
    }
    const select = element("select", "config-option-select");
    select.dataset["configId"] = option.id;
    select.setAttribute("aria-label", option.name);
    let group: HTMLOptGroupElement | null = null;
    for (const choice of option.kind.choices) {
      const item = element("option", undefined, choice.name);
      item.value = choice.value;
      if (choice.description !== null) item.title = choice.description;
      if (choice.group === null) {
        group = null;
        select.append(item);
        continue;
      }
      if (group === null || group.label !== choice.group) {
        group = element("optgroup");
        group.label = choice.group;
        select.append(group);
      }
      group.append(item);
    }
    select.addEventListener("change", () => {
      this.post({ type: "setConfigOption", configId: option.id, value: select.value });
    });
    field.append(element("span", "config-option-label", option.name), select);
    return field;
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

/** "$0.42" for a currency Intl knows, else "0.42 XYZ". */
export function formatCost(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency, maximumFractionDigits: 2 }).format(amount);
  } catch {
    // A code Intl does not know: the agent's own words.
    return `${amount.toFixed(2)} ${currency}`;
  }
}
