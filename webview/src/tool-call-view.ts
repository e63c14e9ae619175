// A tool call card: title, kind, live status, content, locations, and the permission request
// attached to it.
//
// Everything on it reads as words a person uses: the kind is an icon named in its tooltip and
// label, the status a word ("Running", "Finished", "Waiting for you"), paths are the engine's
// workspace-relative labels as links that open the file, raw input and output wait behind a
// "Raw" disclosure, and a long text output is cut to its first lines until the person asks for
// all of it. A diff the engine says a file change card shows (`change`) is not drawn again: the
// card links to that change instead, so one change is shown once.
//
// A tool call changes as a whole (the host sends `replace`), so the card refills itself from
// the new entry; the permission card is kept as is when nothing about it changed, so a status
// update does not steal the focus from the option the person is about to press. Terminal cards
// are kept too: they are fed by terminal patches, not by the tool call (see terminal-view.ts).
// What the person opened on the card (Raw, an output shown whole) is kept in the entry's state,
// outside the card, so a card rebuilt after scrolling out of the thread's window shows the same.
//
// The card never decides what an option means: it shows the agent's options in the agent's
// order, sends the chosen option's id, and disables itself until the host's next patch shows
// the outcome. Once there is one, the options give way to a single line saying how the request
// was settled: by the person, by a rule or the mode (the engine decided, the card only words it),
// or not at all because the turn was cancelled or the agent withdrew the request.

import { COLLAPSED_LINES, countLines, firstLines, showAllButton } from "./collapsed-lines";
import { diffBlock, diffStats, hiddenLinesNote } from "./diff-view";
import { element, icon } from "./element";
import { changeLink } from "./file-change-view";
import type { MarkdownRenderer } from "./markdown";
import { pathLink } from "./path-link";
import { SCOPE_LABELS, modeLabel } from "./permission-labels";
import { rawBlock, rawDisclosure } from "./raw-json";
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
import { keepInTabOrder } from "./thread-keys";

/** Longest tool text rendered as markdown; tools can return whole files. */
const MAX_TOOL_TEXT = 20_000;

export interface ToolCallContext {
  renderer: MarkdownRenderer;
  post: PostIntent;
  /** Permission requests the person answered here whose outcome the host has not sent yet. */
  answered: Set<PermissionKey>;
  /**
   * Called when a request waiting for the person first appears, with the button to focus and
   * the tool call's title to announce (and the request's key).
   */
  permissionShown(focusTarget: HTMLButtonElement, title: string, key: PermissionKey): void;
  /** Called when the person answered a request with its card's button (the button is going). */
  permissionAnswered(): void;
  /** Where the cards of the terminals tool calls show come from. */
  terminals: TerminalCards;
}

/** Options past the ninth have no digit: the keys 1 to 9 choose the first nine. */
const MAX_SHORTCUT_OPTIONS = 9;

/** How each status reads, and the codicon beside it. */
export const STATUS_LABELS: Record<ToolStatus, { text: string; icon: string }> = {
  pending: { text: "Starting", icon: "circle-outline" },
  in_progress: { text: "Running", icon: "loading" },
  waiting_for_confirmation: { text: "Waiting for you", icon: "bell-dot" },
  completed: { text: "Finished", icon: "check" },
  failed: { text: "Failed", icon: "error" },
  // The person stopped the turn: no failure of the tool's, so not in the error colour.
  cancelled: { text: "Stopped", icon: "debug-stop" },
};

/** ACP's tool kinds as codicons, with the words a tooltip and a screen reader give them. */
export const KIND_ICONS: Record<string, { icon: string; label: string }> = {
  read: { icon: "eye", label: "Read" },
  edit: { icon: "edit", label: "Edit" },
  delete: { icon: "trash", label: "Delete" },
  move: { icon: "arrow-right", label: "Move" },
  search: { icon: "search", label: "Search" },
  execute: { icon: "terminal", label: "Run a command" },
  think: { icon: "lightbulb", label: "Think" },
  fetch: { icon: "globe", label: "Fetch" },
  switch_mode: { icon: "arrow-swap", label: "Switch mode" },
  other: { icon: "tools", label: "Tool" },
};

/** What the person opened on a tool call's card; the thread keeps it while the card comes and goes. */
export interface ToolCallState {
  /** The Raw disclosure is open. */
  rawOpen: boolean;
  /** The text outputs shown whole, by their place in the content. */
  expanded: Set<number>;
}

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
  allow_always: "Always allowed (this session)",
  reject_once: "Rejected",
  reject_always: "Always rejected (this session)",
};

