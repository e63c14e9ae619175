// Benchmark (not a test): tether-diff in WASM, as the VS Code host calls it, against npm's `diff`
// package (jsdiff) on the large inputs of issue 4. `cargo xtask bench` builds the WASM and runs
// this under Node 24 as `node bench/diff.bench.mjs <path to tether_wasm.js>`.
//
// tether-diff's time is the host's whole cost: encoding both texts to UTF-8, copying them into
// WASM, the diff, and converting the result to JS objects. Figures are medians after a warm-up.
// Inputs come from a seeded generator, so every run diffs the same texts. The script prints its
// targets as PASS or MISS for information and exits 0 whatever the timings are.

import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { diffChars, diffLines as jsdiffLines, diffWords } from "diff";

const wasmPath = process.argv[2];
if (!wasmPath) {
  console.error("usage: node bench/diff.bench.mjs <path to tether_wasm.js>");
  process.exit(2);
}
// wasm-bindgen's `--target nodejs` output is CommonJS.
const tether = createRequire(import.meta.url)(wasmPath);

/** Host time the issue allows a diff, whatever the input (by deadline and degradation). */
const HOST_BUDGET_MS = 16;
/** How much faster than jsdiff tether-diff must be on the rewritten and one-line cases. */
const MIN_SPEEDUP = 10;
/** Measuring stops after this many runs or this much time, whichever comes first (after at least
 * `MIN_RUNS`); a slow jsdiff case therefore gets fewer runs, and the table says how many. */
const MAX_RUNS = 50;
const MIN_RUNS = 3;
const TIME_PER_SIDE_MS = 4000;

// A small seeded generator (mulberry32), so the inputs are the same on every run and machine.
function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["value", "count", "index", "result", "buffer", "session", "update", "handle", "render", "path"];

/** A line of made-up source code. About a quarter of lines are the short ones real code repeats
 * (braces, blank lines, `return;`), so two versions of a file share many lines even when rewritten. */
function codeLine(random) {
  const roll = random();
  if (roll < 0.1) return "}\n";
  if (roll < 0.18) return "\n";
  if (roll < 0.25) return "        return;\n";
  const word = () => WORDS[Math.floor(random() * WORDS.length)];
  const number = Math.floor(random() * 1e6);
  return `    let ${word()}_${number} = ${word()}.${word()}(${number % 97}, "${word()}");\n`;
}

function codeFile(lines, random) {
  return Array.from({ length: lines }, () => codeLine(random));
}

/** A 5,000-line file with 1% of its lines replaced. */
function smallEdit() {
  const random = rng(1);
  const old = codeFile(5000, random);
  const next = [...old];
  for (let i = 0; i < 50; i++) next[Math.floor(random() * next.length)] = codeLine(random);
  return { old: old.join(""), next: next.join("") };
}

/** A 20,000-line file replaced by another 20,000 lines written independently. */
function rewrite() {
  const random = rng(2);
  return { old: codeFile(20000, random).join(""), next: codeFile(20000, random).join("") };
}

/** A 1 MB file that is one line (minified code, say), with 1% of its words changed. */
function oneLine() {
  const random = rng(3);
  const words = [];
  let size = 0;
  while (size < 1024 * 1024) {
    const word = `${WORDS[Math.floor(random() * WORDS.length)]}${Math.floor(random() * 1000)}`;
    words.push(word);
    size += word.length + 1;
  }
  const next = words.map((word) => (random() < 0.01 ? `${word}x` : word));
  return { old: words.join(" "), next: next.join(" ") };
}

/** A 50,000-line file with 500 scattered edits: lines replaced, inserted and deleted. */
function scattered() {
  const random = rng(4);
  const old = codeFile(50000, random);
  const next = [...old];
  for (let i = 0; i < 500; i++) {
    const at = Math.floor(random() * next.length);
    const kind = random();
    if (kind < 0.4) next[at] = codeLine(random);
    else if (kind < 0.7) next.splice(at, 0, codeLine(random), codeLine(random));
    else next.splice(at, 2);
  }
  return { old: old.join(""), next: next.join("") };
}

/** A run slower than this is not repeated: its one run is the figure (n = 1, no warm-up). */
const SINGLE_RUN_MS = 5000;

/** Runs `fn` until the run or time limit, after a warm-up, and returns the median in ms. */
function measure(fn) {
  const first = performance.now();
  fn();
  const firstMs = performance.now() - first;
  if (firstMs > SINGLE_RUN_MS) return { median: firstMs, runs: 1 };
  // A slow case gets one warm-up run (the one above); a fast one a few more, so the JIT and
  // WASM tiers have settled before timing starts.
  const warmups = firstMs > 200 ? 0 : 5;
  for (let i = 0; i < warmups; i++) fn();
  const times = [];
  const started = performance.now();
  while (times.length < MAX_RUNS && (times.length < MIN_RUNS || performance.now() - started < TIME_PER_SIDE_MS)) {
    const at = performance.now();
    fn();
    times.push(performance.now() - at);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], runs: times.length };
}

