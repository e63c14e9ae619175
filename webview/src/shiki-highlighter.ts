// shiki, loaded only when the first finished code block is highlighted (see highlighter.ts,
// which imports this module with `import()`, so esbuild puts it and shiki in a chunk of their
// own). The fine-grained core with the JavaScript regex engine needs no WebAssembly, which the
// webview's CSP would refuse; each grammar and theme is a chunk of its own too, loaded the first
// time a block needs it.

import { type HighlighterCore, type ThemeRegistration, createHighlighterCore } from "shiki/core";
import { createJavaScriptRegexEngine } from "shiki/engine/javascript";
import type { CodeLanguage } from "./code-languages";

/** The themes code is coloured with: VS Code's own defaults, and the peers of its built-ins. */
export type ShikiTheme =
  | "dark-plus"
  | "light-plus"
  | "github-dark-high-contrast"
  | "github-light-high-contrast"
  | "monokai"
  | "solarized-dark"
  | "solarized-light"
  | "red"
  | "github-dark"
  | "github-light"
  | "one-dark-pro"
  | "dracula"
  | "nord"
  | "tokyo-night";

type ThemeModule = { default: ThemeRegistration };

const THEMES: Record<ShikiTheme, () => Promise<ThemeModule>> = {
  "dark-plus": () => import("shiki/themes/dark-plus.mjs"),
  "light-plus": () => import("shiki/themes/light-plus.mjs"),
  "github-dark-high-contrast": () => import("shiki/themes/github-dark-high-contrast.mjs"),
  "github-light-high-contrast": () => import("shiki/themes/github-light-high-contrast.mjs"),
  monokai: () => import("shiki/themes/monokai.mjs"),
  "solarized-dark": () => import("shiki/themes/solarized-dark.mjs"),
  "solarized-light": () => import("shiki/themes/solarized-light.mjs"),
  red: () => import("shiki/themes/red.mjs"),
  "github-dark": () => import("shiki/themes/github-dark.mjs"),
  "github-light": () => import("shiki/themes/github-light.mjs"),
  "one-dark-pro": () => import("shiki/themes/one-dark-pro.mjs"),
  dracula: () => import("shiki/themes/dracula.mjs"),
  nord: () => import("shiki/themes/nord.mjs"),
  "tokyo-night": () => import("shiki/themes/tokyo-night.mjs"),
};

/** One coloured run of a line. */
export interface CodeToken {
  content: string;
  /** A CSS colour, or undefined where the theme's foreground applies. */
  color: string | undefined;
  bold: boolean;
  italic: boolean;
  underline: boolean;
}

/** shiki's font style bits. */
const ITALIC = 1;
const BOLD = 2;
const UNDERLINE = 4;

export class ShikiHighlighter {
  private readonly loadedLanguages = new Set<string>();
  private readonly loadedThemes = new Set<string>();

  private constructor(private readonly shiki: HighlighterCore) {}

  static async create(): Promise<ShikiHighlighter> {
    const shiki = await createHighlighterCore({ themes: [], langs: [], engine: createJavaScriptRegexEngine() });
    return new ShikiHighlighter(shiki);
  }

  /** `code` as lines of coloured tokens in `theme`, loading the grammar and theme if needed. */
  async tokenize(code: string, language: CodeLanguage, theme: ShikiTheme): Promise<CodeToken[][]> {
    if (!this.loadedLanguages.has(language.grammarId)) {
      await this.shiki.loadLanguage(...(await language.loadGrammar()).default);
      this.loadedLanguages.add(language.grammarId);
    }
    if (!this.loadedThemes.has(theme)) {
      await this.shiki.loadTheme((await THEMES[theme]()).default);
      this.loadedThemes.add(theme);
    }
    const foreground = this.shiki.getTheme(theme).fg.toLowerCase();
    const lines = this.shiki.codeToTokensBase(code, { lang: language.grammarId, theme });
    return lines.map((line) =>
      line.map((token) => {
        const style = token.fontStyle ?? 0;
        const color = token.color?.toLowerCase();
        return {
          content: token.content,
          color: color === foreground ? undefined : token.color,
          bold: (style & BOLD) !== 0,
          italic: (style & ITALIC) !== 0,
          underline: (style & UNDERLINE) !== 0,
        };
      }),
    );
  }
}
