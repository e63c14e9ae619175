// The scrolling list of entries (`main.thread`), virtualized: only the entries near what the
// person sees are in the DOM, whatever the thread's length.
//
// The DOM is a spacer standing for the entries above the window, the window's entries (one node
// each, `data-index` their place in the thread), and a spacer for the entries below it. The
// heights of the entries a frame built or changed are measured after its writes (and by a
// ResizeObserver when they change between frames: a thought opened, a terminal's output growing,
// the sidebar resized); the others' are estimated (entry-sizes.ts), and only decide the spacers'
// heights.
// A thread of 10,000 entries is then a few dozen nodes: loading it, or a burst of entries, costs
// the entries in sight, and a frame's layout is as cheap as a short thread's.
//
// Where the person is, is an entry and an offset into it (a `Place`), not a pixel: when a height
// above changes (an estimate replaced by a measurement, an entry above growing) the entry they
// read stays where it was on screen (scroll anchoring; the browser's own is off, the view does
// it once per frame). At the end of the thread the view follows the end instead, as a turn
// streams, until the person scrolls up; each session in the tabs keeps its own place.
//
// A frame applies what changed to the entries drawn (new and replaced ones are built or refilled,
// agent messages that grew are extended in place; an entry out of the window only has its height
// marked as a guess again), then moves the window to where the person is: the entries in sight
// first, then a margin above and below. Building an entry costs its script and then its layout
// (shaping its text is most of it), paid when it is measured; the view keeps a running average
// of the two together, and builds in a frame only as many entries as fit in [`FRAME_BUDGET_MS`]
// at that cost, a few at a time ([`ENTRIES_PER_PASS`]) so that a cost that grew (a busy machine,
// a heavier kind of entry) stops the frame after one small step rather than after many. A burst of entries is so drawn in frame-sized slices, the newest (in sight)
// first, and the frame asks for another while the window is not complete. While the end is
// followed and entries arrive faster than a window's worth a frame (an agent replaying a long
// session, a burst of tool calls), every window drawn would be gone by the next frame: the window
// then jumps to the new end at most every [`JUMP_INTERVAL_MS`], showing the last one meanwhile,
// which leaves the main thread (in a browser, VS Code's own) to the messages bringing the
// entries in. Agent messages whose new text could not be shown this frame (see
// MarkdownView's rationing) are remembered and flushed again on the next one.
//
// Views that leave the window are destroyed, and built again from the model when they come
// back, rather than kept detached: a kept view would hold its nodes (a 10,000-entry thread's
// 120,000) and its highlighted code for as long as the thread lives, and building one entry costs
// well under a millisecond. What the model does not hold survives outside the views instead:
// opened thoughts in the saved UI state, and a tool call's opened Raw and expanded outputs, a
// notice's opened detail and a prompt being edited in the entry's `EntryState`, kept here by
// entry index. Terminal cards are fed from the model's terminals (terminal-view.ts), and a file
// change card is drawn from its entry. What is lost is only what a rebuild could not know and
// nobody misses: the scroll position inside a terminal's output, a button's "copied" check.

import type { ThoughtOpenState } from "./agent-message-view";
import { CodeBlocks } from "./code-block-view";
import { element } from "./element";
import { EntrySizes, HeightEstimates, entryKind } from "./entry-sizes";
import {
  type EntryContext,
  type EntryState,
  type EntryView,
  createEntryView,
  disposeEntryView,
  emptyEntryState,
  refillEntryView,
} from "./entry-views";
import { REVEAL_CHANGE_EVENT } from "./file-change-view";
import { isAtEnd } from "./follow-bottom";
import { type CodeHighlighter, LazyHighlighter } from "./highlighter";
import type { MarkdownRenderer } from "./markdown";
import type { Clock } from "./markdown-view";
import type { ChangeSet, ChatModel, ThreadEntry } from "./model";
import type { PermissionKey, SessionKey } from "./protocol";
import type { ToolCallContext } from "./tool-call-view";

