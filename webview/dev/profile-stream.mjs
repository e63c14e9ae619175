// Profiles a streamed reply in the webview: where the main thread's time goes while one giant
// paragraph streams in (chunks of 20 characters, `#000001 quick brown `, no newline), posted
// the way the real host posts them (at most one patch per frame, the chunks since the last
// post merged into one appendChunk), in headless Debian Chromium with CDP tracing and the V8
// sampling profiler running together.
//
//   node dev/profile-stream.mjs [--chunks 20000,5000] [--rate 2000,20000] [--before N] [--out DIR] [--minify]
//
// `rate` is the agent's chunks a second (0: every chunk at once, in one patch). `before` puts
// N earlier turns above the reply, each with a reply of 20,000 chunks already drawn: what a
// frame costs in a long session rather than a new one. The webview is
// bundled unminified (functions keep their names; `--minify` for the shipped bundle) with
// dev/bench-host.ts into DIR (default: ../target/bench/webview-profile), which also receives
// each run's trace (`stream-<chunks>-<rate>.trace.json`, loadable in DevTools' Performance panel)
// and CPU profile (`.cpuprofile`). Printed per run:
//   - the last chunk's patch posted → the frame showing it painted;
//   - the frames (animation frame callbacks: the webview's render) and the main thread's tasks:
//     count, p50 / p95 / max, and each task over 50 ms with what it did (trace events by self
//     time, and the JS functions sampled in it);
//   - the main thread's time by what it was: the webview's source files and packages
//     (markdown-it, DOMPurify...), the DOM calls made from JS (innerHTML, measuring), and the
//     browser's own work outside JS (style, layout, paint, GC, message deserialization).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { VIEWPORT, buildBenchPage, launchBrowser, serveBenchPage } from "./bench-page.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(name);
  return at === -1 ? fallback : argv[at + 1];
};
const CHUNKS = option("--chunks", "20000,5000").split(",").map(Number);
const RATES = option("--rate", "2000").split(",").map(Number);
const outDir = resolve(option("--out", join(here, "..", "..", "target", "bench", "webview-profile")));
const minify = argv.includes("--minify");
const BEFORE = Number(option("--before", "0"));

const TRACE_CATEGORIES = [
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "disabled-by-default-devtools.timeline.frame",
  "toplevel",
  "blink.user_timing",
  "v8",
  "v8.execute",
  "blink",
  "loading",
];

const sourceMaps = new Map();

async function main() {
  console.log(`profile-stream: bundling the webview (${minify ? "minified" : "unminified"}) into ${outDir}`);
  await buildBenchPage(outDir, { minify });
  const server = await serveBenchPage(outDir);
  try {
    for (const rate of RATES) {
      for (const chunks of CHUNKS) await profile(server, chunks, rate);
    }
  } finally {
    server.close();
  }
}

async function profile(server, chunks, rate) {
  const { browser, close } = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const problems = [];
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(`${server.base}/index.html?scenario=stream&chunks=${chunks}&rate=${rate}&before=${BEFORE}`);
    await page.waitForFunction(() => performance.getEntriesByName("tether-snapshot-drawn").length > 0);
    // Let the page's start (the bundle's chunks, fonts) settle before measuring.
    await sleep(1000);

    const cdp = await page.context().newCDPSession(page);
    const events = [];
    cdp.on("Tracing.dataCollected", ({ value }) => events.push(...value));
    const tracingDone = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
    await cdp.send("Tracing.start", {
      transferMode: "ReportEvents",
      traceConfig: { includedCategories: TRACE_CATEGORIES, recordMode: "recordUntilFull" },
    });
    await cdp.send("Profiler.start");

    const startedAt = await page.evaluate(() => {
      window.tetherBench.startStream();
      return performance.now();
    });
    await page.waitForFunction(() => window.tetherBench.lastChunkPaintedAt !== null, null, {
      timeout: 300_000,
      polling: 100,
    });
    // The frames after the last chunk (the tail's last render) belong to the stream too.
    await sleep(1500);
    const { profile: cpuProfile } = await cdp.send("Profiler.stop");
    await cdp.send("Tracing.end");
    await tracingDone;
    // The streamed reply: the last entry, after the earlier turns' prompt and reply each.
    const bench = await page.evaluate((reply) => ({
      firstChunkAt: window.tetherBench.firstChunkAt,
      lastChunkAt: window.tetherBench.lastChunkAt,
      lastChunkPaintedAt: window.tetherBench.lastChunkPaintedAt,
      patches: window.tetherBench.patches,
      length: document.querySelector(`main.thread [data-index="${reply}"]`)?.textContent?.length ?? 0,
      blocks: document.querySelectorAll(`main.thread [data-index="${reply}"] .markdown p`).length,
    }), 2 * BEFORE + 1);
    if (problems.length > 0) throw new Error(`the page failed: ${problems.join("; ")}`);

    const name = `stream-${chunks}-${rate}`;
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, `${name}.trace.json`), JSON.stringify({ traceEvents: events }));
    writeFileSync(join(outDir, `${name}.cpuprofile`), JSON.stringify(cpuProfile));
    report({ chunks, rate, startedAt, bench, events, cpuProfile });
  } finally {
    await close();
  }
}

