// The languages a code block in the chat may name, as agents write them after the fence (`ts`,
// `rust`, `sh`, ...): for each, the VS Code language id ("Open in new file" opens the block in
// it) and the shiki grammar that colours it.
//
// The grammars are loaded with `import()`, so each is its own chunk of the bundle, fetched the
// first time a finished block in that language is highlighted; this table itself costs the
// main bundle a few hundred bytes.

import type { LanguageRegistration } from "shiki/core";

type GrammarModule = { default: LanguageRegistration[] };

export interface CodeLanguage {
  /** The id VS Code knows the language by (`workspace.openTextDocument({ language })`). */
  vscodeId: string;
  /** The id shiki's grammar registers, which `codeToTokens` is asked for. */
  grammarId: string;
  loadGrammar: () => Promise<GrammarModule>;
}

function language(vscodeId: string, grammarId: string, loadGrammar: () => Promise<GrammarModule>): CodeLanguage {
  return { vscodeId, grammarId, loadGrammar };
}

const typescript = language("typescript", "typescript", () => import("shiki/langs/typescript.mjs"));
const javascript = language("javascript", "javascript", () => import("shiki/langs/javascript.mjs"));
const shell = language("shellscript", "shellscript", () => import("shiki/langs/shellscript.mjs"));
const cpp = language("cpp", "cpp", () => import("shiki/langs/cpp.mjs"));
const markdown = language("markdown", "markdown", () => import("shiki/langs/markdown.mjs"));
const yaml = language("yaml", "yaml", () => import("shiki/langs/yaml.mjs"));
const python = language("python", "python", () => import("shiki/langs/python.mjs"));
const csharp = language("csharp", "csharp", () => import("shiki/langs/csharp.mjs"));
const ruby = language("ruby", "ruby", () => import("shiki/langs/ruby.mjs"));
const powershell = language("powershell", "powershell", () => import("shiki/langs/powershell.mjs"));
const makefile = language("makefile", "makefile", () => import("shiki/langs/makefile.mjs"));
const rust = language("rust", "rust", () => import("shiki/langs/rust.mjs"));
const go = language("go", "go", () => import("shiki/langs/go.mjs"));
const kotlin = language("kotlin", "kotlin", () => import("shiki/langs/kotlin.mjs"));
const c = language("c", "c", () => import("shiki/langs/c.mjs"));
const diff = language("diff", "diff", () => import("shiki/langs/diff.mjs"));

/** Every name a fence may use, lower-case, to its language. */
const LANGUAGES: ReadonlyMap<string, CodeLanguage> = new Map([
  ["typescript", typescript],
  ["ts", typescript],
  ["mts", typescript],
  ["cts", typescript],
  ["javascript", javascript],
  ["js", javascript],
  ["mjs", javascript],
  ["cjs", javascript],
  ["node", javascript],
  ["tsx", language("typescriptreact", "tsx", () => import("shiki/langs/tsx.mjs"))],
  ["jsx", language("javascriptreact", "jsx", () => import("shiki/langs/jsx.mjs"))],
  ["json", language("json", "json", () => import("shiki/langs/json.mjs"))],
  ["jsonc", language("jsonc", "jsonc", () => import("shiki/langs/jsonc.mjs"))],
  ["rust", rust],
  ["rs", rust],
  ["python", python],
  ["py", python],
  ["go", go],
  ["golang", go],
  ["java", language("java", "java", () => import("shiki/langs/java.mjs"))],
  ["kotlin", kotlin],
  ["kt", kotlin],
  ["swift", language("swift", "swift", () => import("shiki/langs/swift.mjs"))],
  ["c", c],
  ["h", c],
  ["cpp", cpp],
  ["c++", cpp],
  ["cc", cpp],
  ["cxx", cpp],
  ["hpp", cpp],
  ["csharp", csharp],
  ["cs", csharp],
  ["c#", csharp],
  ["shell", shell],
  ["shellscript", shell],
  ["sh", shell],
  ["bash", shell],
  ["zsh", shell],
  ["console", language("shellscript", "shellsession", () => import("shiki/langs/shellsession.mjs"))],
  ["powershell", powershell],
  ["ps1", powershell],
  ["pwsh", powershell],
  ["yaml", yaml],
  ["yml", yaml],
  ["toml", language("toml", "toml", () => import("shiki/langs/toml.mjs"))],
  ["ini", language("ini", "ini", () => import("shiki/langs/ini.mjs"))],
  ["xml", language("xml", "xml", () => import("shiki/langs/xml.mjs"))],
  ["html", language("html", "html", () => import("shiki/langs/html.mjs"))],
  ["css", language("css", "css", () => import("shiki/langs/css.mjs"))],
  ["scss", language("scss", "scss", () => import("shiki/langs/scss.mjs"))],
  ["markdown", markdown],
  ["md", markdown],
  ["diff", diff],
  ["patch", diff],
  ["sql", language("sql", "sql", () => import("shiki/langs/sql.mjs"))],
  ["ruby", ruby],
  ["rb", ruby],
  ["php", language("php", "php", () => import("shiki/langs/php.mjs"))],
  ["lua", language("lua", "lua", () => import("shiki/langs/lua.mjs"))],
  ["dockerfile", language("dockerfile", "dockerfile", () => import("shiki/langs/dockerfile.mjs"))],
  ["makefile", makefile],
  ["make", makefile],
  ["graphql", language("graphql", "graphql", () => import("shiki/langs/graphql.mjs"))],
]);

/** The language a fence names (`rust`, `TS`, `sh`), or undefined for one not in the table. */
export function codeLanguage(name: string | null): CodeLanguage | undefined {
  if (name === null) return undefined;
  return LANGUAGES.get(name.trim().toLowerCase());
}

/** The fence's language name of a rendered `<code class="language-x">`, or null without one. */
export function fenceLanguage(code: Element): string | null {
  for (const name of code.classList) {
    if (name.startsWith("language-")) return name.slice("language-".length);
  }
  return null;
}