export { attachmentLabel } from "./user-message-view";

/** Drawn beyond what is in sight, above and below, at least (more when the view is taller). */
const MIN_OVERSCAN_PX = 800;
/**
 * The window holds at least this many entries: a short thread is drawn whole, and a view not
 * laid out yet (hidden) has something to show when it is.
 */
const MIN_WINDOW_ENTRIES = 30;
/**
 * ... but not entries further than this beyond the margin around what is in sight. Thirty
 * replies of one long line each are hundreds of boxes (their pieces' groups, markdown-view.ts)
 * that the browser goes through on every frame that changes layout, painting and compositing,
 * however far out of sight, while thirty ordinary entries (a short thread, drawn whole) fit in
 * this.
 */
const MAX_WINDOW_EXTENT_PX = 12_000;
/** Time a frame may spend building and laying out entries; the rest follows in later frames. */
const FRAME_BUDGET_MS = 10;
/** What building and laying out one entry is assumed to cost (ms) before the view has timed it. */
const FIRST_ENTRY_COST_MS = 1;
/** The least an entry is taken to cost (ms), so that a clock too coarse to see it cannot lift the budget. */
const MIN_ENTRY_COST_MS = 0.05;
/** While following a thread that outruns the window, the window is drawn anew this often at most. */
const JUMP_INTERVAL_MS = 100;
/**
 * ... and, until it has not outrun the window for this long, only what is in sight is drawn: the
 * margin around it would be pushed out by the next entries before anyone saw it. Drawing it for
 * every jump of a burst of 10,000 entries kept the browser's renderer busy for most of the burst
 * (in code-server, the workbench and this webview share one, beside the extension host's engine
 * on the same cores).
 */
const OUTRUN_SETTLE_MS = 2 * JUMP_INTERVAL_MS;
/** Build, measure, adjust: a frame repeats it until the window stands still, at most this often. */
const MAX_PASSES = 4;
/** The most entries a pass builds before it measures them and looks at the time. */
const ENTRIES_PER_PASS = 8;

/** Where the person is: an entry, and how far below its top the view's top is (may be negative). */
export interface Place {
  index: number;
  offset: number;
}

/** The entries a frame wants drawn, given where the person is. */
interface WantedRange {
  /** In sight: built first. */
  visibleStart: number;
  visibleEnd: number;
  /** In sight and the margin around it: built while there is time. */
  wantStart: number;
  wantEnd: number;
  /** Entries drawn already are kept within this wider range, so a small scroll drops nothing. */
  keepStart: number;
  keepEnd: number;
}

