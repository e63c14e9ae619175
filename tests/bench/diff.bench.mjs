// Benchmark (not a test): tether-diff in WASM, as the VS Code host calls it, against npm's `diff`
// package (jsdiff) on large inputs. `cargo xtask bench` builds the WASM and runs
// this under Node 24 as `node bench/diff.bench.mjs <path to tether_wasm.js>`; `--quick` after the
// path measures tether-diff alone, for iterating on its speed (jsdiff takes minutes on the rewrite).
//
// tether-diff's time is the host's whole cost: encoding both texts to UTF-8, copying them into
// WASM, the diff, and the result as JS values (line numbers or UTF-16 offsets in a Uint32Array:
// the host has the texts, so no line is copied back). Figures are medians after a warm-up.
// Inputs come from a seeded generator, so every run diffs the same texts. Every result is checked
// before it is timed, so a fast but wrong answer cannot pass. The script prints its targets as
// PASS or MISS for information and exits 0 whatever the timings are.

import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { diffLines as jsdiffLines, diffWords } from "diff";

const [wasmPath, ...flags] = process.argv.slice(2);
if (!wasmPath || flags.some((flag) => flag !== "--quick")) {
  console.error("usage: node bench/diff.bench.mjs <path to tether_wasm.js> [--quick]");
  process.exit(2);
}
const quick = flags.includes("--quick");
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
  if (firstMs > SINGLE_RUN_MS) return { median: firstMs, min: firstMs, max: firstMs, runs: 1 };
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
  return { median: times[Math.floor(times.length / 2)], min: times[0], max: times.at(-1), runs: times.length };
}

const encoder = new TextEncoder();
const tetherLines = (old, next, maxSteps) => tether.diffLines(encoder.encode(old), encoder.encode(next), maxSteps);
const tetherWords = (old, next, maxSteps) => tether.diffWords(encoder.encode(old), encoder.encode(next), maxSteps);

const splitLines = (text) => text.split(/(?<=\n)/).filter((line) => line !== "");

/** Checks that the hunks (four numbers each) really turn `old` into `next`. */
function checkLines(name, old, next, diff) {
  const [oldLines, nextLines] = [splitLines(old), splitLines(next)];
  const out = [];
  let at = 0;
  for (let i = 0; i < diff.hunks.length; i += 4) {
    const [oldStart, oldCount, newStart, newCount] = diff.hunks.subarray(i, i + 4);
    if (oldStart < at) throw new Error(`${name}: tether-diff's hunks overlap or are out of order`);
    out.push(...oldLines.slice(at, oldStart), ...nextLines.slice(newStart, newStart + newCount));
    at = oldStart + oldCount;
  }
  out.push(...oldLines.slice(at));
  if (out.join("") !== next) throw new Error(`${name}: tether-diff's hunks do not turn the old text into the new one`);
}

/** Checks that what the word ranges (UTF-16 start and end pairs) leave unmarked is the same on
 * both sides, so every difference is highlighted. */
function checkWords(name, old, next, words) {
  const unmarked = (text, ranges) => {
    let rest = "";
    let at = 0;
    for (let i = 0; i < ranges.length; i += 2) {
      if (ranges[i] < at || ranges[i] >= ranges[i + 1]) throw new Error(`${name}: word ranges out of order`);
      rest += text.slice(at, ranges[i]);
      at = ranges[i + 1];
    }
    return rest + text.slice(at);
  };
  if (unmarked(old, words.old) !== unmarked(next, words.new)) {
    throw new Error(`${name}: tether-diff's word ranges leave a difference unmarked`);
  }
}

const lineCount = (diff) => diff.hunks.length / 4;
const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

/** Each row: what is diffed, tether-diff's call and how its result is checked and described, and
 * jsdiff's call for the same work. `speedTarget` rows must be 10x jsdiff. A row with `maxSteps`
 * gives tether-diff that budget instead of the default, and has no host-time target: the host
 * always uses the default. */
const rows = [
  { name: "5,000 lines, 1% changed", make: smallEdit, kind: "lines" },
  { name: "20,000 lines rewritten", make: rewrite, kind: "lines", speedTarget: true },
  { name: "1 MB, one line: lines", make: oneLine, kind: "lines", speedTarget: true },
  { name: "1 MB, one line: words", make: oneLine, kind: "words", speedTarget: true },
  { name: "1 MB, one line: words, no budget", make: oneLine, kind: "words", speedTarget: true, maxSteps: Infinity },
  { name: "50,000 lines, scattered edits", make: scattered, kind: "lines" },
];
const kinds = {
  lines: {
    ours: tetherLines,
    theirs: jsdiffLines,
    theirName: "diffLines",
    check: checkLines,
    describe: (diff) => plural(lineCount(diff), "hunk"),
  },
  words: {
    ours: tetherWords,
    theirs: diffWords,
    theirName: "diffWords",
    check: checkWords,
    describe: (words) => plural(words.new.length / 2, "new range"),
  },
};

