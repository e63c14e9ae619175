// Syntax highlighting of finished code blocks, kept off the streaming path.
//
// Nothing here runs while an agent's reply streams: a block is handed over only once it is
// final (see code-block-view.ts), and is coloured in the browser's idle time, one block per idle
// slice, with the plain block shown until then. shiki itself (with each grammar and theme) is
// loaded with `import()` the first time a block is handed over, so a chat without code never
// loads it and the first paint never waits for it.
//
// The colours are the active VS Code theme's as far as shiki knows them: VS Code gives a webview
// its theme's id (`data-vscode-theme-id` on the body) and kind (the body's `vscode-light`,
// `vscode-dark`, `vscode-high-contrast(-light)` class) but not its token colours, so a built-in
// theme (or a well-known one) is matched by id, and any other by kind to VS Code's own defaults
// (Light+ / Dark+). When the person switches themes, the blocks already coloured are coloured
// again in the new one.

import { type CodeLanguage, codeLanguage } from "./code-languages";
import type { CodeToken, ShikiHighlighter, ShikiTheme } from "./shiki-highlighter";

/** Colours finished code blocks; see the module comment. */
export interface CodeHighlighter {
  /** Colours `code` (the `<code>` of a finished block in `language`) when the browser is idle. */
  highlight(code: HTMLElement, language: string | null): void;
}

/**
 * The longest block coloured, in characters. shiki colours a block in one go, and a block of
 * hundreds of kilobytes (a whole generated file) would hold the page for seconds: it stays plain.
 */
export const MAX_HIGHLIGHTED_CHARS = 50_000;

/** Runs `work` when the browser is idle: `requestIdleCallback` in the webview. */
export type IdleScheduler = (work: () => void) => void;

const browserIdle: IdleScheduler = (work) => {
  if (typeof requestIdleCallback === "function") requestIdleCallback(() => work(), { timeout: 1000 });
  else setTimeout(work, 0);
};

/** VS Code's theme ids (the built-ins, and a few popular ones) to the shiki theme of the same colours. */
const THEMES_BY_ID: ReadonlyMap<string, ShikiTheme> = new Map<string, ShikiTheme>([
  ["Default Dark Modern", "dark-plus"],
  ["Default Dark+", "dark-plus"],
  ["Visual Studio Dark", "dark-plus"],
  ["Default Light Modern", "light-plus"],
  ["Default Light+", "light-plus"],
  ["Visual Studio Light", "light-plus"],
  ["Default High Contrast", "github-dark-high-contrast"],
  ["Default High Contrast Light", "github-light-high-contrast"],
  ["Monokai", "monokai"],
  ["Solarized Dark", "solarized-dark"],
  ["Solarized Light", "solarized-light"],
  ["Red", "red"],
  ["GitHub Dark", "github-dark"],
  ["GitHub Dark Default", "github-dark"],
  ["GitHub Light", "github-light"],
  ["GitHub Light Default", "github-light"],
  ["One Dark Pro", "one-dark-pro"],
  ["Dracula", "dracula"],
  ["Dracula Theme", "dracula"],
  ["Nord", "nord"],
  ["Tokyo Night", "tokyo-night"],
]);

/** The shiki theme for the webview's body: by VS Code's theme id, else by the theme's kind. */
export function themeFor(body: HTMLElement): ShikiTheme {
  const byId = THEMES_BY_ID.get(body.dataset["vscodeThemeId"] ?? "");
  if (byId !== undefined) return byId;
  const classes = body.classList;
  if (classes.contains("vscode-high-contrast-light")) return "github-light-high-contrast";
  if (classes.contains("vscode-high-contrast")) return "github-dark-high-contrast";
  if (classes.contains("vscode-light")) return "light-plus";
  return "dark-plus";
}

interface Block {
  code: HTMLElement;
  language: CodeLanguage;
  /** The text as it was handed over: a block is final, so it never changes after. */
  text: string;
}

/** Loads shiki's module the first time it is wanted (a separate chunk of the bundle). */
export type ShikiLoader = () => Promise<ShikiHighlighter>;

const loadShiki: ShikiLoader = async () => (await import("./shiki-highlighter")).ShikiHighlighter.create();