export class ThreadView {
  readonly element: HTMLElement;
  /** Stands for the entries above the window (hidden when there are none). */
  private readonly above = spacer();
  /** Stands for the entries below the window. */
  private readonly below = spacer();
  /** The views of the entries drawn, `start` to `end` (exclusive), by entry index. */
  private readonly views = new Map<number, EntryView>();
  private start = 0;
  private end = 0;
  private entries: ThreadEntry[] = [];
  private count = 0;
  private sizes = new EntrySizes();
  private readonly estimates = new HeightEstimates();
  /** What the person changed on entries (see the module comment), by entry index. */
  private readonly states = new Map<number, EntryState>();
  /** Agent messages with text not yet in the DOM. */
  private readonly waiting = new Set<number>();
  /** Agent messages that may still grow: not followed by anything, in a running turn. */
  private readonly growing = new Set<number>();
  /** Permission requests whose card was shown once: a card built again does not take the focus. */
  private readonly announced = new Set<PermissionKey>();
  private readonly context: EntryContext;
  /** Whether the last frame's turn was running: an edited prompt waits for it to end. */
  private turnRunning = false;
  /** The view shows the thread's end and keeps showing it as the thread grows. */
  private following = true;
  /** A place to go back to (a tab shown again), until the thread has the entry to go to. */
  private restore: Place | null = null;
  /** The scroll offset the view itself set last: a scroll to anywhere else is the person's. */
  private ownTop = Number.NaN;
  /** The session whose thread is shown (0: none yet). */
  private session: SessionKey = 0;
  /** Where each session not shown was left: null at its end. */
  private readonly places = new Map<SessionKey, Place | null>();
  /** The heights known of each session not shown, so its thread comes back as tall as it was. */
  private readonly sizesBySession = new Map<SessionKey, EntrySizes>();
  /** The list's top padding; read from the stylesheet with the gap when the view is laid out. */
  private paddingTop = 0;
  private metricsKnown = false;
  private width = -1;
  private readonly entryObserver: ResizeObserver | null = null;
  private readonly spacerHeights = { above: Number.NaN, below: Number.NaN };
  /** Counts changes to which entry nodes are drawn: what a find highlight points at may be gone. */
  private drawnVersion = 0;
  /** Entries drawn whose height may have changed since they were last measured. */
  private readonly unmeasured = new Set<number>();
  /** Building and laying out one entry, lately, in ms (a running average). */
  private entryCostMs = FIRST_ENTRY_COST_MS;
  /** When (by the clock) the window last jumped to a new end it had no entry of. */
  private jumpedAt = Number.NEGATIVE_INFINITY;
  /** When the end last outran the window while it was followed (see `OUTRUN_SETTLE_MS`). */
  private outrunAt = Number.NEGATIVE_INFINITY;

  constructor(
    renderer: MarkdownRenderer,
    thoughts: ThoughtOpenState,
    toolCalls: ToolCallContext,
    private readonly clock: Clock,
    highlighter: CodeHighlighter = new LazyHighlighter(),
    /** Asks for a frame (the page's one `requestAnimationFrame` pass): the person scrolled. */
    private readonly requestFrame: () => void = () => {},
  ) {
    this.element = element("main", "thread");
    this.element.append(this.above, this.below);
    const codeBlocks = new CodeBlocks({ post: toolCalls.post, highlighter });
    const cards: ToolCallContext = {
      ...toolCalls,
      // A request is announced (and its card focused) the first time a card shows it, not again
      // each time the card is built after scrolling back to it.
      permissionShown: (button, title, key) => {
        if (this.announced.has(key)) return;
        this.announced.add(key);
        toolCalls.permissionShown(button, title, key);
      },
    };
    this.context = {
      renderer,
      post: toolCalls.post,
      messages: { renderer, thoughts, codeBlocks, post: toolCalls.post },
      toolCalls: cards,
      canSend: () => !this.turnRunning,
    };
    this.element.addEventListener("scroll", () => this.onScroll(), { passive: true });
    this.element.addEventListener(REVEAL_CHANGE_EVENT, (event) => this.onRevealChange(event));
    if (typeof ResizeObserver === "function") {
      this.entryObserver = new ResizeObserver((records) => this.onEntriesResized(records));
      new ResizeObserver(() => this.onResized()).observe(this.element);
    }
  }

  /** Draws one frame; returns true when another frame is needed (text waiting, window unfinished). */
  render(model: ChatModel, changes: ChangeSet): boolean {
    const wasRunning = this.turnRunning;
    this.turnRunning = model.turn.type === "running";
    // Where the person is, read before anything changes heights.
    const place = this.currentPlace();
    this.entries = model.entries;
    if (changes.reset) this.reset();
    else this.applyChanges(changes);
    if (this.turnRunning !== wasRunning) {
      for (const view of this.views.values()) if (view.type === "user") view.view.setTurnRunning(this.turnRunning);
    }
    this.completeMessages();
    for (const index of [...this.waiting]) {
      const view = this.views.get(index);
      if (view?.type !== "agent" || !view.view.flush(this.clock)) this.waiting.delete(index);
      this.unmeasured.add(index);
    }
    const complete = this.layOut(place, FRAME_BUDGET_MS);
    return this.waiting.size > 0 || !complete;
  }

