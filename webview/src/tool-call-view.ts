// A tool call card: title, kind, live status, content, locations, and the permission request
// attached to it.
//
// A tool call changes as a whole (the host sends `replace`), so the card refills itself from
// the new entry; the permission card is kept as is when nothing about it changed, so a status
// update does not steal the focus from the option the person is about to press. Terminal cards
// are kept too: they are fed by terminal patches, not by the tool call (see terminal-view.ts).
//
// The card never decides what an option means: it shows the agent's options in the agent's
// order, sends the chosen option's id, and disables itself until the host's next patch shows
// the outcome. Once there is one, the options give way to a single line saying how the request
// was settled: by the person, by a rule or the mode (the engine decided, the card only words it),
// or not at all because the turn was cancelled or the agent withdrew the request.

import { diffBlock, diffStats, hiddenLinesNote } from "./diff-view";
import { element } from "./element";
import type { MarkdownRenderer } from "./markdown";
import { SCOPE_LABELS, modeLabel } from "./permission-labels";
import type {
  DecidedBy,
  PermissionKey,
  PermissionOptionView,
  PermissionOutcome,
  PermissionView,
  PostIntent,
  ToolCallView,
  ToolContent,
  ToolStatus,
} from "./protocol";
import type { TerminalCard, TerminalCards } from "./terminal-view";

/** Longest tool text rendered as markdown; tools can return whole files. */
const MAX_TOOL_TEXT = 20_000;

/** Longest raw input or output shown in the collapsed details. */
const MAX_RAW_JSON = 8_000;

export interface ToolCallContext {
  renderer: MarkdownRenderer;
  post: PostIntent;
  /** Permission requests the person answered here whose outcome the host has not sent yet. */
  answered: Set<PermissionKey>;
  /**
   * Called when a request waiting for the person first appears, with the button to focus and
   * the tool call's title to announce.
   */
  permissionShown(focusTarget: HTMLButtonElement, title: string): void;
  /** Where the cards of the terminals tool calls show come from. */
  terminals: TerminalCards;
}

/** Options past the ninth have no digit: the keys 1 to 9 choose the first nine. */
const MAX_SHORTCUT_OPTIONS = 9;

const STATUS_LABELS: Record<ToolStatus, string> = {
  pending: "Pending",
  in_progress: "Running",
  waiting_for_confirmation: "Awaiting approval",
  completed: "Completed",
  failed: "Failed",
};

/** The card's `data-state` once the request has an outcome. */
const OUTCOME_STATES: Record<PermissionOutcome["type"], string> = {
  selected: "answered",
  auto: "auto",
  cancelled: "cancelled",
  withdrawn: "withdrawn",
};

/** How an answered request reads, by the kind of the option chosen. */
const OUTCOME_LABELS: Record<string, string> = {
  allow_once: "Allowed once",
  allow_always: "Always allowed",
  reject_once: "Rejected",
  reject_always: "Always rejected",
};

export class ToolCallCard {
  readonly element: HTMLElement;
  private permissionCard: HTMLElement | null = null;
  private permissionSignature = "";
  /** The request the card shows: another request on the same tool call is announced anew. */
  private permissionKey: PermissionKey | null = null;
  private rawOpen = false;
  /** The terminal cards this tool call shows, by terminal id, kept across its updates. */
  private readonly terminalCards = new Map<string, TerminalCard>();

  constructor(
    index: number,
    private readonly context: ToolCallContext,
  ) {
    this.element = element("div", "entry tool-call");
    this.element.dataset["index"] = String(index);
  }

