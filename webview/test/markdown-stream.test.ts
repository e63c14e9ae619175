// The streaming block splitter: rendering a text as committed blocks plus a growing tail must
// give exactly the HTML of rendering the whole text at once, however the text was chunked and
// whenever frames were flushed, while rendering each block only once.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MarkdownStream, offsetOfLine, PIECE_CHARS, PIECE_CLASS } from "../src/markdown-stream";
import { JSDOM } from "jsdom";
import { createRenderer, pick, seededRandom } from "./support";

const renderer = createRenderer();

/** Streams `text` in the given pieces, flushing where `flushAfter` says; returns what a view shows. */
function stream(pieces: string[], flushAfter: (index: number) => boolean) {
  const markdown = new MarkdownStream(renderer);
  let committed: string[] = [];
  let tail = "";
  let renderedTailChars = 0;
  let resets = 0;
  const flush = () => {
    const update = markdown.flush();
    if (update.reset) {
      committed = [];
      tail = "";
      resets++;
    }
    // Pieces follow the update's other blocks (the view puts them in groups, which this leaves out).
    committed.push(...update.committed, ...update.pieces);
    if (update.tail !== null) {
      tail = update.tail;
      renderedTailChars += update.tail.length;
    }
  };
  pieces.forEach((piece, index) => {
    markdown.append(piece);
    if (flushAfter(index)) flush();
  });
  flush();
  return { html: committed.join("") + tail, committed, renderedTailChars, resets };
}

function randomPieces(text: string, random: () => number, maxPiece: number): string[] {
  const pieces: string[] = [];
  for (let offset = 0; offset < text.length; ) {
    const length = 1 + Math.floor(random() * maxPiece);
    pieces.push(text.slice(offset, offset + length));
    offset += length;
  }
  return pieces;
}

/** Blocks an agent writes, including the ones that span blank lines or interrupt paragraphs. */
const BLOCKS = [
  "A plain paragraph with *emphasis* and `code`.",
  "A paragraph\nthat spans\nthree lines.",
  "# Heading one",
  "## Heading two with **bold**",
  "Setext heading\n==============",
  "Another setext\n---",
  "---",
  "***",
  "```rust\nfn main() {\n\n    println!(\"blank line above\");\n}\n```",
  "```\nfence with\n\n\nseveral blank lines\n\n```",
  "~~~python\ndef f():\n\n    return 1\n~~~",
  "````\n```\nnested fence marker\n```\n````",
  "```\nan unclosed fence\n\nthat runs to the end",
  "    indented code\n\n    after a blank line",
  "- tight item\n- another item\n- third",
  "- loose item\n\n- second loose item\n\n  continuation paragraph",
  "1. first\n2. second\n\n3. third after a blank",
  "- parent\n  - child\n\n    child paragraph\n  - child two",
  "- item with a fence\n\n  ```\n  code\n\n  more code\n  ```",
  "> a quote\n> over two lines\n\n> a second quote",
  "> quote with lazy\ncontinuation",
  "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |",
  "text | looks | tabular\n--- | --- | ---\nbut it is a table",
  "See https://example.com and www.example.org for more.",
  "Line with trailing spaces  \nhard break",
  "Paragraph\n# heading interrupts it",
  "Paragraph\n- list interrupts it\n- yes",
  "Paragraph\n```\nfence interrupts it\n```",
  "<div>raw html is text here</div>",
  "A [link](https://example.com \"title\") and ![image](data:image/png;base64,AAAA)",
  "Windows\r\nline endings\r\n\r\nin a paragraph",
];

const SEPARATORS = ["\n", "\n\n", "\n\n\n", "\n \n", "\n"];

function randomDocument(random: () => number): string {
  const count = 1 + Math.floor(random() * 8);
  let text = "";
  for (let index = 0; index < count; index++) {
    if (index > 0) text += pick(random, SEPARATORS);
    text += pick(random, BLOCKS);
  }
  if (random() < 0.5) text += "\n";
  return text;
}