  /**
   * Call when the header says which session is shown (`open`: the sessions in the tabs), before
   * the frame draws that session's thread: the thread left keeps its place, the one shown goes
   * back to its own.
   */
  showSession(key: SessionKey, open: readonly SessionKey[]): void {
    if (key === 0 || key === this.session) return;
    if (open.includes(this.session)) {
      this.places.set(this.session, this.currentPlace());
      this.sizesBySession.set(this.session, this.sizes);
    }
    for (const session of [...this.places.keys()]) if (!open.includes(session)) this.places.delete(session);
    for (const session of [...this.sizesBySession.keys()]) if (!open.includes(session)) this.sizesBySession.delete(session);
    this.session = key;
    const place = this.places.get(key) ?? null;
    this.places.delete(key);
    this.sizes = this.sizesBySession.get(key) ?? new EntrySizes();
    this.sizesBySession.delete(key);
    this.metricsKnown = false;
    this.following = place === null;
    this.restore = place;
  }

  /**
   * Shows the thread's end from the next frame on, and follows it: the person sent a prompt, and
   * what they sent and the answer to it are what they look for next, wherever they had scrolled.
   */
  followEnd(): void {
    this.following = true;
    this.restore = null;
    this.requestFrame();
  }

  /**
   * Brings entry `index` into sight (drawing it first if it is out of the window) and returns its
   * node: the find bar's match, a link to a change card further down.
   */
  reveal(index: number): HTMLElement | null {
    if (index < 0 || index >= this.count) return null;
    if (!this.inSight(index)) {
      this.following = false;
      this.restore = null;
      // A third of the way down, with what led to it above.
      const place = { index, offset: -Math.round(this.element.clientHeight / 3) };
      // The margin around it follows in the next frames.
      if (!this.layOut(place, Number.POSITIVE_INFINITY)) this.requestFrame();
    }
    return this.views.get(index)?.element ?? null;
  }

  /** The first entry at least partly in sight. */
  topIndex(): number {
    const place = this.currentPlace();
    if (place !== null) return Math.min(place.index, Math.max(0, this.count - 1));
    return this.sizes.indexAt(this.sizes.total - this.element.clientHeight);
  }

  /** The entries drawn, by index. */
  drawnEntries(): IterableIterator<[number, EntryView]> {
    return this.views.entries();
  }

  /** Changes whenever entry nodes are added, replaced or removed. */
  get drawn(): number {
    return this.drawnVersion;
  }

  /** How many entries the thread has, drawn or not. */
  get length(): number {
    return this.count;
  }

  /** The node of entry `index`, or null when it is not drawn. */
  drawnEntry(index: number): HTMLElement | null {
    return this.views.get(index)?.element ?? null;
  }

  /**
   * The node of entry `index` when it is drawn, else of the entry in sight nearest to it: where
   * the keyboard's place goes once its entry left the window, so that reaching the thread with
   * Tab lands where the person reads and scrolls nothing. Null when nothing is drawn.
   */
  nearestInSight(index: number): HTMLElement | null {
    const drawn = this.views.get(index);
    if (drawn !== undefined) return drawn.element;
    if (this.end <= this.start) return null;
    const withinWindow = (at: number): number => Math.max(this.start, Math.min(this.end - 1, at));
    const top = this.element.scrollTop - this.paddingTop;
    const first = withinWindow(this.sizes.indexAt(top));
    const last = Math.max(first, withinWindow(this.sizes.indexAt(top + this.element.clientHeight - 1)));
    return this.views.get(Math.max(first, Math.min(last, index)))?.element ?? null;
  }

  /** The entry about a screenful above (`direction` -1) or below (1) entry `index`, by the heights known. */
  pageFrom(index: number, direction: -1 | 1): number {
    const reached = this.sizes.indexAt(this.sizes.top(index) + direction * this.element.clientHeight);
    // An entry taller than the view (or a view not laid out) still moves the keys on by one.
    const moved = direction > 0 ? Math.max(reached, index + 1) : Math.min(reached, index - 1);
    return Math.max(0, Math.min(this.count - 1, moved));
  }

