// Raw protocol data on a card (a tool call's input and output, a notice's detail), kept out of
// the way behind a "Raw" disclosure and shown as formatted JSON: it is there for the curious and
// for bug reports, not for reading the conversation.

import { element } from "./element";

/** Longest text shown in one block; what is longer is cut with an ellipsis. */
const MAX_RAW_TEXT = 8_000;

/**
 * `value` as indented JSON (two spaces). A string that holds JSON is formatted the same way;
 * any other string is shown as it is.
 */
export function formatRaw(value: unknown): string {
  let text: string;
  if (typeof value === "string") {
    text = value;
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed === "object" && parsed !== null) text = JSON.stringify(parsed, null, 2);
    } catch {
      // Not JSON: the text itself.
    }
  } else {
    try {
      text = JSON.stringify(value, null, 2) ?? String(value);
    } catch {
      // A value that came through postMessage is plain JSON, but a cycle must not break the card.
      text = String(value);
    }
  }
  return text.length > MAX_RAW_TEXT ? `${text.slice(0, MAX_RAW_TEXT)}\n…` : text;
}

/** One block of raw data, formatted. */
export function rawBlock(value: unknown): HTMLElement {
  return element("pre", "raw-json", formatRaw(value));
}

/** Whether `text` is a JSON object or array (and so reads as raw data, not as words). */
export function isJsonText(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

/**
 * A closed "Raw" disclosure holding labelled blocks. `onToggle` hears whether it is open, so a
 * card redrawn from a new view can keep it as the person left it.
 */
export function rawDisclosure(
  className: string,
  parts: Array<{ label: string | null; value: unknown }>,
  open: boolean,
  onToggle: (open: boolean) => void,
  summary = "Raw",
): HTMLDetailsElement {
  const details = element("details", `raw ${className}`);
  details.open = open;
  details.addEventListener("toggle", () => onToggle(details.open));
  details.append(element("summary", "raw-summary", summary));
  for (const part of parts) {
    if (part.label !== null) details.append(element("div", "raw-label", part.label));
    details.append(rawBlock(part.value));
  }
  return details;
}