export class LazyHighlighter implements CodeHighlighter {
  private readonly queue: Block[] = [];
  /**
   * Blocks coloured so far, to colour again when the theme changes; those no longer in the
   * document are dropped whenever the map has doubled since the last sweep.
   */
  private readonly coloured = new Map<HTMLElement, CodeLanguage>();
  private sweepAt = 64;
  private shiki: Promise<ShikiHighlighter> | undefined;
  private working = false;
  private observer: MutationObserver | undefined;
  private theme: ShikiTheme | undefined;
  private readonly whenSettled: (() => void)[] = [];

  constructor(
    private readonly idle: IdleScheduler = browserIdle,
    private readonly load: ShikiLoader = loadShiki,
  ) {}

  highlight(code: HTMLElement, language: string | null): void {
    const known = codeLanguage(language);
    if (known === undefined || code.dataset["highlight"] !== undefined) return;
    const text = code.textContent ?? "";
    if (text.length > MAX_HIGHLIGHTED_CHARS) {
      code.dataset["highlight"] = "too-long";
      return;
    }
    code.dataset["highlight"] = "pending";
    this.queue.push({ code, language: known, text });
    this.watchTheme(code.ownerDocument);
    this.schedule();
  }

  /** Resolves once every block handed over so far is coloured (or failed to be): for tests. */
  settled(): Promise<void> {
    if (!this.working && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.whenSettled.push(resolve));
  }

  private schedule(): void {
    if (this.working) return;
    this.working = true;
    this.idle(() => void this.work());
  }

  /** Colours the next block, then asks for another idle slice while blocks are waiting. */
  private async work(): Promise<void> {
    const block = this.queue.shift();
    if (block !== undefined && block.code.isConnected) {
      try {
        this.shiki ??= this.load();
        const shiki = await this.shiki;
        const theme = themeFor(block.code.ownerDocument.body);
        this.theme = theme;
        paint(block.code, await shiki.tokenize(block.text, block.language, theme));
        block.code.dataset["highlight"] = theme;
        this.remember(block);
      } catch (error) {
        // A grammar that fails to load leaves its blocks plain, which is how they were shown.
        console.warn(`tether: could not highlight a ${block.language.grammarId} block`, error);
        block.code.dataset["highlight"] = "failed";
      }
    }
    if (this.queue.length > 0) {
      this.idle(() => void this.work());
      return;
    }
    this.working = false;
    for (const resolve of this.whenSettled.splice(0)) resolve();
  }

  private remember(block: Block): void {
    this.coloured.set(block.code, block.language);
    if (this.coloured.size < this.sweepAt) return;
    for (const code of this.coloured.keys()) {
      if (!code.isConnected) this.coloured.delete(code);
    }
    this.sweepAt = Math.max(64, this.coloured.size * 2);
  }

  /** Colours every coloured block again when VS Code's theme changes. */
  private watchTheme(document: Document): void {
    // The document's own window's observer (the page's; a test's jsdom window).
    const Observer = document.defaultView?.MutationObserver;
    if (this.observer !== undefined || Observer === undefined) return;
    this.observer = new Observer(() => {
      const theme = themeFor(document.body);
      if (theme === this.theme) return;
      this.theme = theme;
      for (const [code, language] of this.coloured) {
        this.coloured.delete(code);
        if (!code.isConnected) continue;
        this.queue.push({ code, language, text: code.textContent ?? "" });
      }
      if (this.queue.length > 0) this.schedule();
    });
    this.observer.observe(document.body, { attributes: true, attributeFilter: ["class", "data-vscode-theme-id"] });
  }
}

/**
 * Replaces `code`'s text with the same text in coloured spans. The colours are set through the
 * CSSOM (`style.color`), which the webview's CSP allows where a `style` attribute would not be.
 */
function paint(code: HTMLElement, lines: CodeToken[][]): void {
  const document = code.ownerDocument;
  const fragment = document.createDocumentFragment();
  lines.forEach((line, index) => {
    if (index > 0) fragment.append("\n");
    for (const token of line) {
      if (token.color === undefined && !token.bold && !token.italic && !token.underline) {
        fragment.append(token.content);
        continue;
      }
      const span = document.createElement("span");
      span.textContent = token.content;
      if (token.color !== undefined) span.style.color = token.color;
      if (token.bold) span.classList.add("token-bold");
      if (token.italic) span.classList.add("token-italic");
      if (token.underline) span.classList.add("token-underline");
      fragment.append(span);
    }
  });
  code.replaceChildren(fragment);
}