  /** Where the person is now: null when at the thread's end (following it). */
  private currentPlace(): Place | null {
    if (this.restore !== null) return this.restore;
    if (this.following) return null;
    return this.placeAt(this.element.scrollTop);
  }

  private placeAt(scrollTop: number): Place {
    const y = scrollTop - this.paddingTop;
    const index = this.sizes.indexAt(y);
    return { index, offset: y - this.sizes.top(index) };
  }

  private inSight(index: number): boolean {
    if (!this.views.has(index)) return false;
    const y = this.element.scrollTop - this.paddingTop;
    const top = this.sizes.top(index);
    return top >= y && top + this.sizes.height(index) <= y + this.element.clientHeight;
  }

  private reset(): void {
    this.unmountAll();
    this.waiting.clear();
    this.growing.clear();
    this.states.clear();
    this.announced.clear();
    this.count = this.entries.length;
    // Heights known from before (this session's, shown again) are good guesses; no more.
    this.sizes.forgetAll();
    this.sizes.resize(this.count, (index) => this.estimateFor(index));
  }

  private applyChanges(changes: ChangeSet): void {
    const known = this.count;
    this.count = this.entries.length;
    this.sizes.resize(this.count, (index) => this.estimateFor(index));
    for (const index of changes.rebuilt) this.entryChanged(index, known, true);
    for (const index of changes.grown) if (!changes.rebuilt.has(index)) this.entryChanged(index, known, false);
  }

  /** Brings the view of an entry that changed up to date, if it is drawn. */
  private entryChanged(index: number, known: number, rebuilt: boolean): void {
    const entry = this.entries[index];
    if (entry === undefined) return;
    const view = this.views.get(index);
    if (view === undefined) {
      // Not drawn: its height is a guess again (the old one), measured when it is drawn.
      if (index < known) this.sizes.forget(index, this.sizes.height(index));
      return;
    }
    this.unmeasured.add(index);
    if (!rebuilt && view.type === "agent" && entry.type === "agent" && view.view.update(entry)) {
      this.waiting.add(index);
      return;
    }
    if (rebuilt && refillEntryView(view, entry)) return;
    // An entry the keys are on (thread-keys.ts) keeps the focus when it is built anew: a place
    // held for an entry still on its way, replaced when it arrives.
    const hadFocus = view.element === this.element.ownerDocument.activeElement;
    const built = this.build(index, (node) => view.element.replaceWith(node));
    this.release(view);
    if (hadFocus) built.element.focus({ preventScroll: true });
  }

  /**
   * Tells the agent messages that cannot grow any more (something follows them, or the turn is
   * over) that they are complete: their last code blocks are highlighted then, never while they
   * stream.
   */
  private completeMessages(): void {
    for (const index of this.growing) {
      const view = this.views.get(index);
      if (view?.type !== "agent") {
        this.growing.delete(index);
      } else if (!this.turnRunning || index < this.count - 1) {
        view.view.complete();
        this.growing.delete(index);
      }
    }
  }

