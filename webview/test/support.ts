// What the unit tests share: a jsdom window for DOMPurify and the views, the whole chat drawn in
// it frame by frame, a wait for what jsdom does in the background (reading a pasted image), a
// seeded random source so a failing property test can be replayed, and a layout for the thread
// (jsdom lays nothing out: `layOutThread` gives entries heights and the thread a scroll box).

import assert from "node:assert/strict";
import DOMPurify from "dompurify";
import { JSDOM } from "jsdom";
import { ChatView } from "../src/chat-view";
import { MarkdownRenderer } from "../src/markdown";
import { restoreLastScreen } from "../src/last-screen";
import { ChangeSet, type ChatModel, applyHostMessage, emptyModel } from "../src/model";
import type { HostToWebview, VsCodeApi, WebviewToHost } from "../src/protocol";
import type { Repeat } from "../src/terminal-view";
import { UiState } from "../src/ui-state";

/** A renderer whose DOMPurify runs on a fresh jsdom window, as it runs on the page's window. */
export function createRenderer(): MarkdownRenderer {
  const { window } = new JSDOM("");
  return new MarkdownRenderer(DOMPurify(window as unknown as Parameters<typeof DOMPurify>[0]));
}

/**
 * Makes jsdom's document the global one the views create elements in, with `#app` in its body.
 * Returns the window so tests can dispatch events and query the DOM.
 */
export function installDom(): JSDOM["window"] {
  const dom = new JSDOM('<!doctype html><html><body><div id="app"></div></body></html>');
  const { window } = dom;
  const globals = globalThis as Record<string, unknown>;
  globals["window"] = window;
  globals["document"] = window.document;
  globals["HTMLElement"] = window.HTMLElement;
  globals["HTMLButtonElement"] = window.HTMLButtonElement;
  globals["HTMLInputElement"] = window.HTMLInputElement;
  globals["CSSStyleSheet"] = window.CSSStyleSheet;
  globals["FileReader"] = window.FileReader;
  globals["MutationObserver"] = window.MutationObserver;
  globals["ResizeObserver"] = class {
    observe(): void {}
    unobserve(): void {}
    disconnect(): void {}
  };
  return window;
}

export interface Harness {
  window: ReturnType<typeof installDom>;
  posted: WebviewToHost[];
  /** What the webview saved with `setState`, once its save timer fired. */
  saved(): unknown;
  /**
   * Applies messages and renders one frame, as main.ts does; returns whether the view asked for
   * another frame (text waiting, a long thread's window drawn in slices).
   */
  frame(...messages: HostToWebview[]): boolean;
  /** How many times the view asked for a frame on its own (the person scrolled the thread). */
  framesAsked(): number;
  query<T extends Element = HTMLElement>(selector: string): T;
  queryAll<T extends Element = HTMLElement>(selector: string): T[];
  /** Presses a key on the focused element (or the body), as the person would. */
  press(key: string, init?: Partial<KeyboardEventInit>): void;
  /**
   * Draws the last screen the saved state holds, as the webview does at start; returns whether
   * there was one.
   */
  restore(): boolean;
  /** Moves the webview's clock on by `ms` and fires the timers that are running, once each. */
  advance(ms: number): void;
  /** How many repeating timers the webview has running. */
  timers(): number;
  /** The webview's clock, moved by hand (or on every read, with `step`). */
  time: ManualTime;
  model: ChatModel;
}

/**
 * A clock that moves only when told, and timers that fire only when it does: a test decides
 * when time passes, and a timer left running cannot keep the test process alive.
 */
export class ManualTime {
  now = 0;
  /** Added to `now` at every read of the clock: work that takes time, for the frame budget. */
  step = 0;
  private readonly ticks = new Set<() => void>();

  readonly clock = (): number => {
    this.now += this.step;
    return this.now;
  };

  readonly repeat: Repeat = (tick) => {
    // A fresh function per timer, so the same callback started twice is two timers.
    const timer = (): void => tick();
    this.ticks.add(timer);
    return () => {
      this.ticks.delete(timer);
    };
  };

  advance(ms: number): void {
    this.now += ms;
    for (const tick of [...this.ticks]) tick();
  }

  get running(): number {
    return this.ticks.size;
  }
}

const renderer = createRenderer();