const ms = (value) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
const pad = (text, width) => String(text).padEnd(width);
const table = [];
const inputs = new Map();
/** The figures for the one report (see xtask/src/bench_report.rs): one per case. */
const figures = [];

console.log(`tether-diff (WASM, default budget) vs jsdiff ${jsdiffVersion()} on Node ${process.versions.node}`);
console.log("tether-diff time = encode to UTF-8 + copy into WASM + diff + hunks or ranges as a Uint32Array\n");
for (const { name, make, kind, speedTarget, maxSteps } of rows) {
  if (!inputs.has(make)) inputs.set(make, make());
  const { old, next } = inputs.get(make);
  const { ours: oursFn, theirs: theirsFn, theirName, check, describe } = kinds[kind];
  check(name, old, next, oursFn(old, next, maxSteps));
  const ours = measure(() => oursFn(old, next, maxSteps));
  // tether-diff's budget is a deadline, so the first call, made before the engine has warmed up
  // (WASM is compiled by a baseline tier first), may degrade where later ones do not: the table
  // describes a call after the timed ones, as the host makes most of its calls, and checks it too.
  const result = oursFn(old, next, maxSteps);
  check(name, old, next, result);
  const theirs = quick ? undefined : measure(() => theirsFn(old, next));
  const ratio = theirs && theirs.median / ours.median;
  const targets = [maxSteps === undefined && `≤ ${HOST_BUDGET_MS} ms`, speedTarget && `≥ ${MIN_SPEEDUP}× jsdiff`];
  figures.push({
    figure: `${name}${result.degraded ? " (degraded)" : ""}`,
    unit: "ms",
    better: "lower",
    tether: ours,
    anchor: theirs ? { name: `jsdiff ${theirName}`, ...theirs } : null,
    target: targets.filter(Boolean).join(", ") || undefined,
  });
  table.push([
    name,
    ms(ours.median),
    ours.runs,
    theirs ? `${theirName} ${ms(theirs.median)}` : `${theirName} skipped`,
    theirs ? theirs.runs : "-",
    ratio ? `${ratio.toFixed(1)}×` : "-",
    `${result.degraded ? "yes" : "no"} (${describe(result)})`,
    maxSteps !== undefined ? "-" : ours.median <= HOST_BUDGET_MS ? "PASS" : "MISS",
    !speedTarget ? "-" : ratio === undefined ? "?" : ratio >= MIN_SPEEDUP ? "PASS" : "MISS",
  ]);
}

const header = [
  "case",
  "tether-diff",
  "n",
  "jsdiff",
  "n",
  "ratio",
  "degraded",
  `≤ ${HOST_BUDGET_MS} ms`,
  `≥ ${MIN_SPEEDUP}× jsdiff`,
];
const widths = header.map((title, i) => Math.max(title.length, ...table.map((row) => String(row[i]).length)));
console.log(header.map((title, i) => pad(title, widths[i])).join("  ").trimEnd());
for (const row of table) console.log(row.map((cell, i) => pad(cell, widths[i])).join("  ").trimEnd());
console.log(`
ratio = jsdiff time / tether-diff time; n = timed runs after warm-up (a run over ${SINGLE_RUN_MS / 1000} s is timed once).
Targets (information only, the benchmark never fails on timing): every case within ${HOST_BUDGET_MS} ms of
host time, and ${MIN_SPEEDUP}× jsdiff on the rewrite and the one-line file ("-": no speed target for the case).
The one-line file is one changed line to both diffLines, which only copy it: the words rows are the
work review does for it (the highlights inside the line), against jsdiff's diffWords on the same texts.
With the default budget, a changed part over 500 KB is not split into words but marked as one range,
from the first change to the last (degraded); the "no budget" row splits it and finds every changed word.`);

function jsdiffVersion() {
  try {
    return createRequire(import.meta.url)("diff/package.json").version;
  } catch {
    // Newer packages may not export their package.json; the version is then left out.
    return "";
  }
}

const resultsDir = process.env.TETHER_BENCH_RESULTS;
if (resultsDir) {
  mkdirSync(resultsDir, { recursive: true });
  const results = { benchmark: "diff", title: "Diff: tether-diff (WASM) vs jsdiff", figures };
  writeFileSync(join(resultsDir, "diff.json"), `${JSON.stringify(results, null, 2)}\n`);
}
