// Creating DOM elements from code, so that text from the agent is only ever set as text.
//
// The only HTML strings this webview inserts come out of the sanitizing markdown renderer;
// everything else (titles, statuses, paths, option names) goes through `textContent`.

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  if (className !== undefined && className !== "") created.className = className;
  if (text !== undefined) created.textContent = text;
  return created;
}

/**
 * A codicon (VS Code's icon font, shipped with the webview): `name` is the icon's name without
 * the `codicon-` prefix, as in VS Code's product icon reference. Icons are decoration; the
 * control that holds one carries its words in `aria-label` or `title`.
 */
export function icon(name: string): HTMLSpanElement {
  const glyph = element("span", `codicon codicon-${name}`);
  glyph.setAttribute("aria-hidden", "true");
  return glyph;
}

/** A button drawn as one codicon: `label` is its tooltip and its accessible name, as it has no text. */
export function iconButton(className: string, label: string, iconName: string): HTMLButtonElement {
  const button = element("button", className === "" ? "icon-button" : `icon-button ${className}`);
  button.type = "button";
  button.title = label;
  button.setAttribute("aria-label", label);
  button.append(icon(iconName));
  return button;
}