/** The whole chat in a fresh jsdom document, with a webview API that records what is posted. */
export function harness(savedState: unknown = undefined): Harness {
  const window = installDom();
  const posted: WebviewToHost[] = [];
  let saved = savedState;
  const api: VsCodeApi = {
    postMessage: (message) => posted.push(message),
    getState: () => savedState,
    setState: (state) => {
      saved = state;
    },
  };
  const root = window.document.getElementById("app");
  assert.ok(root !== null);
  // A clock that moves only when a test says: every frame may render (the rationing has its own
  // test), and a running command's elapsed time counts on only when the test advances it.
  const time = new ManualTime();
  let framesAsked = 0;
  const uiState = new UiState(api);
  const view = new ChatView(root, renderer, api.postMessage, uiState, time.clock, time.repeat, () => {
    framesAsked++;
  });
  const model = emptyModel();
  return {
    window,
    posted,
    model,
    time,
    saved: () => saved,
    frame(...messages) {
      const changes = new ChangeSet();
      for (const message of messages) {
        if (!view.receive(message)) applyHostMessage(model, message, changes);
      }
      return view.render(model, changes);
    },
    restore() {
      const changes = new ChangeSet();
      if (!restoreLastScreen(uiState.savedScreen, model, changes)) return false;
      view.render(model, changes);
      return true;
    },
    framesAsked: () => framesAsked,
    query<T extends Element>(selector: string): T {
      const found = window.document.querySelector<T>(selector);
      assert.ok(found !== null, `no element matches ${selector}`);
      return found;
    },
    queryAll<T extends Element>(selector: string): T[] {
      return [...window.document.querySelectorAll<T>(selector)];
    },
    press(key, init = {}) {
      const target = window.document.activeElement ?? window.document.body;
      target.dispatchEvent(new window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
    },
    advance: (ms) => time.advance(ms),
    timers: () => time.running,
  };
}

/** Waits for what the FileReader does in the background; fails after many turns of the loop. */
export async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail("the composer never got there");
}

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

/** A thread laid out by `layOutThread`: where it is scrolled, and the person's scrolling. */
export interface ThreadLayout {
  thread: HTMLElement;
  /** The scroll offset. */
  top(): number;
  /** The scroll offset's greatest value. */
  maxTop(): number;
  /** Scrolls as the person does: the offset moves, then the scroll event. */
  scrollTo(top: number): void;
  /** The entries drawn whose box is at least partly in the visible part, by index. */
  inSight(): number[];
  /** The indices of the entries in the DOM. */
  drawn(): number[];
}

/**
 * Lays `main.thread` out as a browser would, which jsdom does not: every entry is as tall as
 * `heightOf(index)` says (100 px by default), a spacer as its style says, with no gap or padding,
 * in a view `viewport` px high. Scroll offsets are clamped as a browser clamps them, and setting
 * one sends no scroll event (the browser sends it later; `scrollTo` is the person's scroll).
 * `onMeasure` is called whenever an entry's box is read: laying an entry out takes time.
 */
export function layOutThread(
  window: ReturnType<typeof installDom>,
  options: { viewport?: number; heightOf?: (index: number) => number; onMeasure?: () => void } = {},
): ThreadLayout {
  const viewport = options.viewport ?? 300;
  const heightOf = options.heightOf ?? (() => 100);
  const thread = window.document.querySelector<HTMLElement>("main.thread");
  assert.ok(thread !== null, "no thread to lay out");
  const boxHeight = (node: Element): number => {
    if (!(node instanceof window.HTMLElement) || node.hidden) return 0;
    if (node.classList.contains("thread-spacer")) return Number.parseFloat(node.style.height) || 0;
    if (node.classList.contains("entry")) return heightOf(Number(node.dataset["index"]));
    return 0;
  };
  const contentHeight = (): number => [...thread.children].reduce((sum, child) => sum + boxHeight(child), 0);
  let top = 0;
  const maxTop = (): number => Math.max(0, contentHeight() - viewport);
  Object.defineProperty(thread, "clientHeight", { configurable: true, get: () => viewport });
  Object.defineProperty(thread, "clientWidth", { configurable: true, get: () => 400 });
  Object.defineProperty(thread, "scrollHeight", { configurable: true, get: () => Math.max(viewport, contentHeight()) });
  Object.defineProperty(thread, "scrollTop", {
    configurable: true,
    get: () => top,
    set: (value: number) => {
      top = Math.max(0, Math.min(value, maxTop()));
    },
  });
  /** Where `node` starts in the thread's content. */
  const offsetOf = (node: Element): number => {
    let offset = 0;
    for (let sibling = node.previousElementSibling; sibling !== null; sibling = sibling.previousElementSibling) {
      offset += boxHeight(sibling);
    }
    return offset;
  };
  const rect = (y: number, height: number): DOMRect =>
    ({ x: 0, y, top: y, left: 0, right: 400, bottom: y + height, width: 400, height, toJSON: () => ({}) }) as DOMRect;
  const original = window.HTMLElement.prototype.getBoundingClientRect;
  window.HTMLElement.prototype.getBoundingClientRect = function (this: HTMLElement): DOMRect {
    if (this === thread) return rect(0, viewport);
    if (this.parentElement === thread) {
      if (this.classList.contains("entry")) options.onMeasure?.();
      return rect(offsetOf(this) - top, boxHeight(this));
    }
    return original.call(this);
  };
  const drawn = (): number[] =>
    [...thread.querySelectorAll<HTMLElement>(":scope > .entry")].map((entry) => Number(entry.dataset["index"]));
  return {
    thread,
    top: () => top,
    maxTop,
    scrollTo(value) {
      thread.scrollTop = value;
      thread.dispatchEvent(new window.Event("scroll"));
    },
    inSight: () =>
      [...thread.querySelectorAll<HTMLElement>(":scope > .entry")]
        .filter((entry) => {
          const start = offsetOf(entry) - top;
          return start < viewport && start + boxHeight(entry) > 0;
        })
        .map((entry) => Number(entry.dataset["index"])),
    drawn,
  };
}
