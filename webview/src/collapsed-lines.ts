// Long texts in the thread (a tool's output, a pasted prompt) show their first lines until the
// person asks for all of them: a 400-line paste would otherwise fill the sidebar many times over
// and bury the conversation around it. This module counts and cuts the lines; each view draws
// its own "Show all N lines" button with `showAllButton`.

import { element, icon } from "./element";

/** The class of every "Show all N lines" button, by which find opens a fold. */
export const SHOW_ALL_CLASS = "show-all-lines";

/** Lines shown of a collapsed text. */
export const COLLAPSED_LINES = 12;

/** How many lines `text` has (a last line without a newline counts, a trailing newline not). */
export function countLines(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** The first `count` lines of `text`, with a code fence left open closed again. */
export function firstLines(text: string, count: number): string {
  const lines = text.split("\n").slice(0, count);
  const fences = lines.filter((line) => /^\s*(```|~~~)/.test(line)).length;
  if (fences % 2 === 1) lines.push("```");
  return lines.join("\n");
}

/**
 * The button under a collapsible text (`controls`, which has an id): "Show all N lines" while
 * it is collapsed, "Show less" while it is `expanded`. A button, so Enter and Space work; what
 * it does on a click is the view's.
 */
export function showAllButton(className: string, controls: HTMLElement, expanded: boolean, lineCount: number): HTMLButtonElement {
  const toggle = element("button", `${className} ${SHOW_ALL_CLASS}`);
  toggle.type = "button";
  toggle.setAttribute("aria-expanded", String(expanded));
  toggle.setAttribute("aria-controls", controls.id);
  toggle.append(icon(expanded ? "chevron-up" : "chevron-down"), expanded ? "Show less" : `Show all ${lineCount} lines`);
  return toggle;
}
