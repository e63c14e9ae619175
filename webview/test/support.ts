// What the unit tests share: a jsdom window for DOMPurify and the views, the whole chat drawn in
// it frame by frame, a wait for what jsdom does in the background (reading a pasted image), and
// a seeded random source so a failing property test can be replayed.

import assert from "node:assert/strict";
import DOMPurify from "dompurify";
import { JSDOM } from "jsdom";
import { ChatView } from "../src/chat-view";
import { MarkdownRenderer } from "../src/markdown";
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
  globals["ResizeObserver"] = class {
    observe(): void {}
    disconnect(): void {}
  };
  return window;
}

export interface Harness {
  window: ReturnType<typeof installDom>;
  posted: WebviewToHost[];
  /** What the webview saved with `setState`, once its save timer fired. */
  saved(): unknown;
  /** Applies messages and renders one frame, as main.ts does. */
  frame(...messages: HostToWebview[]): void;
  query<T extends Element = HTMLElement>(selector: string): T;
  queryAll<T extends Element = HTMLElement>(selector: string): T[];
  /** Presses a key on the focused element (or the body), as the person would. */
  press(key: string, init?: Partial<KeyboardEventInit>): void;
  /** Moves the webview's clock on by `ms` and fires the timers that are running, once each. */
  advance(ms: number): void;
  /** How many repeating timers the webview has running. */
  timers(): number;
  model: ChatModel;
}

/**
 * A clock that moves only when told, and timers that fire only when it does: a test decides
 * when time passes, and a timer left running cannot keep the test process alive.
 */
export class ManualTime {
  now = 0;
  private readonly ticks = new Set<() => void>();

  readonly clock = (): number => this.now;

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
  const view = new ChatView(root, renderer, api.postMessage, new UiState(api), time.clock, time.repeat);
  const model = emptyModel();
  return {
    window,
    posted,
    model,
    saved: () => saved,
    frame(...messages) {
      const changes = new ChangeSet();
      for (const message of messages) {
        if (!view.receive(message)) applyHostMessage(model, message, changes);
      }
      view.render(model, changes);
    },
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