  /**
   * Moves the window to `place` (null: the end), builds what it lacks for at most `budgetMs`
   * (its layout included), measures, and scrolls so that the place is where the person saw it.
   * Returns whether the window is complete.
   */
  private layOut(place: Place | null, budgetMs: number): boolean {
    if (this.count === 0) {
      this.unmountAll();
      this.placeSpacers();
      return true;
    }
    this.readMetrics();
    const laidOut = this.element.clientWidth > 0;
    const viewport = this.element.clientHeight;
    // A place the thread has not reached yet (a tab's, while its thread is drawn): as far as it goes.
    const target = place !== null && place.index < this.count ? place : null;
    const now = this.clock();
    if (target === null && this.views.size > 0 && Number.isFinite(budgetMs)) {
      // Following an end that left the whole window behind: drawn again only every so often.
      const wanted = this.wantedRange(null, viewport);
      if (this.end <= wanted.wantStart) {
        this.outrunAt = now;
        if (now - this.jumpedAt < JUMP_INTERVAL_MS) return false;
        this.jumpedAt = now;
      }
    }
    const outrun = target === null && now - this.outrunAt < OUTRUN_SETTLE_MS;
    const deadline = now + budgetMs;
    let complete = false;
    for (let pass = 0; pass < MAX_PASSES && !complete; pass++) {
      const started = this.clock();
      // As many entries as the time left pays for, at what they have cost lately; one at least.
      const affordable = Math.max(1, Math.min(ENTRIES_PER_PASS, Math.floor((deadline - started) / this.entryCostMs)));
      const wanted = this.wantedRange(target, viewport);
      const range = outrun ? { ...wanted, wantStart: wanted.visibleStart, wantEnd: wanted.visibleEnd } : wanted;
      const { built, covered } = this.moveWindow(range, target, affordable);
      if (laidOut) this.measure();
      if (built > 0 && Number.isFinite(budgetMs)) {
        const cost = (this.clock() - started) / built;
        this.entryCostMs = Math.max(MIN_ENTRY_COST_MS, 0.7 * this.entryCostMs + 0.3 * cost);
      }
      complete = covered && built === 0;
      if (this.clock() >= deadline) break;
    }
    this.placeSpacers();
    if (target === null) this.setScrollTop(this.element.scrollHeight);
    else this.setScrollTop(this.paddingTop + this.sizes.top(target.index) + target.offset);
    // The place to go back to is reached: from now on the person's scrolling decides.
    if (target !== null && target === this.restore) this.restore = null;
    // After a burst, frames go on until the margin is drawn.
    return complete && !outrun;
  }

  private wantedRange(target: Place | null, viewport: number): WantedRange {
    const sizes = this.sizes;
    const count = this.count;
    const overscan = Math.max(viewport, MIN_OVERSCAN_PX);
    const top = target === null ? sizes.total - viewport : sizes.top(target.index) + target.offset;
    const bottom = top + viewport;
    const below = (y: number): number => (target === null ? count : Math.min(count, sizes.indexAt(y) + 1));
    const visibleStart = sizes.indexAt(top);
    const visibleEnd = below(bottom);
    let wantStart = sizes.indexAt(top - overscan);
    let wantEnd = below(bottom + overscan);
    let missing = MIN_WINDOW_ENTRIES - (wantEnd - wantStart);
    if (missing > 0) {
      const after = Math.min(count - wantEnd, Math.ceil(missing / 2));
      wantEnd += after;
      missing -= after;
      const before = Math.min(wantStart, missing);
      wantStart -= before;
      missing -= before;
      wantEnd = Math.min(count, wantEnd + Math.max(0, missing));
      wantStart = Math.max(wantStart, sizes.indexAt(top - overscan - MAX_WINDOW_EXTENT_PX));
      wantEnd = Math.min(wantEnd, below(bottom + overscan + MAX_WINDOW_EXTENT_PX));
    }
    return {
      visibleStart,
      visibleEnd,
      wantStart,
      wantEnd,
      keepStart: Math.min(wantStart, sizes.indexAt(top - 2 * overscan)),
      keepEnd: Math.max(wantEnd, below(bottom + 2 * overscan)),
    };
  }