  update(call: ToolCallView): void {
    this.element.dataset["status"] = call.status;
    this.element.dataset["kind"] = call.kind;

    const header = element("div", "tool-header");
    header.append(
      element("span", "tool-kind", call.kind),
      element("span", "tool-title", call.title),
      element("span", "tool-status", STATUS_LABELS[call.status] ?? call.status),
    );
    const children: HTMLElement[] = [header];
    const shownTerminals = new Set<string>();
    if (call.content.length > 0) {
      const content = element("div", "tool-content");
      for (const item of call.content) content.append(this.renderContent(item, shownTerminals));
      children.push(content);
    }
    for (const [id, card] of this.terminalCards) {
      if (shownTerminals.has(id)) continue;
      this.context.terminals.release(card);
      this.terminalCards.delete(id);
    }
    if (call.locations.length > 0) {
      const locations = element("ul", "tool-locations");
      for (const location of call.locations) {
        const where = location.line === null ? location.path : `${location.path}:${location.line}`;
        locations.append(element("li", "tool-location", where));
      }
      children.push(locations);
    }
    const raw = this.renderRaw(call.rawInput, call.rawOutput);
    if (raw !== null) children.push(raw);
    if (call.permission !== null) children.push(this.permission(call, call.permission));
    else {
      this.permissionCard = null;
      this.permissionKey = null;
    }
    this.element.replaceChildren(...children);
  }

  private renderContent(item: ToolContent, shownTerminals: Set<string>): HTMLElement {
    switch (item.type) {
      case "text": {
        const markdown = element("div", "markdown");
        const shown = item.text.length > MAX_TOOL_TEXT ? item.text.slice(0, MAX_TOOL_TEXT) : item.text;
        markdown.innerHTML = this.context.renderer.render(shown);
        if (shown.length < item.text.length) {
          const hidden = item.text.length - shown.length;
          markdown.append(element("p", "tool-truncated", `… ${hidden} more characters`));
        }
        return markdown;
      }
      case "diff": {
        const diff = element("div", "tool-diff");
        const head = element("div", "tool-diff-head");
        head.append(element("span", "tool-diff-path", item.path), diffStats("tool-diff-stats", item.added, item.removed));
        diff.append(head);
        if (item.lines.length > 0) diff.append(diffBlock("tool-diff-lines", item.lines));
        else if (item.hiddenLines === 0) diff.append(element("div", "diff-empty", "No changes"));
        if (item.hiddenLines > 0) diff.append(hiddenLinesNote(item.hiddenLines));
        return diff;
      }
      case "terminal": {
        let card = this.terminalCards.get(item.terminalId);
        if (card === undefined) {
          card = this.context.terminals.acquire(item.terminalId);
          this.terminalCards.set(item.terminalId, card);
        }
        shownTerminals.add(item.terminalId);
        return card.element;
      }
    }
    // Content of a kind a newer host added: shown as data rather than dropped.
    return rawJson(item);
  }

  private renderRaw(input: unknown, output: unknown): HTMLElement | null {
    const hasInput = input !== null && input !== undefined;
    const hasOutput = output !== null && output !== undefined;
    if (!hasInput && !hasOutput) return null;
    const details = element("details", "tool-raw");
    details.open = this.rawOpen;
    details.addEventListener("toggle", () => {
      this.rawOpen = details.open;
    });
    details.append(element("summary", undefined, "Details"));
    if (hasInput) details.append(element("div", "tool-raw-label", "Input"), rawJson(input));
    if (hasOutput) details.append(element("div", "tool-raw-label", "Output"), rawJson(output));
    return details;
  }

  private permission(call: ToolCallView, permission: PermissionView): HTMLElement {
    const answeredHere = this.context.answered.has(permission.key);
    const command = call.command;
    const signature = JSON.stringify([permission, answeredHere, command, call.title]);
    if (this.permissionCard !== null && signature === this.permissionSignature) {
      return this.permissionCard;
    }
    const firstAppearance = this.permissionKey !== permission.key;
    this.permissionKey = permission.key;
    this.permissionSignature = signature;
    const card = element("div", "permission-card");
    card.dataset["key"] = String(permission.key);
    card.setAttribute("role", "group");
    card.setAttribute("aria-label", `Permission request: ${call.title}`);
    this.permissionCard = card;
    // The command is what an execute request is about; the title often only paraphrases it.
    if (command !== null) card.append(element("code", "permission-command", `$ ${command}`));
    // A path that goes through a symbolic link is shown with where it leads: that is the file
    // the answer lets the agent touch.
    for (const link of permission.links ?? []) {
      card.append(element("div", "permission-link", link));
    }

    const outcome = permission.outcome;
    if (outcome === null) {
      card.dataset["state"] = "waiting";
      const asker = permission.fromTether === true ? "Tether asks before this goes ahead:" : "The agent asks for permission:";
      card.append(element("div", "permission-prompt", asker));
      const options = element("div", "permission-options");
      permission.options.forEach((option, index) => {
        options.append(this.optionButton(permission.key, option, index, answeredHere, card));
      });
      card.append(options);
      if (firstAppearance && !answeredHere) {
        const target = permission.options.findIndex((option) => option.kind.startsWith("allow"));
        const button = options.children.item(Math.max(target, 0));
        if (button instanceof HTMLButtonElement) this.context.permissionShown(button, call.title);
      }
      return card;
    }
    card.dataset["state"] = OUTCOME_STATES[outcome.type] ?? outcome.type;
    card.append(outcomeElement(permission.options, outcome));
    return card;
  }

