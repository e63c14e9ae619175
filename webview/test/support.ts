// What the unit tests share: a jsdom window for DOMPurify and the views, and a seeded random
// source so a failing property test can be replayed.

import DOMPurify from "dompurify";
import { JSDOM } from "jsdom";
import { MarkdownRenderer } from "../src/markdown";

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
  globals["ResizeObserver"] = class {
    observe(): void {}
    disconnect(): void {}
  };
  return window;
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