const encoder = new TextEncoder();
const tetherDiff = (old, next) => tether.diffLines(encoder.encode(old), encoder.encode(next));

/** Checks that the hunks really turn `old` into `next`, so a fast but wrong result cannot pass. */
function check(name, old, next, diff) {
  const lines = old.split(/(?<=\n)/).filter((line) => line !== "");
  const out = [];
  let at = 0;
  for (const hunk of diff.hunks) {
    out.push(...lines.slice(at, hunk.old.start), ...hunk.added);
    at = hunk.old.start + hunk.old.count;
  }
  out.push(...lines.slice(at));
  if (out.join("") !== next) throw new Error(`${name}: tether-diff's hunks do not turn the old text into the new one`);
}

const cases = [
  { name: "5,000 lines, 1% changed", make: smallEdit },
  { name: "20,000 lines rewritten", make: rewrite, speedTarget: true },
  { name: "1 MB, one line", make: oneLine, speedTarget: true, oneLine: true },
  { name: "50,000 lines, scattered edits", make: scattered },
];

const ms = (value) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
const pad = (text, width) => String(text).padEnd(width);
const rows = [];
const targets = [];
const notes = [];

console.log(`tether-diff (WASM, default budget) vs jsdiff ${jsdiffVersion()} on Node ${process.versions.node}`);
console.log("tether-diff time = encode to UTF-8 + copy into WASM + diff + result to JS objects\n");
for (const { name, make, speedTarget, oneLine: isOneLine } of cases) {
  const { old, next } = make();
  const result = tetherDiff(old, next);
  check(name, old, next, result);
  const ours = measure(() => tetherDiff(old, next));
  const theirs = measure(() => jsdiffLines(old, next));
  const hunks = result.hunks.length;
  rows.push([
    name,
    ms(ours.median),
    ours.runs,
    ms(theirs.median),
    theirs.runs,
    `${(theirs.median / ours.median).toFixed(1)}×`,
    `${result.degraded ? "yes" : "no"} (${hunks} hunk${hunks === 1 ? "" : "s"})`,
  ]);
  targets.push([`${name}: ≤ ${HOST_BUDGET_MS} ms host time`, ms(ours.median), ours.median <= HOST_BUDGET_MS]);
  if (speedTarget) {
    const ratio = theirs.median / ours.median;
    targets.push([`${name}: ≥ ${MIN_SPEEDUP}× jsdiff diffLines`, `${ratio.toFixed(1)}×`, ratio >= MIN_SPEEDUP]);
  }
  if (isOneLine) {
    // One line against one line is a single replaced line for both libraries: neither looks
    // inside it, so diffLines is a like-for-like comparison of little more than copying. What
    // jsdiff would take to find the changed words is shown for scale.
    const words = measure(() => diffWords(old, next));
    const chars = measure(() => diffChars(old, next));
    notes.push(
      `${name}: both diffLines see one changed line (tether-diff: ${hunks} hunk, the whole line); the same`,
      `  texts through jsdiff diffWords take ${ms(words.median)} (n=${words.runs}, ` +
        `${(words.median / ours.median).toFixed(0)}× tether-diff's diffLines) and diffChars ${ms(chars.median)} ` +
        `(n=${chars.runs}).`,
      "  Only diffLines is like for like: it is the target's ratio above. Word highlights inside the line",
      "  are tether-diff's diffWords, which the WASM facade does not expose yet.",
    );
  }
}

const header = ["case", "tether-diff", "n", "jsdiff diffLines", "n", "ratio", "degraded"];
const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => String(row[i]).length)));
console.log(header.map((title, i) => pad(title, widths[i])).join("  "));
for (const row of rows) console.log(row.map((cell, i) => pad(cell, widths[i])).join("  "));
console.log("\n(ratio = jsdiff time / tether-diff time; n = timed runs after warm-up)");
if (notes.length > 0) console.log(`\n${notes.join("\n")}`);

console.log("\nTargets (issue 4; information only, the benchmark never fails on timing):");
const targetWidth = Math.max(...targets.map(([name]) => name.length));
for (const [name, figure, met] of targets) console.log(`  ${pad(name, targetWidth)}  ${pad(figure, 9)}  ${met ? "PASS" : "MISS"}`);

function jsdiffVersion() {
  try {
    return createRequire(import.meta.url)("diff/package.json").version;
  } catch {
    // Newer packages may not export their package.json; the version is then left out.
    return "";
  }
}
