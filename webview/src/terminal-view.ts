// The terminal card inside a tool call: the command line, where and by whom it runs, how it is
// going (running, its exit, a failure), how long it has taken, Stop and "Open in terminal", and
// the tail of its output with the program's colours.
//
// The engine has already interpreted the escape sequences: a view's lines are styled spans, and
// this card only turns styles into classes and text into text nodes (output is untrusted; it is
// never parsed as HTML). Palette colours map to VS Code's terminal theme variables in the
// stylesheet. Exact (24-bit) colours cannot be a fixed set of classes, and the CSP allows neither
// style attributes nor `<style>` elements, so each exact colour gets a class defined on demand in
// a constructed stylesheet (`new CSSStyleSheet()` + `document.adoptedStyleSheets`, which the CSP
// does not restrict).
//
// Terminals change far more often than the tool calls that show them (a command printing fast
// sends a new view every frame), so their views are kept apart from the entries: a terminal
// patch redraws that terminal's cards and nothing else. [`TerminalCards`] keeps every card by
// terminal id for that; a tool call asks it for the card of each terminal it shows, and a card
// whose view has not arrived yet says "Starting…" until it does.
//
// While a command runs, the card counts its elapsed time on from the view's `elapsedMs` with the
// webview's own clock, on one timer shared by all running cards, stopped when none runs. Only
// the cards of tool calls drawn in the thread exist (the thread is virtualized), so a command
// running in a tool call scrolled far out of sight keeps no timer going; the time its view
// arrived is kept per terminal, so a card drawn again later counts on from the right moment.

import { element, icon } from "./element";
import { FollowBottom } from "./follow-bottom";
import type { Clock } from "./markdown-view";
import type { ChangeSet } from "./model";
import type {
  PostIntent,
  TerminalColor,
  TerminalLine,
  TerminalState,
  TerminalStyle,
  TerminalView,
} from "./protocol";
import { keepInTabOrder } from "./thread-keys";

/** Calls `tick` about every `intervalMs` milliseconds until the returned function is called. */
export type Repeat = (tick: () => void, intervalMs: number) => () => void;

/** The page's own timer: what the webview uses outside tests. */
export const repeatWithInterval: Repeat = (tick, intervalMs) => {
  const timer = setInterval(tick, intervalMs);
  return () => clearInterval(timer);
};

/** Elapsed times are shown to the second (tenths under ten seconds), so a second is enough. */
const TICK_MS = 1000;

/**
 * The 16 theme colours, in ANSI order (0–7 normal, 8–15 bright), as the stylesheet's class
 * suffixes: `term-fg-bright-red` is drawn with `--vscode-terminal-ansiBrightRed`.
 */
const PALETTE_NAMES = [
  "black",
  "red",
  "green",
  "yellow",
  "blue",
  "magenta",
  "cyan",
  "white",
  "bright-black",
  "bright-red",
  "bright-green",
  "bright-yellow",
  "bright-blue",
  "bright-magenta",
  "bright-cyan",
  "bright-white",
] as const;

/**
 * How many exact colours get a class of their own. A program printing every colour there is
 * must not grow the stylesheet without end; text past the limit keeps the default colour.
 */
const MAX_RGB_CLASSES = 4096;

type ColorLayer = "fg" | "bg";

/** Classes for exact colours, each defined the first time a span needs it. */
export class RgbColorSheet {
  /** `undefined` until first needed; `null` where constructed stylesheets are unavailable. */
  private sheet: CSSStyleSheet | null | undefined;
  private readonly defined = new Set<string>();

  /** The class that draws `hex` (`#rrggbb`) as the text or background colour, if it can. */
  classFor(layer: ColorLayer, hex: string): string | null {
    // The hex ends up inside a CSS rule: anything but six hex digits could inject other CSS.
    const digits = /^#([0-9a-fA-F]{6})$/.exec(hex)?.[1]?.toLowerCase();
    if (digits === undefined) return null;
    const name = `term-${layer}-rgb-${digits}`;
    if (this.defined.has(name)) return name;
    if (this.defined.size >= MAX_RGB_CLASSES) return null;
    const sheet = this.ensureSheet();
    if (sheet === null) return null;
    const property = layer === "fg" ? "color" : "background-color";
    sheet.insertRule(`.${name} { ${property}: #${digits}; }`, sheet.cssRules.length);
    this.defined.add(name);
    return name;
  }

