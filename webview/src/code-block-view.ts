// Code blocks in rendered markdown: each `<pre><code>` the renderer wrote gets a toolbar (Copy,
// Insert at cursor, Open in new file) and, once the block is final, syntax highlighting.
//
// The toolbar floats over the block's top right corner and shows on hover or when focus is in
// the block, so showing it never moves the text; its buttons carry their words in `aria-label`,
// and Tab reaches them from their entry (in the thread, only the entry the focus is in has its
// controls in the tab order: thread-keys.ts). What the buttons do is the host's (an intent each): the host's
// clipboard works where a webview's `navigator.clipboard` may be refused, and only the host can
// reach the editor.

import { codeLanguage, fenceLanguage } from "./code-languages";
import { element, icon } from "./element";
import type { CodeHighlighter } from "./highlighter";
import type { PostIntent } from "./protocol";

/** What the code blocks of a view need: where their buttons' intents go, and the highlighter. */
export interface CodeBlockContext {
  post: PostIntent;
  highlighter: CodeHighlighter;
}

export class CodeBlocks {
  constructor(private readonly context: CodeBlockContext) {}

  /**
   * Gives every code block under `root` that has none its toolbar, and hands the blocks to the
   * highlighter when `final` (their text will not change any more). Blocks already given a
   * toolbar are only handed over.
   */
  decorate(root: ParentNode, final: boolean): void {
    for (const code of root.querySelectorAll<HTMLElement>("pre > code")) {
      const pre = code.parentElement;
      if (pre === null) continue;
      if (!pre.parentElement?.classList.contains("code-block")) this.wrap(pre, code);
      if (final) this.context.highlighter.highlight(code, fenceLanguage(code));
    }
  }

  private wrap(pre: HTMLElement, code: HTMLElement): void {
    const block = element("div", "code-block");
    const language = fenceLanguage(code);
    if (language !== null) block.dataset["language"] = language;
    const actions = element("div", "code-actions");
    actions.setAttribute("role", "toolbar");
    actions.setAttribute("aria-label", language === null ? "Code block" : `${language} code block`);
    // The text is read when the button is pressed: a block still streaming has grown since.
    const text = (): string => code.textContent ?? "";
    actions.append(
      actionButton("copy", "Copy code", () => this.context.post({ type: "copyText", text: text() })),
      actionButton("insert", "Insert at cursor", () => this.context.post({ type: "insertAtCursor", text: text() })),
      actionButton("new-file", "Open in new file", () =>
        this.context.post({ type: "openInNewFile", text: text(), language: codeLanguage(language)?.vscodeId ?? null }),
      ),
    );
    pre.replaceWith(block);
    block.append(actions, pre);
  }
}

/**
 * A small icon button of a hover toolbar. A copy button shows a check once pressed, until the
 * pointer or the focus leaves it, so the person sees that it worked.
 */
export function actionButton(iconName: string, label: string, run: () => void): HTMLButtonElement {
  const button = element("button", "action-button");
  button.type = "button";
  button.dataset["action"] = iconName;
  button.setAttribute("aria-label", label);
  button.title = label;
  const glyph = icon(iconName);
  button.append(glyph);
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    run();
    if (iconName === "copy") {
      glyph.className = "codicon codicon-check";
      button.setAttribute("aria-label", "Copied");
    }
  });
  const reset = (): void => {
    glyph.className = `codicon codicon-${iconName}`;
    button.setAttribute("aria-label", label);
  };
  button.addEventListener("mouseleave", reset);
  button.addEventListener("blur", reset);
  return button;
}
