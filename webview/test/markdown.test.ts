// Sanitization: whatever an agent writes, no script, event handler or dangerous URL reaches the
// DOM; and ordinary markdown still renders as markdown.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JSDOM } from "jsdom";
import { createRenderer } from "./support";

const renderer = createRenderer();

/** Parses rendered HTML the way `innerHTML` would and lists everything dangerous in it. */
function dangers(html: string): string[] {
  const { document } = new JSDOM(`<body>${html}</body>`).window;
  const found: string[] = [];
  for (const node of document.body.querySelectorAll("*")) {
    const tag = node.tagName.toLowerCase();
    if (["script", "iframe", "object", "embed", "style", "form", "svg", "math"].includes(tag)) {
      found.push(`<${tag}>`);
    }
    for (const attribute of node.attributes) {
      const name = attribute.name.toLowerCase();
      const value = attribute.value.replace(/[\s\u0000-\u001f]/g, "").toLowerCase();
      if (name.startsWith("on")) found.push(`${tag}[${name}]`);
      if (name === "style") found.push(`${tag}[style]`);
      if (/^(javascript|vbscript|data:text\/html)/.test(value)) found.push(`${tag}[${name}=${value}]`);
    }
  }
  return found;
}

describe("markdown sanitization", () => {
  const attacks: Record<string, string> = {
    "script tag": "Hello <script>alert(1)</script> world",
    "script block": "<script>\nalert(document.cookie)\n</script>\n\ntext",
    "img onerror": 'Look: <img src=x onerror="alert(1)">',
    "svg onload": "<svg onload=alert(1)><circle r=1></svg>",
    "iframe": '<iframe src="https://evil.example"></iframe>',
    "javascript link": "[click me](javascript:alert(1))",
    "mixed-case javascript link": "[click me](JaVaScRiPt:alert(1))",
    "entity-encoded javascript link": "[click](&#106;avascript:alert(1))",
    "javascript autolink": "<javascript:alert(1)>",
    "javascript image": "![x](javascript:alert(1))",
    "vbscript link": "[x](vbscript:msgbox(1))",
    "data html link": "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "reference-style javascript link": "[x][evil]\n\n[evil]: javascript:alert(1)",
    "inline style": '<span style="position:fixed">x</span>',
    "html in a table": "| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | <script>x</script> |",
    "html in a list": "- <a href=\"javascript:alert(1)\">x</a>\n- <b onmouseover=alert(1)>y</b>",
  };

  for (const [name, markdown] of Object.entries(attacks)) {
    it(`neutralizes ${name}`, () => {
      const html = renderer.render(markdown);
      assert.deepEqual(dangers(html), [], html);
      assert.doesNotMatch(html, /<script/i);
    });
  }

  it("sanitizes even HTML that markdown-it let through (a plugin, a bug)", () => {
    const { tokens, env } = renderer.parse("text");
    const [raw] = renderer.parse("x").tokens;
    assert.ok(raw !== undefined);
    raw.type = "html_block";
    raw.content = '<img src="x" onerror="alert(1)"><script>alert(2)</script><a href="javascript:x">a</a>';
    raw.nesting = 0;
    const html = renderer.renderTokens([...tokens, raw], env);
    assert.deepEqual(dangers(html), [], html);
    assert.match(html, /<img src="x">/, "the harmless part survives");
  });

  it("shows raw HTML as text rather than dropping what the agent wrote", () => {
    const html = renderer.render("Use <b>bold</b> here");
    assert.equal(html, "<p>Use &lt;b&gt;bold&lt;/b&gt; here</p>\n");
  });

  it("renders ordinary markdown: emphasis, code, links, fences", () => {
    const html = renderer.render(
      "Some **bold** and `code`, see https://example.com\n\n```rust\nfn main() {}\n```\n",
    );
    assert.equal(
      html,
      '<p>Some <strong>bold</strong> and <code>code</code>, see <a href="https://example.com">https://example.com</a></p>\n' +
        '<pre><code class="language-rust">fn main() {}\n</code></pre>\n',
    );
  });

  it("leaves out terminal escape sequences from quoted command output, keeping its lines", () => {
    const red = "\x1b[31m";
    const reset = "\x1b[0m";
    const html = renderer.render(
      `The tests: ${red}1 failed${reset}, \x1b]0;a title\x07done.\n\n\`\`\`\n${red}FAIL${reset} a.test\nPASS b.test\n\`\`\`\n`,
    );
    assert.equal(html, "<p>The tests: 1 failed, done.</p>\n<pre><code>FAIL a.test\nPASS b.test\n</code></pre>\n");
    // A bracket that starts no escape sequence is the agent's text.
    assert.equal(renderer.render("an array [31m] here"), "<p>an array [31m] here</p>\n");
  });

  it("writes table alignment as classes, which the CSP allows, instead of style attributes", () => {
    const html = renderer.render("| left | right |\n|:---|---:|\n| a | b |\n");
    assert.match(html, /<th class="align-left">left<\/th>/);
    assert.match(html, /<td class="align-right">b<\/td>/);
    assert.doesNotMatch(html, /style=/);
  });
});