/** What an "always" option does beyond this request, for its tooltip: Tether's rule is the
 * session's, whatever the agent's option is called. */
const ALWAYS_SCOPES: Record<string, string> = {
  allow_always: "Tether allows the same for the rest of this session; the rules panel can keep it for the workspace",
  reject_always: "Tether rejects the same for the rest of this session; the rules panel can keep it for the workspace",
};

export class ToolCallCard {
  readonly element: HTMLElement;
  private permissionCard: HTMLElement | null = null;
  private permissionSignature = "";
  /** The request the card shows: another request on the same tool call is announced anew. */
  private permissionKey: PermissionKey | null = null;
  /** The terminal cards this tool call shows, by terminal id, kept across its updates. */
  private readonly terminalCards = new Map<string, TerminalCard>();

  constructor(
    index: number,
    private readonly context: ToolCallContext,
    private readonly state: ToolCallState = { rawOpen: false, expanded: new Set() },
  ) {
    this.element = element("div", "entry tool-call");
    this.element.dataset["index"] = String(index);
  }

  update(call: ToolCallView): void {
    this.element.dataset["status"] = call.status;
    this.element.dataset["kind"] = call.kind;

    const children: HTMLElement[] = [this.header(call)];
    const shownTerminals = new Set<string>();
    // A location that is a diff's file is said once, by the diff's header, which opens it at the
    // location's line.
    const diffLines = new Map<string, number | null>();
    for (const item of call.content) if (item.type === "diff") diffLines.set(item.path, null);
    for (const location of call.locations) {
      if (diffLines.get(location.path) === null) diffLines.set(location.path, location.line);
    }
    if (call.content.length > 0) {
      const content = element("div", "tool-content");
      call.content.forEach((item, place) => content.append(this.renderContent(item, place, shownTerminals, diffLines)));
      children.push(content);
    }
    for (const card of this.terminalCards.values()) card.setTitle(titleText(call.title));
    for (const [id, card] of this.terminalCards) {
      if (shownTerminals.has(id)) continue;
      this.context.terminals.release(card);
      this.terminalCards.delete(id);
    }
    const locationsShown = call.locations.filter((location) => !diffLines.has(location.path));
    if (locationsShown.length > 0) {
      const locations = element("ul", "tool-locations");
      locations.setAttribute("aria-label", "Files");
      for (const location of locationsShown) {
        const item = element("li");
        item.append(pathLink("tool-location", this.context.post, location.path, location.label, location.line));
        locations.append(item);
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

  /** Gives back the terminal cards this card shows: it is no longer drawn. */
  dispose(): void {
    for (const card of this.terminalCards.values()) this.context.terminals.release(card);
    this.terminalCards.clear();
  }

  /** The kind's icon, the title and the status, on one line; the card is named after them. */
  private header(call: ToolCallView): HTMLElement {
    const kind = KIND_ICONS[call.kind] ?? KIND_ICONS["other"]!;
    const kindIcon = element("span", "tool-kind");
    kindIcon.append(icon(kind.icon));
    kindIcon.setAttribute("role", "img");
    kindIcon.setAttribute("aria-label", kind.label);
    kindIcon.title = kind.label;
    const status = STATUS_LABELS[call.status] ?? { text: "Running", icon: "loading" };
    const statusBadge = element("span", "tool-status");
    const statusIcon = icon(status.icon);
    if (status.icon === "loading") statusIcon.classList.add("codicon-modifier-spin");
    statusBadge.append(statusIcon, status.text);
    const header = element("div", "tool-header");
    const title = element("span", "tool-title");
    title.append(...titleParts(call.title));
    header.append(kindIcon, title, statusBadge);
    this.element.setAttribute("role", "group");
    this.element.setAttribute("aria-label", `${kind.label}: ${titleText(call.title)}, ${status.text}`);
    return header;
  }

  private renderContent(
    item: ToolContent,
    place: number,
    shownTerminals: Set<string>,
    diffLines: ReadonlyMap<string, number | null>,
  ): HTMLElement {
    switch (item.type) {
      case "text":
        return this.textOutput(item.text, place);
      case "diff": {
        const diff = element("div", "tool-diff");
        const head = element("div", "tool-diff-head");
        head.append(
          pathLink("tool-diff-path", this.context.post, item.path, item.label, diffLines.get(item.path) ?? null, item.label),
          diffStats("tool-diff-stats", item.added, item.removed),
        );
        diff.append(head);
        if (item.change !== null && item.change !== undefined) {
          // The change card below shows this change with its review: link to it, once.
          diff.dataset["change"] = String(item.change);
          diff.append(changeLink(this.element, item.change, item.label));
          return diff;
        }
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
    return rawBlock(item);
  }

  /**
   * A tool's text, as markdown. Past [`COLLAPSED_LINES`] lines only the first ones show until the
   * person presses "Show all N lines" (a button, so Enter and Space work), which becomes
   * "Show less"; the choice survives the card's redraws.
   */
  private textOutput(text: string, place: number): HTMLElement {
    const output = element("div", "tool-output");
    const markdown = element("div", "markdown");
    const shown = text.length > MAX_TOOL_TEXT ? text.slice(0, MAX_TOOL_TEXT) : text;
    const lineCount = countLines(text);
    const collapsible = lineCount > COLLAPSED_LINES;
    const expanded = collapsible && this.state.expanded.has(place);
    // Collapsed, only the first lines are rendered: the rest of a long output costs nothing.
    const rendered = collapsible && !expanded ? firstLines(shown, COLLAPSED_LINES) : shown;
    // A tool's output is lines (a test run, a listing), as often as it is markdown: its line
    // breaks stay, where markdown would join "running 3 tests\ntest a ... ok" into one line.
    markdown.innerHTML = this.context.renderer.render(rendered, { breaks: true });
    if (expanded && shown.length < text.length) {
      markdown.append(element("p", "tool-truncated", `… ${text.length - shown.length} more characters`));
    }
    output.append(markdown);
    if (!collapsible) return output;
    output.dataset["collapsed"] = String(!expanded);
    markdown.id = `tool-output-${this.element.dataset["index"]}-${place}`;
    const toggle = showAllButton("tool-output-toggle", markdown, expanded, lineCount);
    toggle.addEventListener("click", () => {
      if (this.state.expanded.has(place)) this.state.expanded.delete(place);
      else this.state.expanded.add(place);
      const next = this.textOutput(text, place);
      output.replaceWith(next);
      next.querySelector<HTMLButtonElement>(".tool-output-toggle")?.focus({ preventScroll: true });
    });
    output.append(toggle);
    return output;
  }

  private renderRaw(input: unknown, output: unknown): HTMLElement | null {
    const hasInput = input !== null && input !== undefined;
    const hasOutput = output !== null && output !== undefined;
    if (!hasInput && !hasOutput) return null;
    const parts: Array<{ label: string | null; value: unknown }> = [];
    if (hasInput) parts.push({ label: "Input", value: input });
    if (hasOutput) parts.push({ label: "Output", value: output });
    return rawDisclosure("tool-raw", parts, this.state.rawOpen, (open) => {
      this.state.rawOpen = open;
    });
  }

  private permission(call: ToolCallView, permission: PermissionView): HTMLElement {
    const answeredHere = this.context.answered.has(permission.key);
    const command = call.command;
    // Once answered, a terminal card showing the command says it already: the outcome line
    // stands alone then. The terminal often arrives after the answer, so it is part of what the
    // card is drawn from.
    const commandShown = permission.outcome !== null && call.content.some((item) => item.type === "terminal");
    const signature = JSON.stringify([permission, answeredHere, command, commandShown, call.title]);
    if (this.permissionCard !== null && signature === this.permissionSignature) {
      return this.permissionCard;
    }
    const firstAppearance = this.permissionKey !== permission.key;
    this.permissionKey = permission.key;
    this.permissionSignature = signature;
    const card = element("div", "permission-card");
    card.dataset["key"] = String(permission.key);
    card.setAttribute("role", "group");
    card.setAttribute("aria-label", `Permission request: ${titleText(call.title)}`);
    this.permissionCard = card;
    // The command is what an execute request is about; the title often only paraphrases it.
    if (command !== null && !commandShown) card.append(element("code", "permission-command", `$ ${command}`));
    // A path that goes through a symbolic link is shown with where it leads: that is the file
    // the answer lets the agent touch.
    for (const link of permission.links ?? []) {
      card.append(element("div", "permission-link", link));
    }

    const outcome = permission.outcome;
    if (outcome === null) {
      card.dataset["state"] = "waiting";
      const asker = permission.fromTether === true ? "Tether asks before this goes ahead:" : "The agent asks for permission:";
      const prompt = element("div", "permission-prompt");
      prompt.append(icon(permission.fromTether === true ? "shield" : "question"), element("span", undefined, asker));
      card.append(prompt);
      const options = element("div", "permission-options");
      permission.options.forEach((option, index) => {
        options.append(this.optionButton(permission.key, option, index, answeredHere, card));
      });
      card.append(options);
      if (firstAppearance && !answeredHere) {
        const target = permission.options.findIndex((option) => option.kind.startsWith("allow"));
        const button = options.children.item(Math.max(target, 0));
        if (button instanceof HTMLButtonElement) this.context.permissionShown(button, titleText(call.title), permission.key);
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
    // A question waiting for the person: Tab reaches it without going through the thread's entries.
    keepInTabOrder(button);
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
    const scope = ALWAYS_SCOPES[option.kind];
    if (scope !== undefined) button.title = `${button.title || option.name}: ${scope}`;
    button.disabled = answeredHere;
    button.addEventListener("click", () => {
      if (this.context.answered.has(key)) return;
      this.context.answered.add(key);
      for (const other of card.querySelectorAll("button")) other.disabled = true;
      button.classList.add("chosen");
      this.context.post({ type: "answerPermission", key, optionId: option.id });
      this.context.permissionAnswered();
    });
    return button;
  }
}

/** The one line that replaces the options once the request is settled. */
/**
 * A tool call's title as the person reads it. Agents quote commands and paths in titles the way
 * Markdown writes inline code (Claude Code titles a command "`npm test`"): a span between two runs
 * of as many backticks is drawn as code, without the backticks. Nothing else in a title is read
 * as Markdown: it is one line of the agent's words, and a `*` or `_` in a command stays as typed.
 */
export function titleParts(title: string): (string | HTMLElement)[] {
  const parts: (string | HTMLElement)[] = [];
  // A run of backticks, the shortest text after it, and a run of the same length that no other
  // backtick follows (CommonMark's code span).
  const codeSpan = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;
  let shown = 0;
  for (const match of title.matchAll(codeSpan)) {
    if (match.index > shown) parts.push(title.slice(shown, match.index));
    // CommonMark strips one space on each side, so that "`` `x` ``" can show backticks.
    let code = match[2]!;
    if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "") {
      code = code.slice(1, -1);
    }
    parts.push(element("code", "tool-title-code", code));
    shown = match.index + match[0].length;
  }
  if (shown < title.length) parts.push(title.slice(shown));
  return parts;
}

/** A tool call's title as words to announce or name the card by: as drawn, without backticks. */
export function titleText(title: string): string {
  return titleParts(title)
    .map((part) => (typeof part === "string" ? part : part.textContent))
    .join("");
}

function outcomeElement(options: PermissionOptionView[], outcome: PermissionOutcome): HTMLElement {
  switch (outcome.type) {
    case "selected": {
      const chosen = options.find((option) => option.id === outcome.optionId);
      // An option the request no longer lists: the person answered, which is what matters.
      const text = chosen === undefined ? "Answered" : (OUTCOME_LABELS[chosen.kind] ?? chosen.name);
      return withIcon(element("div", "permission-outcome"), chosen?.kind.startsWith("allow") === true ? "check" : "close", text);
    }
    case "auto": {
      const by = decidedBy(outcome.by);
      const text = outcome.allowed
        ? `Auto-approved by ${by}`
        : `Rejected by ${by}${outcome.reason !== null && outcome.reason !== "" ? `: ${outcome.reason}` : ""}`;
      const line = withIcon(element("div", "permission-auto"), outcome.allowed ? "check" : "close", text);
      line.dataset["allowed"] = String(outcome.allowed);
      const chosen = options.find((option) => option.id === outcome.optionId);
      if (chosen !== undefined) line.title = `Answered “${chosen.name}” for you`;
      return line;
    }
    case "cancelled":
      return withIcon(element("div", "permission-note"), "circle-slash", "Cancelled before you answered");
    case "withdrawn":
      return withIcon(element("div", "permission-note"), "circle-slash", "The agent withdrew this request");
  }
  // An outcome a newer host added: shown as data rather than dropped.
  return rawBlock(outcome);
}

/** `line` holding a codicon and then `text`. */
function withIcon(line: HTMLElement, name: string, text: string): HTMLElement {
  line.append(icon(name), element("span", undefined, text));
  return line;
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