  /**
   * Drops the entries drawn outside `range`'s kept part, then builds towards its wanted part,
   * what is in sight first, at most `affordable` entries. Returns how many entries were built,
   * and whether the wanted part is covered.
   */
  private moveWindow(range: WantedRange, target: Place | null, affordable: number): { built: number; covered: boolean } {
    if (this.end <= range.wantStart || this.start >= range.wantEnd) {
      this.unmountAll();
    } else {
      while (this.start < range.keepStart) this.unmount(this.start++);
      while (this.end > range.keepEnd) this.unmount(--this.end);
    }
    let built = 0;
    if (this.start === this.end) {
      // An empty window starts where the person looks, and grows from there.
      const seed = target === null ? this.count - 1 : target.index;
      this.start = seed;
      this.end = seed;
      this.append();
      built++;
    }
    while (
      this.end < range.visibleEnd ||
      this.start > range.visibleStart ||
      this.start > range.wantStart ||
      this.end < range.wantEnd
    ) {
      if (built >= affordable) return { built, covered: false };
      if (this.end < range.visibleEnd) this.append();
      else if (this.start > range.visibleStart || this.start > range.wantStart) this.prepend();
      else this.append();
      built++;
    }
    return { built, covered: true };
  }

  private append(): void {
    this.build(this.end, (node) => this.below.before(node));
    this.end++;
  }

  private prepend(): void {
    this.build(this.start - 1, (node) => this.above.after(node));
    this.start--;
  }

  /**
   * Builds the view of entry `index`, has `place` put it in the DOM, then writes an agent
   * message's text (its finished code blocks are handed to the highlighter in the document),
   * and starts watching its size.
   */
  private build(index: number, place: (node: HTMLElement) => void): EntryView {
    const entry = this.entries[index];
    if (entry === undefined) throw new Error(`no entry ${index} to draw`);
    const view = createEntryView(index, entry, this.context, this.stateFor(index));
    // Every entry takes the focus, from the keys (thread-keys.ts) or a click; the one the keys
    // last left is given tabIndex 0 once drawn.
    view.element.tabIndex = -1;
    // An entry still on its way holds the height its kind is estimated at, so the scroll place
    // does not jump when it arrives (and an empty block is not learned as a typical height).
    if (view.type === "notLoaded") view.element.style.height = `${this.estimateFor(index)}px`;
    place(view.element);
    if (view.type === "agent") {
      if (view.view.flush(this.clock)) this.waiting.add(index);
      else this.waiting.delete(index);
      if (!this.turnRunning || index < this.count - 1) {
        view.view.complete();
        this.growing.delete(index);
      } else {
        this.growing.add(index);
      }
    }
    this.views.set(index, view);
    this.unmeasured.add(index);
    this.entryObserver?.observe(view.element);
    this.drawnVersion++;
    return view;
  }

  private stateFor(index: number): EntryState {
    let state = this.states.get(index);
    if (state === undefined) {
      state = emptyEntryState();
      this.states.set(index, state);
    }
    return state;
  }

  private unmount(index: number): void {
    const view = this.views.get(index);
    if (view === undefined) return;
    this.views.delete(index);
    this.waiting.delete(index);
    this.growing.delete(index);
    this.unmeasured.delete(index);
    view.element.remove();
    this.release(view);
  }

  private release(view: EntryView): void {
    this.entryObserver?.unobserve(view.element);
    disposeEntryView(view);
    this.drawnVersion++;
  }

  private unmountAll(): void {
    for (const index of [...this.views.keys()]) this.unmount(index);
    this.start = 0;
    this.end = 0;
  }

  /**
   * Reads the heights of the entries built or changed (one layout, after the frame's writes);
   * the others' changes are the ResizeObserver's to report.
   */
  private measure(): void {
    for (const index of this.unmeasured) {
      const view = this.views.get(index);
      if (view === undefined) continue;
      const height = view.element.getBoundingClientRect().height;
      const guessed = !this.sizes.isMeasured(index);
      this.sizes.measure(index, height);
      if (guessed && view.type !== "notLoaded") this.estimates.learn(entryKind(this.entries[index]), height);
    }
    this.unmeasured.clear();
  }

  private placeSpacers(): void {
    const gap = this.sizes.gap;
    const drawn = this.end > this.start;
    // Each spacer is followed (or preceded) by the list's gap, which it leaves out.
    const above = drawn && this.start > 0 ? this.sizes.top(this.start) - gap : null;
    const below = drawn && this.end < this.count ? this.sizes.top(this.count) - this.sizes.top(this.end) - gap : null;
    this.setSpacer(this.above, "above", above);
    this.setSpacer(this.below, "below", below);
  }