describe("markdown stream", () => {
  it("renders each of the tricky blocks, alone and in pairs, exactly like the whole text", () => {
    const random = seededRandom(1);
    for (const first of BLOCKS) {
      for (const second of BLOCKS) {
        const text = `${first}\n\n${second}\n`;
        const expected = renderer.render(text);
        const pieces = randomPieces(text, random, 12);
        const result = stream(pieces, () => random() < 0.5);
        assert.equal(result.html, expected, `chunked rendering differs for ${JSON.stringify(text)}`);
      }
    }
  });

  it("equals whole-text rendering for random documents under random chunkings", () => {
    const random = seededRandom(20261122);
    let committedBlocks = 0;
    for (let round = 0; round < 300; round++) {
      const text = randomDocument(random);
      const expected = renderer.render(text);
      const maxPiece = pick(random, [1, 3, 20, 200]);
      const flushChance = pick(random, [0.05, 0.5, 1]);
      const result = stream(randomPieces(text, random, maxPiece), () => random() < flushChance);
      assert.equal(result.html, expected, `round ${round}: ${JSON.stringify(text)}`);
      committedBlocks += result.committed.length;
    }
    // The equality above would hold trivially if nothing were ever committed.
    assert.ok(committedBlocks > 300, `only ${committedBlocks} commits in 300 documents`);
  });

  it("keeps a code fence with blank lines in one block until its closing fence arrives", () => {
    const markdown = new MarkdownStream(renderer);
    markdown.append("Intro.\n\n```\nline one\n\n\nline two\n");
    const open = markdown.flush();
    assert.deepEqual(open.committed, ["<p>Intro.</p>\n"]);
    assert.equal(open.tail, "<pre><code>line one\n\n\nline two\n</code></pre>\n");
    markdown.append("```\n\nAfter.\n");
    const closed = markdown.flush();
    assert.deepEqual(closed.committed, ["<pre><code>line one\n\n\nline two\n</code></pre>\n"]);
    assert.equal(closed.tail, "<p>After.</p>\n");
  });

  it("does not decide on a half-received line", () => {
    // While the last line reads "--- | -" it would make "foo | bar" a table header and close the
    // paragraph; the line goes on to be ordinary text, so "Para" was never a block of its own.
    const markdown = new MarkdownStream(renderer);
    markdown.append("Para\nfoo | bar\n--- | -");
    assert.deepEqual(markdown.flush().committed, []);
    markdown.append("x and more\n");
    const update = markdown.flush();
    assert.deepEqual(update.committed, []);
    assert.equal(update.tail, "<p>Para\nfoo | bar\n--- | -x and more</p>\n");
  });

  it("renders the whole text again once a link reference definition appears", () => {
    const pieces = ["See [the docs][d].\n\n", "More text.\n\n", "[d]: https://example.com/docs\n"];
    const result = stream(pieces, () => true);
    assert.equal(result.resets, 1);
    assert.equal(
      result.html,
      '<p>See <a href="https://example.com/docs">the docs</a>.</p>\n<p>More text.</p>\n',
    );
  });

  it("renders a long reply in time linear in its length (no quadratic re-rendering)", () => {
    // 5,000 chunks of ~20 characters, paragraphs every few lines, a frame every 10 chunks.
    const random = seededRandom(7);
    const words = ["agent", "stream", "tether", "markdown", "chunk", "render", "block", "frame"];
    let text = "";
    while (text.length < 100_000) {
      const sentence = Array.from({ length: 12 }, () => pick(random, words)).join(" ");
      text += random() < 0.2 ? `${sentence}.\n\n` : `${sentence}.\n`;
    }
    const pieces = randomPieces(text, random, 39);
    const result = stream(pieces, (index) => index % 10 === 9);
    assert.equal(result.html, renderer.render(text));
    // Re-rendering everything per frame would be ~500 frames x 50 KB average = 25 MB of HTML.
    assert.ok(
      result.renderedTailChars < 3 * text.length,
      `tails re-rendered ${result.renderedTailChars} characters for a ${text.length}-character reply`,
    );
  });

  it("cuts a long line into pieces, the same however it was chunked, keeping the tail short", () => {
    // 20,000 chunks of 20 characters and no line break: the end-to-end benchmark's reply.
    const chunks = Array.from({ length: 20_000 }, (_, index) => `#${String(index + 1).padStart(6, "0")} quick brown `);
    const text = chunks.join("");
    const byChunk = stream(chunks, (index) => index % 10 === 9);
    const random = seededRandom(3);
    const byRandom = stream(randomPieces(text, random, 300), () => random() < 0.3);
    assert.equal(byChunk.html, byRandom.html, "the cuts depend on the text alone");
    const pieces = byChunk.committed.join("").match(new RegExp(`<p class="${PIECE_CLASS}">`, "g")) ?? [];
    assert.ok(pieces.length >= text.length / (PIECE_CHARS + 40) - 1, `${pieces.length} pieces`);
    // The person reads the same words as in one paragraph, in order, each once.
    const words = (html: string) => html.replace(/<[^>]+>/g, " ").split(/\s+/).filter(Boolean);
    assert.deepEqual(words(byChunk.html), words(renderer.render(text)));
    // Each of the 2,000 frames re-rendered at most a piece and its chunks, not the whole line so
    // far (which would be some 400 million characters).
    const frames = chunks.length / 10 + 1;
    assert.ok(
      byChunk.renderedTailChars < frames * (PIECE_CHARS + 300),
      `${byChunk.renderedTailChars} characters re-rendered in ${frames} frames`,
    );
  });

  it("cuts no piece where the text around it could render differently", () => {
    const long = "word ".repeat(PIECE_CHARS / 5 + 100);
    const uncut = [
      // Something that could open emphasis, code or a link before the cut.
      `*${long}end*`,
      `\`${long}end\``,
      `[${long}](https://example.com)`,
      // Not a paragraph: a heading, a list item, a quote, a code block.
      `# ${long}`,
      `- ${long}`,
      `> ${long}`,
      `    ${long}`,
      // A paragraph of several lines: only a first line is cut.
      `short line\n${long}`,
    ];
    for (const text of uncut) {
      const result = stream([text, "more words"], () => true);
      assert.equal(result.html, renderer.render(`${text}more words`), JSON.stringify(text.slice(0, 20)));
    }
  });

  it("writes a piece of plain text as the renderer and its sanitizer would, and links in one still as links", () => {
    // Quotes and apostrophes are the characters a piece may hold that HTML escapes; an address
    // is linked by markdown-it, so its piece takes the renderer's whole path.
    const sentence = `She said "quick" and it's done, `;
    const text = `${sentence.repeat(120)}see https://example.com/docs for more, ${sentence.repeat(120)}`;
    const result = stream(randomPieces(text, seededRandom(5), 50), (index) => index % 7 === 6);
    const { document } = new JSDOM("").window;
    const parsed = (html: string) => {
      const box = document.createElement("div");
      box.innerHTML = html;
      return box;
    };
    const pieces = [...parsed(result.html).querySelectorAll(`p.${PIECE_CLASS}`)];
    assert.ok(pieces.length >= 3, `${pieces.length} pieces`);
    for (const piece of pieces) {
      // What the renderer makes of the piece's own text (a link's piece: of its text with the
      // address), compared as parsed documents, so `&quot;` and `"` are the same quote.
      const rendered = parsed(renderer.render(piece.textContent ?? "")).firstElementChild;
      piece.removeAttribute("class");
      assert.equal(piece.outerHTML, rendered?.outerHTML);
    }
    assert.equal(parsed(result.html).querySelectorAll('a[href="https://example.com/docs"]').length, 1);
    assert.equal(parsed(result.html).textContent?.replace(/\s+/g, " ").trim(), text.trim());
  });

  it("finds line starts the way markdown-it counts lines", () => {
    const text = "a\nb\r\nc\rd";
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((line) => offsetOfLine(text, line)),
      [0, 2, 5, 7, text.length],
    );
  });
});