  private ensureSheet(): CSSStyleSheet | null {
    if (this.sheet !== undefined) return this.sheet;
    if (typeof CSSStyleSheet !== "function") {
      this.sheet = null;
      return null;
    }
    const sheet = new CSSStyleSheet();
    // Appended, never replacing: other code may adopt sheets of its own. A DOM without adopted
    // stylesheets (jsdom) simply keeps the list as a property.
    document.adoptedStyleSheets = [...(document.adoptedStyleSheets ?? []), sheet];
    this.sheet = sheet;
    return sheet;
  }
}

/** The classes a span of output is drawn with. */
export function styleClasses(style: TerminalStyle, colors: RgbColorSheet): string[] {
  const classes: string[] = [];
  const fg = colorClass("fg", style.fg, colors);
  if (fg !== null) classes.push(fg);
  const bg = colorClass("bg", style.bg, colors);
  if (bg !== null) classes.push(bg);
  if (style.bold) classes.push("term-bold");
  if (style.dim) classes.push("term-dim");
  if (style.italic) classes.push("term-italic");
  if (style.underline) classes.push("term-underline");
  if (style.strikethrough) classes.push("term-strike");
  return classes;
}

function colorClass(layer: ColorLayer, color: TerminalColor | null, colors: RgbColorSheet): string | null {
  if (color === null) return null;
  switch (color.type) {
    case "palette": {
      const name = PALETTE_NAMES[color.index];
      return name === undefined ? null : `term-${layer}-${name}`;
    }
    case "rgb":
      return colors.classFor(layer, color.hex);
  }
  // A kind of colour a newer host added: the text still shows, in the default colour.
  return null;
}

/**
 * Whether `title` holds `command` as words of its own: "Run ls -la" quotes `ls -la`, "Check
 * tools" does not quote `ls`.
 */
function quotes(title: string, command: string): boolean {
  for (let at = title.indexOf(command); at >= 0; at = title.indexOf(command, at + 1)) {
    const before = title[at - 1];
    const after = title[at + command.length];
    if ((before === undefined || /\s/.test(before)) && (after === undefined || /[\s.,:;!?)]/.test(after))) return true;
  }
  return false;
}