  private optionButton(
    key: PermissionKey,
    option: PermissionOptionView,
    index: number,
    answeredHere: boolean,
    card: HTMLElement,
  ): HTMLButtonElement {
    const button = element("button", "permission-option", option.name);
    button.type = "button";
    button.dataset["optionId"] = option.id;
    button.dataset["kind"] = option.kind;
    if (index < MAX_SHORTCUT_OPTIONS) {
      // The digit is drawn by the stylesheet from this attribute rather than put in the text, so
      // the button's text stays the agent's option name (what tests and screen readers read);
      // `aria-keyshortcuts` tells assistive technology about the key instead.
      const digit = String(index + 1);
      button.dataset["shortcut"] = digit;
      button.setAttribute("aria-keyshortcuts", digit);
      button.title = `${option.name} (${digit})`;
    }
    button.disabled = answeredHere;
    button.addEventListener("click", () => {
      if (this.context.answered.has(key)) return;
      this.context.answered.add(key);
      for (const other of card.querySelectorAll("button")) other.disabled = true;
      button.classList.add("chosen");
      this.context.post({ type: "answerPermission", key, optionId: option.id });
    });
    return button;
  }
}

/** The one line that replaces the options once the request is settled. */
function outcomeElement(options: PermissionOptionView[], outcome: PermissionOutcome): HTMLElement {
  switch (outcome.type) {
    case "selected": {
      const chosen = options.find((option) => option.id === outcome.optionId);
      if (chosen === undefined) return element("div", "permission-outcome", `Answered: ${outcome.optionId}`);
      return element("div", "permission-outcome", OUTCOME_LABELS[chosen.kind] ?? chosen.name);
    }
    case "auto": {
      const by = decidedBy(outcome.by);
      const text = outcome.allowed
        ? `Auto-approved by ${by}`
        : `Rejected by ${by}${outcome.reason !== null && outcome.reason !== "" ? `: ${outcome.reason}` : ""}`;
      const line = element("div", "permission-auto", text);
      line.dataset["allowed"] = String(outcome.allowed);
      const chosen = options.find((option) => option.id === outcome.optionId);
      if (chosen !== undefined) line.title = `Answered “${chosen.name}” for you`;
      return line;
    }
    case "cancelled":
      return element("div", "permission-note", "Cancelled before you answered");
    case "withdrawn":
      return element("div", "permission-note", "The agent withdrew this request");
  }
  // An outcome a newer host added: shown as data rather than dropped.
  return rawJson(outcome);
}

function decidedBy(by: DecidedBy): string {
  switch (by.type) {
    case "rule":
      return `rule “${by.description}” (${SCOPE_LABELS[by.scope] ?? by.scope})`;
    case "mode":
      return `${modeLabel(by.mode)} mode`;
  }
  // A kind of decision a newer host added: still say it was not the person.
  return "Tether";
}

function rawJson(value: unknown): HTMLElement {
  let text: string;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch {
    // A value that came through postMessage is plain JSON, but a cycle must not break the card.
    text = String(value);
  }
  if (text.length > MAX_RAW_JSON) text = `${text.slice(0, MAX_RAW_JSON)}\n…`;
  return element("pre", "tool-raw-json", text);
}
