// A path on a card as a link: the path as the engine worded it (relative to the workspace when
// inside it), a button that asks the host to open the file at the line.
//
// The engine decides how a path reads and where it leads; the card only shows `label` and sends
// back the `path` the view gave it, so the webview never needs to know the workspace folders.

import { element, icon } from "./element";
import type { PostIntent } from "./protocol";

/** `label`, with `:line` when there is one: how a location reads on a card. */
export function locationText(label: string, line: number | null): string {
  return line === null ? label : `${label}:${line}`;
}

/** A button reading `text` that opens `path` (at `line`) in the editor. */
export function pathLink(
  className: string,
  post: PostIntent,
  path: string,
  label: string,
  line: number | null,
  text: string = locationText(label, line),
): HTMLButtonElement {
  const link = element("button", `path-link ${className}`);
  link.type = "button";
  link.append(icon("go-to-file"), element("span", "path-link-text", text));
  const where = line === null ? label : `${label} at line ${line}`;
  link.title = `Open ${where}`;
  link.setAttribute("aria-label", `Open ${where}`);
  link.addEventListener("click", () => post({ type: "openLocation", path, line }));
  return link;
}