  private setSpacer(node: HTMLElement, which: "above" | "below", height: number | null): void {
    const value = height === null ? Number.NaN : Math.max(0, height);
    if (Object.is(value, this.spacerHeights[which])) return;
    this.spacerHeights[which] = value;
    node.hidden = height === null;
    if (height !== null) node.style.height = `${Math.max(0, height)}px`;
  }

  private setScrollTop(top: number): void {
    if (Math.abs(this.element.scrollTop - top) >= 0.5) this.element.scrollTop = top;
    this.ownTop = this.element.scrollTop;
  }

  private readMetrics(): void {
    if (this.metricsKnown) return;
    const style = this.element.ownerDocument.defaultView?.getComputedStyle(this.element);
    this.paddingTop = Number.parseFloat(style?.paddingTop ?? "") || 0;
    this.sizes.gap = Number.parseFloat(style?.rowGap ?? "") || 0;
    this.metricsKnown = this.element.isConnected && this.element.clientWidth > 0;
  }

  private estimateFor(index: number): number {
    return this.estimates.estimate(entryKind(this.entries[index]));
  }

  private onScroll(): void {
    // The browser reports a scroll a frame after it happened. At the offset the view set itself,
    // it is the view's own: the content may have grown under it meanwhile (a piece of a long line
    // skipped while out of sight, laid out once it came near, is taller than the place it held),
    // and that is not the person leaving the end. Only the person's scroll decides whether the
    // end is followed, and it wins over a place to go back to.
    if (Math.abs(this.element.scrollTop - this.ownTop) >= 1) {
      this.restore = null;
      this.following = isAtEnd(this.element);
    }
    this.requestFrame();
  }

  /** The view's size changed (the sidebar, the plan or the composer): heights change with the width. */
  private onResized(): void {
    const width = this.element.clientWidth;
    if (width !== this.width) {
      if (this.width > 0 && width > 0) {
        this.sizes.forgetAll();
        this.estimates.clear();
      }
      // Drawn at a width never measured (or before the view was laid out): measured again.
      for (const index of this.views.keys()) this.unmeasured.add(index);
      this.width = width;
    }
    this.metricsKnown = false;
    this.requestFrame();
  }

  /**
   * Entries drawn changed height between frames (a thought or a Raw disclosure opened, a
   * terminal's output grew, highlighting): before the browser paints, the view keeps what the
   * person reads where it was, or keeps following the end.
   */
  private onEntriesResized(records: ResizeObserverEntry[]): void {
    if (this.element.clientWidth === 0) return;
    const place = this.currentPlace();
    let shift = 0;
    let changed = false;
    for (const record of records) {
      const target = record.target as HTMLElement;
      const index = Number(target.dataset["index"]);
      if (this.views.get(index)?.element !== target) continue;
      const height = record.borderBoxSize?.[0]?.blockSize ?? target.getBoundingClientRect().height;
      const change = this.sizes.measure(index, height);
      if (Math.abs(change) < 0.5) continue;
      changed = true;
      if (place !== null && index < place.index) shift += change;
    }
    if (!changed) return;
    this.placeSpacers();
    if (place === null) this.setScrollTop(this.element.scrollHeight);
    else if (shift !== 0) this.setScrollTop(this.element.scrollTop + shift);
    this.requestFrame();
  }

  /** A link to a file change card asks for it: it is brought into the window first. */
  private onRevealChange(event: Event): void {
    const change = (event as CustomEvent<number>).detail;
    const index = this.entries.findIndex((entry) => entry.type === "fileChange" && entry.id === change);
    if (index >= 0) this.reveal(index);
  }
}

function spacer(): HTMLElement {
  const node = element("div", "thread-spacer");
  node.setAttribute("aria-hidden", "true");
  node.hidden = true;
  return node;
}