/** "0.4 s", "12 s", "1 min 3 s", "2 h 5 min": as precise as is worth reading at a glance. */
export function formatElapsed(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) return `${(Math.floor(clamped / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(clamped / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The codicon before each outcome's words. */
const STATUS_ICONS: Record<string, string> = {
  running: "loading",
  success: "check",
  error: "error",
  stopped: "debug-stop",
};

/** The status badge's text, and whether it reads as a success, an error or a stop. */
export function describeState(state: TerminalState): { text: string; outcome: string } {
  switch (state.type) {
    case "running":
      return { text: "Running", outcome: "running" };
    case "failed":
      return { text: "Failed", outcome: "error" };
    case "exited":
      if (state.killed) {
        return { text: state.signal === null ? "Stopped" : `Killed (${state.signal})`, outcome: "stopped" };
      }
      if (state.exitCode !== null) {
        return state.exitCode === 0
          ? { text: "Finished", outcome: "success" }
          : { text: `Failed (exit code ${state.exitCode})`, outcome: "error" };
      }
      // Ended by a signal Tether did not send (a crash, an outside `kill`).
      if (state.signal !== null) return { text: `Killed (${state.signal})`, outcome: "error" };
      return { text: "Finished", outcome: "success" };
  }
  // A state a newer host added: say what it is called rather than nothing.
  return { text: "Ended", outcome: "unknown" };
}

/**
 * One terminal's card. Its nodes are made once and refilled on each view, so a button the person
 * focused keeps the focus while output streams in, and the output keeps its scroll position.
 */
export class TerminalCard {
  readonly element: HTMLElement;
  private view: TerminalView | undefined;
  /** The clock's time when the current view arrived; a running command counts on from there. */
  private receivedAt = 0;
  /** Set when the person pressed Stop; the button stays disabled until the command ends. */
  private stopRequested = false;
  private readonly command = element("code", "terminal-command");
  private readonly status = element("span", "terminal-status");
  private readonly elapsed = element("span", "terminal-elapsed");
  private readonly cwd = element("span", "terminal-cwd");
  private readonly origin = element("span", "terminal-origin", "run by the agent");
  private readonly stopButton = element("button", "terminal-stop", "Stop");
  private readonly openButton = element("button", "terminal-open", "Open in terminal");
  private readonly failure = element("div", "terminal-failure");
  private readonly output = element("pre", "terminal-output");
  private readonly follow: FollowBottom;
  /** The card's rows, shown once a view has arrived (the placeholder until then). */
  private readonly rows: HTMLElement[];
  private readonly starting = element("div", "terminal-starting", "Starting…");
  /** The words of the tool call's title above the card (see `setTitle`). */
  private title = "";

  constructor(
    readonly terminalId: string,
    private readonly post: PostIntent,
    private readonly clock: Clock,
    private readonly colors: RgbColorSheet,
  ) {
    this.element = element("div", "terminal-card");
    this.element.dataset["terminalId"] = terminalId;
    this.stopButton.type = "button";
    this.openButton.type = "button";
    // Shown only while a command Tether runs goes on: Tab reaches it without going through the
    // thread's entries.
    keepInTabOrder(this.stopButton);
    // The buttons read their words; the icons only help the eye find them.
    this.openButton.prepend(icon("terminal"));
    this.openButton.title = "Show this command in VS Code's terminal";
    this.stopButton.addEventListener("click", () => {
      if (this.stopRequested) return;
      this.stopRequested = true;
      this.showStopButton();
      this.post({ type: "terminal", intent: { type: "stop", terminal: this.terminalId } });
    });
    this.openButton.addEventListener("click", () => {
      this.post({ type: "terminal", intent: { type: "open", terminal: this.terminalId } });
    });
    this.status.setAttribute("role", "status");
    this.output.tabIndex = 0;
    this.output.setAttribute("aria-label", "Command output");
    this.follow = new FollowBottom(this.output);

    const header = element("div", "terminal-header");
    // No icon of its own: the tool call's card around it already shows the terminal's.
    header.append(this.command, this.status, this.elapsed);
    const meta = element("div", "terminal-meta");
    const actions = element("div", "terminal-actions");
    actions.append(this.stopButton, this.openButton);
    meta.append(this.cwd, this.origin, actions);
    this.rows = [header, meta, this.failure, this.output];
  }

  get running(): boolean {
    return this.view?.state.type === "running";
  }

  /**
   * The words of the title of the tool call that shows this card. A title that already quotes
   * the command ("Run `npm test`") is not followed by "$ npm test" again: the card's line then
   * starts with how the command is doing.
   */
  setTitle(title: string): void {
    if (title === this.title) return;
    this.title = title;
    this.showCommand();
  }

  private showCommand(): void {
    const command = this.view?.command ?? "";
    this.command.hidden = command === "" || quotes(this.title, command);
  }

  /** Shows `view` (which arrived at the clock's `receivedAt`), or "Starting…" while none has. */
  update(view: TerminalView | undefined, receivedAt = this.clock()): void {
    this.view = view;
    this.receivedAt = receivedAt;
    if (view === undefined) {
      this.element.dataset["state"] = "starting";
      this.element.replaceChildren(this.starting);
      return;
    }
    if (this.element.firstChild !== this.rows[0]) this.element.replaceChildren(...this.rows);
    this.element.dataset["state"] = view.state.type;
    this.element.dataset["origin"] = view.origin;
    this.element.setAttribute("aria-label", `Terminal: ${view.command}`);

    this.command.textContent = `$ ${view.command}`;
    this.command.title = view.command;
    this.showCommand();
    this.cwd.hidden = view.cwd === null || view.cwd === "";
    this.cwd.textContent = this.cwd.hidden ? "" : `in ${view.cwd}`;
    this.cwd.title = view.cwd ?? "";
    this.origin.hidden = view.origin !== "agent";

    const { text, outcome } = describeState(view.state);
    const statusIcon = icon(STATUS_ICONS[outcome] ?? "circle-outline");
    if (outcome === "running") statusIcon.classList.add("codicon-modifier-spin");
    this.status.replaceChildren(statusIcon, text);
    this.status.dataset["outcome"] = outcome;
    this.failure.hidden = view.state.type !== "failed";
    this.failure.textContent = view.state.type === "failed" ? view.state.message : "";
    if (!this.running) this.stopRequested = false;
    this.showStopButton();
    this.showElapsed(this.clock());
    this.fillOutput(view);
  }

  /** Redraws the elapsed time as of `now` (the clock's time). */
  showElapsed(now: number): void {
    const view = this.view;
    if (view === undefined) return;
    const counted = this.running ? Math.max(0, now - this.receivedAt) : 0;
    this.elapsed.textContent = formatElapsed(view.elapsedMs + counted);
  }

  /** Keeps the newest output in sight unless the person scrolled up. After the frame's writes. */
  pin(): void {
    if (this.view !== undefined && this.element.isConnected) this.follow.pin();
  }

  private showStopButton(): void {
    // Only commands Tether runs can be stopped from here; an agent's own stop with its turn.
    const hidden = !this.running || this.view?.origin !== "client";
    // A focused button that is disabled or hidden drops the focus to the page: it goes on to
    // "Open in terminal", beside it, instead.
    if ((hidden || this.stopRequested) && this.stopButton.ownerDocument.activeElement === this.stopButton) {
      this.openButton.focus({ preventScroll: true });
    }
    this.stopButton.hidden = hidden;
    this.stopButton.disabled = this.stopRequested;
    this.stopButton.replaceChildren(icon("debug-stop"), this.stopRequested ? "Stopping…" : "Stop");
  }

  private fillOutput(view: TerminalView): void {
    const nodes: Node[] = [];
    if (view.hiddenLines > 0) {
      const count = view.hiddenLines === 1 ? "1 earlier line" : `${view.hiddenLines} earlier lines`;
      nodes.push(element("span", "terminal-hidden", `… ${count} (Open in terminal to see all)`));
      if (view.lines.length > 0) nodes.push(document.createTextNode("\n"));
    }
    view.lines.forEach((line, index) => {
      nodes.push(this.lineElement(line));
      if (index < view.lines.length - 1) nodes.push(document.createTextNode("\n"));
    });
    if (nodes.length === 0 && view.state.type === "exited") {
      nodes.push(element("span", "terminal-empty", "No output"));
    }
    this.output.hidden = nodes.length === 0;
    this.output.replaceChildren(...nodes);
  }

  private lineElement(line: TerminalLine): HTMLElement {
    const node = element("span", "terminal-line");
    for (const span of line.spans) {
      const classes = styleClasses(span.style, this.colors);
      node.append(element("span", classes.join(" "), span.text));
    }
    return node;
  }
}

/**
 * Every terminal card of the chat, by terminal id, fed from the model's terminals: the one
 * place terminal patches reach the DOM, and the owner of the elapsed-time timer.
 */
export class TerminalCards {
  private views: ReadonlyMap<string, TerminalView> = new Map();
  /** When each terminal's view arrived, by the clock: a card drawn later counts on from there. */
  private readonly arrivals = new Map<string, number>();
  private readonly cards = new Map<string, Set<TerminalCard>>();
  private readonly colors = new RgbColorSheet();
  private stopTicking: (() => void) | null = null;

  constructor(
    private readonly post: PostIntent,
    private readonly clock: Clock,
    private readonly repeat: Repeat = repeatWithInterval,
  ) {}

  /**
   * Call once per frame before the entries are drawn: redraws the cards of the terminals that
   * changed. After a snapshot every card is forgotten, as every tool call is drawn anew.
   */
  render(terminals: ReadonlyMap<string, TerminalView>, changes: ChangeSet): void {
    this.views = terminals;
    const now = this.clock();
    if (changes.reset) {
      this.cards.clear();
      this.arrivals.clear();
      for (const id of terminals.keys()) this.arrivals.set(id, now);
    } else {
      for (const id of changes.terminals) {
        this.arrivals.set(id, now);
        for (const card of this.cards.get(id) ?? []) card.update(terminals.get(id), now);
      }
    }
    this.syncTicking();
  }

  /** A new card for terminal `id`, showing its view as of now; give it back with `release`. */
  acquire(id: string): TerminalCard {
    const card = new TerminalCard(id, this.post, this.clock, this.colors);
    card.update(this.views.get(id), this.arrivals.get(id));
    let cards = this.cards.get(id);
    if (cards === undefined) {
      cards = new Set();
      this.cards.set(id, cards);
    }
    cards.add(card);
    this.syncTicking();
    return card;
  }

  /** Forgets a card its tool call no longer shows. */
  release(card: TerminalCard): void {
    const cards = this.cards.get(card.terminalId);
    cards?.delete(card);
    if (cards?.size === 0) this.cards.delete(card.terminalId);
    this.syncTicking();
  }

  /** Call once per frame after all of the frame's DOM writes. */
  pin(): void {
    for (const card of this.allCards()) card.pin();
  }

  private *allCards(): Iterable<TerminalCard> {
    for (const cards of this.cards.values()) yield* cards;
  }

  private syncTicking(): void {
    let anyRunning = false;
    for (const card of this.allCards()) {
      if (card.running) {
        anyRunning = true;
        break;
      }
    }
    if (anyRunning && this.stopTicking === null) {
      this.stopTicking = this.repeat(() => this.tick(), TICK_MS);
    } else if (!anyRunning && this.stopTicking !== null) {
      this.stopTicking();
      this.stopTicking = null;
    }
  }

  private tick(): void {
    const now = this.clock();
    for (const card of this.allCards()) if (card.running) card.showElapsed(now);
  }
}