// ---------------------------------------------------------------------------------------------
// What a line of the bundle came from: esbuild writes `// src/file.ts` and
// `// node_modules/package/...` before each module's code when it does not minify.

function bundleModules(file) {
  if (sourceMaps.has(file)) return sourceMaps.get(file);
  let starts = [];
  try {
    const lines = readFileSync(join(outDir, file), "utf8").split("\n");
    lines.forEach((line, index) => {
      const match = /^\/\/ (src\/[\w./-]+|node_modules\/((?:@[\w.-]+\/)?[\w.-]+)[\w./-]*)$/.exec(line);
      if (match) starts.push({ line: index, module: match[2] !== undefined ? match[2] : match[1] });
    });
  } catch {
    starts = [];
  }
  sourceMaps.set(file, starts);
  return starts;
}

/** The source module of a call frame: `src/thread-view.ts`, `markdown-it`, `(native)`... */
function moduleOf(frame) {
  if (frame.url === "") return null;
  const file = frame.url.replace(/^https?:\/\/[^/]+\//, "");
  const starts = bundleModules(file);
  let found = file;
  for (const start of starts) {
    if (start.line <= frame.lineNumber) found = start.module;
    else break;
  }
  return found;
}

/** Where a sample's time goes: its leaf's module, or the DOM call / V8 bucket it is in. */
function categoryOf(node) {
  const frame = node.callFrame;
  if (frame.url === "") {
    // (program): the browser's own work outside JS; (garbage collector); (idle); or a DOM API
    // called from JS (innerHTML, getBoundingClientRect...), named after it.
    return frame.functionName.startsWith("(") ? frame.functionName : `DOM: ${frame.functionName}`;
  }
  return moduleOf(frame);
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

const ms = (value) => (value >= 100 ? Math.round(value) : Math.round(value * 10) / 10);

function report({ chunks, rate, bench, events, cpuProfile }) {
  console.log(`\n=== ${chunks} chunks of 20 characters, ${rate === 0 ? "all at once" : `${rate} a second`}, one paragraph ===`);
  console.log(
    `posted in ${ms(bench.lastChunkAt - bench.firstChunkAt)} ms as ${bench.patches} patches; ` +
      `last chunk's patch → painted: ${ms(bench.lastChunkPaintedAt - bench.lastChunkAt)} ms ` +
      `(${bench.length} characters shown, ${bench.blocks} paragraph(s))`,
  );

  // The renderer's main thread: the CrRendererMain of the process that did the work.
  const mains = events.filter((event) => event.ph === "M" && event.name === "thread_name" && event.args.name === "CrRendererMain");
  const busiest = mains
    .map((main) => ({ main, count: events.filter((event) => event.pid === main.pid && event.tid === main.tid).length }))
    .sort((a, b) => b.count - a.count)[0].main;
  const onMainAll = events.filter((event) => event.pid === busiest.pid && event.tid === busiest.tid);
  // The stream's span on the trace's clock, from the bench host's marks.
  const markTs = (name) => onMainAll.find((event) => event.name === name)?.ts;
  const fromUs = markTs("bench-first-chunk");
  const lastChunkUs = markTs("bench-last-chunk");
  const paintedUs = markTs("bench-last-chunk-painted");
  if (fromUs === undefined || lastChunkUs === undefined || paintedUs === undefined) {
    throw new Error("the trace lacks the bench host's marks (blink.user_timing)");
  }
  // To the end of the frame that showed the last chunk, and a little after (the tail's last render).
  const toUs = paintedUs + 500_000;
  const within = (event) => event.ts >= fromUs - 1 && event.ts <= toUs;
  const onMain = onMainAll.filter((event) => event.ph === "X" && event.dur !== undefined && within(event));
  const taskName = onMain.some((event) => event.name === "RunTask") ? "RunTask" : "ThreadControllerImpl::RunTask";
  const tasks = onMain.filter((event) => event.name === taskName);
  const frames = onMain.filter((event) => event.name === "FireAnimationFrame");
  const durations = (list) => list.map((event) => event.dur / 1000);
  const total = (list) => durations(list).reduce((sum, value) => sum + value, 0);
  const spanMs = (toUs - fromUs) / 1000;
  console.log(
    `main thread from the first chunk's post to 0.5 s after the last was painted (${ms(spanMs)} ms): ` +
      `${tasks.length} tasks, busy ${ms(total(tasks))} ms (${Math.round((100 * total(tasks)) / spanMs)}%); ` +
      `task p50 ${ms(percentile(durations(tasks), 0.5))} ms, p95 ${ms(percentile(durations(tasks), 0.95))} ms, ` +
      `max ${ms(Math.max(...durations(tasks)))} ms`,
  );
  console.log(
    `the webview's frames (animation frame callbacks): ${frames.length}, ${ms(total(frames))} ms, ` +
      `p50 ${ms(percentile(durations(frames), 0.5))} ms, p95 ${ms(percentile(durations(frames), 0.95))} ms, ` +
      `max ${ms(Math.max(...durations(frames)))} ms`,
  );
  const lastFrames = frames.filter((frame) => frame.ts >= lastChunkUs && frame.ts <= paintedUs);
  console.log(
    `  between the last chunk's post and its paint: ${lastFrames.length} frame callback(s) of ` +
      `${durations(lastFrames).map(ms).join(", ")} ms`,
  );

  // The browser's view: trace events by self time, split into what ran inside the webview's
  // frame callback (its script, and layout it forced by measuring) and outside it (the message
  // handler, the rendering update: style, layout, paint, compositing).
  const selfInside = new Map();
  const selfOutside = new Map();
  for (const [event, self] of selfTimeOf(onMain)) {
    if (event.name === taskName) continue;
    const insideFrame = frames.some((frame) => event.ts >= frame.ts && event.ts + event.dur <= frame.ts + frame.dur);
    const target = insideFrame ? selfInside : selfOutside;
    target.set(event.name, (target.get(event.name) ?? 0) + self);
  }
  const top = (map, count) =>
    [...map].filter(([, value]) => value >= 0.5).sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, value]) => `${name} ${ms(value)}`).join(", ");
  const sum = (map) => [...map.values()].reduce((a, b) => a + b, 0);
  console.log(`trace, inside the frame callbacks (${ms(sum(selfInside))} ms), self time: ${top(selfInside, 10)}`);
  console.log(`trace, outside them (${ms(sum(selfOutside))} ms), self time: ${top(selfOutside, 12)}`);

  // The CPU profile, in the same span: self time by where it was, and the webview's functions.
  const nodes = new Map(cpuProfile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of cpuProfile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const sampleTimes = [];
  let at = cpuProfile.startTime;
  for (const delta of cpuProfile.timeDeltas) sampleTimes.push((at += delta));
  const sampleMs = (index) => (index + 1 < sampleTimes.length ? (sampleTimes[index + 1] - sampleTimes[index]) / 1000 : 0);
  const selfByCategory = new Map();
  const selfByNode = new Map();
  const inclusiveByFunction = new Map();
  cpuProfile.samples.forEach((id, index) => {
    if (sampleTimes[index] < fromUs || sampleTimes[index] > toUs) return;
    const duration = sampleMs(index);
    const leaf = nodes.get(id);
    const category = categoryOf(leaf);
    selfByCategory.set(category, (selfByCategory.get(category) ?? 0) + duration);
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + duration);
    const seen = new Set();
    for (let node = leaf; node !== undefined; node = nodes.get(parents.get(node.id))) {
      const frame = node.callFrame;
      const module = moduleOf(frame);
      if (module === null || !module.startsWith("src/")) continue;
      const key = `${frame.functionName || "(anonymous)"} (${module})`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusiveByFunction.set(key, (inclusiveByFunction.get(key) ?? 0) + duration);
    }
  });
  const busy = [...selfByCategory].filter(([name]) => name !== "(idle)").reduce((total, [, value]) => total + value, 0);
  console.log(`CPU profile, self time by where it was (${ms(busy)} ms sampled busy, idle left out; JS that reads layout counts the layout it forces):`);
  for (const [name, value] of [...selfByCategory].filter(([name]) => name !== "(idle)").sort((a, b) => b[1] - a[1]).slice(0, 14)) {
    console.log(`  ${name.padEnd(44)} ${String(ms(value)).padStart(8)} ms  ${String(Math.round((100 * value) / busy)).padStart(3)}%`);
  }
  console.log("the webview's functions by inclusive time (ms):");
  for (const [name, value] of [...inclusiveByFunction].sort((a, b) => b[1] - a[1]).slice(0, 14)) {
    console.log(`  ${name.padEnd(60)} ${String(ms(value)).padStart(8)}`);
  }
  // The lines that the webview's costliest functions spent their own time on (forced layout shows
  // up here, on the line that reads a size).
  console.log("the webview's hottest lines (self time):");
  const byLine = new Map();
  for (const [id, value] of selfByNode) {
    const node = nodes.get(id);
    const module = moduleOf(node.callFrame);
    if (module === null || !module.startsWith("src/") || !node.positionTicks) continue;
    const ticks = node.positionTicks.reduce((total, tick) => total + tick.ticks, 0);
    for (const tick of node.positionTicks) {
      const key = `${node.callFrame.url}#${tick.line}`;
      const entry = byLine.get(key) ?? { node, line: tick.line, ms: 0 };
      entry.ms += (value * tick.ticks) / ticks;
      byLine.set(key, entry);
    }
  }
  for (const { node, line, ms: value } of [...byLine.values()].sort((a, b) => b.ms - a.ms).slice(0, 6)) {
    const file = node.callFrame.url.replace(/^https?:\/\/[^/]+\//, "");
    const code = readFileSync(join(outDir, file), "utf8").split("\n")[line - 1]?.trim() ?? "";
    console.log(`  ${String(ms(value)).padStart(7)} ms  ${node.callFrame.functionName} (${moduleOf(node.callFrame)}): ${code.slice(0, 90)}`);
  }

  // The long tasks: what each did.
  const long = tasks.filter((task) => task.dur / 1000 > 50);
  console.log(`tasks over 50 ms: ${long.length}${long.length > 0 ? ` (${ms(total(long))} ms in all)` : ""}`);
  for (const task of long.slice(0, 10)) {
    const inside = onMain.filter((event) => event.ts >= task.ts && event.ts + event.dur <= task.ts + task.dur);
    const self = new Map();
    for (const [event, value] of selfTimeOf(inside)) {
      if (event.name !== taskName) self.set(event.name, (self.get(event.name) ?? 0) + value);
    }
    const sampled = new Map();
    cpuProfile.samples.forEach((id, index) => {
      if (sampleTimes[index] < task.ts || sampleTimes[index] > task.ts + task.dur) return;
      const category = categoryOf(nodes.get(id));
      sampled.set(category, (sampled.get(category) ?? 0) + sampleMs(index));
    });
    const frameTime = total(inside.filter((event) => event.name === "FireAnimationFrame"));
    console.log(
      `  ${ms(task.dur / 1000)} ms at +${ms((task.ts - fromUs) / 1000)} ms (frame callback ${ms(frameTime)} ms): ` +
        `${top(self, 5)} | sampled: ${top(new Map([...sampled].filter(([name]) => name !== "(idle)")), 4)}`,
    );
  }
  if (long.length > 10) console.log(`  ... and ${long.length - 10} more`);
}

/** Each complete trace event with its self time (ms): its duration less its children's. */
function selfTimeOf(list) {
  const sorted = [...list].sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const self = new Map();
  const stack = [];
  for (const event of sorted) {
    while (stack.length > 0 && stack.at(-1).ts + stack.at(-1).dur <= event.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent !== undefined && event.ts + event.dur <= parent.ts + parent.dur) {
      self.set(parent, self.get(parent) - event.dur / 1000);
    }
    self.set(event, event.dur / 1000);
    stack.push(event);
  }
  return self;
}

await main();
