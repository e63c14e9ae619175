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
