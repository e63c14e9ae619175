// Markdown to safe HTML: markdown-it for the syntax, DOMPurify for the guarantee.
//
// Everything an agent sends is untrusted (ARCHITECTURE.md, "tether-core"). markdown-it runs with
// `html: false`, so raw HTML in the text comes out escaped, and its link validator already drops
// `javascript:` and friends; DOMPurify then sanitizes the produced HTML anyway, so a bug or a
// plugin in the first stage cannot put a script, an event handler or a dangerous URL into the
// DOM. The output also respects the webview's strict CSP: no `style` attributes (table
// alignment becomes a class).

import MarkdownIt from "markdown-it";
import type { Env, MarkdownIt as MarkdownItInstance, StateCore, Token } from "markdown-it";
import type { Config, DOMPurify } from "dompurify";

/** Parsed markdown: the block tokens and the environment that carries reference definitions. */
export interface ParsedMarkdown {
  tokens: Token[];
  env: MarkdownEnv;
}

/** markdown-it's parse environment; `references` appears once a `[label]: url` was defined. */
export type MarkdownEnv = Env;

const SANITIZE_CONFIG: Config = {
  // The CSP forbids inline styles and markdown never needs them.
  FORBID_ATTR: ["style"],
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
};

export class MarkdownRenderer {
  private readonly markdown: MarkdownItInstance;

  /**
   * `purify` is DOMPurify bound to a window: the page's in the webview, a jsdom one in tests.
   */
  constructor(private readonly purify: DOMPurify) {
    this.markdown = new MarkdownIt({ html: false, linkify: true, typographer: false });
    this.markdown.core.ruler.after("normalize", "tether_terminal_escapes", (state: StateCore) => {
      state.src = withoutTerminalEscapes(state.src);
    });
    this.markdown.core.ruler.push("tether_alignment_classes", (state: StateCore) => {
      alignmentAsClasses(state.tokens);
    });
  }

  parse(text: string): ParsedMarkdown {
    const env: MarkdownEnv = {};
    const tokens = this.markdown.parse(text, env);
    return { tokens, env };
  }

  /**
   * Renders tokens from [`parse`] (or a run of whole blocks of them) to sanitized HTML; with
   * `breaks`, each line break inside a paragraph is kept.
   */
  renderTokens(tokens: Token[], env: MarkdownEnv, { breaks = false } = {}): string {
    const options = breaks ? { ...this.markdown.options, breaks } : this.markdown.options;
    const html = this.markdown.renderer.render(tokens, options, env);
    return this.purify.sanitize(html, SANITIZE_CONFIG);
  }

  /**
   * The text of a paragraph that markdown-it read as plain text only (no link, no emphasis, no
   * break), escaped as markdown-it renders it; `null` when the inline tokens hold anything else.
   * Escaped text cannot hold markup, so it needs no sanitizing, which parses the HTML it is
   * given into a document and serializes it again: most of the cost of a long line's pieces.
   */
  plainText(inline: Token | undefined): string | null {
    const children = inline?.type === "inline" ? (inline.children ?? []) : null;
    if (children === null || !children.every((child) => child.type === "text")) return null;
    return this.markdown.utils.escapeHtml(children.map((child) => child.content).join(""));
  }

  /** Renders a whole markdown text to sanitized HTML; `breaks` as for [`renderTokens`]. */
  render(text: string, { breaks = false } = {}): string {
    const { tokens, env } = this.parse(text);
    return this.renderTokens(tokens, env, { breaks });
  }

  /**
   * Renders what the person wrote, keeping each line break they typed (Shift+Enter): a prompt is
   * typed, not typeset, and markdown would join its lines into one.
   */
  renderPrompt(text: string): string {
    const { tokens, env } = this.parse(text);
    return this.renderTokens(tokens, env, { breaks: true });
  }
}

/**
 * Terminal escape sequences: a control sequence (colours, cursor moves: ESC `[` …), an operating
 * system command (a window title, a link: ESC `]` … BEL or ESC `\\`) and the two-character
 * escapes. None holds a line break.
 */
const TERMINAL_ESCAPE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/**
 * `text` without terminal escape sequences. Agents quote what commands printed, colours and all,
 * and a browser shows an escape sequence as its printable part ("[31m"), which is noise around
 * the words. The text keeps its lines, so what is parsed still lines up with the source's lines.
 */
export function withoutTerminalEscapes(text: string): string {
  return text.includes("\x1b") ? text.replace(TERMINAL_ESCAPE, "") : text;
}

/**
 * markdown-it writes table column alignment as `style="text-align:…"`, which the webview's CSP
 * would block (and report); a class carries the same meaning.
 */
function alignmentAsClasses(tokens: Token[]): void {
  for (const token of tokens) {
    if (token.type !== "th_open" && token.type !== "td_open") continue;
    const style = token.attrGet("style");
    if (style === null) continue;
    const alignment = /text-align:\s*(left|center|right)/.exec(String(style))?.[1];
    token.attrs = (token.attrs ?? []).filter((attribute) => attribute[0] !== "style");
    if (alignment !== undefined) token.attrJoin("class", `align-${alignment}`);
  }
}
