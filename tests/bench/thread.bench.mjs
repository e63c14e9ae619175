// Benchmark: a long session reopened in the chat webview, in headless Chromium.
//
//   node bench/thread.bench.mjs [build dir] [--runs N] [--entries N]
//
// The webview is bundled as it ships (minified, split) with a fake host (webview/dev/bench-host.ts)
// into the build dir (default: target/bench/webview), served, and opened at the sidebar's size.
// The host answers `ready` as the real one does for a reopened session: one snapshot holding the
// whole thread, here 10,000 entries (prompts, agent replies with paragraphs and fenced code,
// read / edit / execute tool calls with text, diffs and terminals). The anchor, measured in the
// same run and alternately, is the same session cut to 100 entries: every figure is shown beside
// it and as a ratio, with the issue's targets where it has one.
//
// Each run is a fresh Chromium; per run:
//   - snapshot received: the snapshot posted → the webview's model holds it (its `tether-snapshot`
//     mark: the message's deserialization and the model's update);
//   - first paint: the snapshot posted → the first frame painted with the thread's end in sight
//     (its last entry's bottom inside the thread);
//   - interactive: the snapshot posted → the main thread free: the end of the last task over
//     50 ms (at least the first paint) before the view settled (asked for no frame for a
//     second). This includes the code highlighter's first load (its chunks, then one task of
//     ~250 ms highlighting the code blocks in sight), which a short session pays too;
//   - memory after load (once the view stopped asking for frames, after a garbage collection):
//     JS heap used (CDP Performance.getMetrics) and the renderer process's resident memory;
//   - entries and elements in the DOM after load;
//   - idle 10 s: the renderer process's CPU time (all its threads), the main thread's task time
//     (CDP TaskDuration), and the frames and timers the webview asked for;
//   - scrolling: the thread scrolled up from its end, 200 px a frame for 300 frames (turning at
//     the top), the time between frames (requestAnimationFrame deltas): p95 and the worst, and
//     the most entries in the DOM meanwhile.
// Medians of the runs with min–max. It prints the figures and, with TETHER_BENCH_RESULTS set,
// writes thread.json there; it fails only when something could not run.

import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { VIEWPORT, buildBenchPage, launchBrowser, serveBenchPage } from "../../webview/dev/bench-page.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const [value] = argv.splice(at, 2).slice(1);
  return Number(value);
};
const RUNS = option("--runs", 3);
const LONG = option("--entries", 10_000);
const SHORT = 100;
const buildDir = resolve(argv[0] ?? join(here, "..", "..", "target", "bench", "webview"));

const IDLE_MS = 10_000;
const SCROLL_FRAMES = 300;
const SCROLL_STEP_PX = 200;
/** The view counts as settled once it asked for no frame for this long. */
const SETTLED_MS = 1_000;

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted.at(-1), runs: sorted.length };
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

/**
 * The renderer's CPU time so far (ms: the run time of every thread, from each one's schedstat under
 * /proc/<pid>/task, in nanoseconds, where /proc/<pid>/stat counts only whole 10 ms ticks) and its resident memory
 * (MiB).
 */
function processFigures(pid) {
  let cpuNs = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      cpuNs += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read: its time is gone with it.
    }
  }
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
  return { cpuMs: cpuNs / 1e6, rssMiB: rssKb / 1024 };
}

async function metrics(cdp) {
  const { metrics: list } = await cdp.send("Performance.getMetrics");
  return Object.fromEntries(list.map(({ name, value }) => [name, value]));
}

/** Waits until the webview asked for no frame for SETTLED_MS (at most a minute). */
async function settle(page) {
  const deadline = Date.now() + 60_000;
  let frames = await page.evaluate(() => window.tetherBench.frames);
  let still = Date.now();
  while (Date.now() < deadline) {
    await sleep(100);
    const now = await page.evaluate(() => window.tetherBench.frames);
    if (now !== frames) {
      frames = now;
      still = Date.now();
    } else if (Date.now() - still >= SETTLED_MS) return;
  }
  throw new Error("the webview kept asking for frames for a minute after the snapshot");
}

async function measure(base, entries) {
  const { browser, close } = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const problems = [];
    page.on("pageerror", (error) => problems.push(error.message));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const browserCdp = await browser.newBrowserCDPSession();
    await page.goto(`${base}/index.html?scenario=session&entries=${entries}`);
    await page.waitForFunction(() => window.tetherBench.endPaintedAt !== null, null, { timeout: 120_000, polling: 50 });
    await settle(page);
    const { processInfo } = await browserCdp.send("SystemInfo.getProcessInfo");
    // Chromium keeps a spare renderer or two beside the page's: the page's is the one that
    // worked (the others have next to no CPU time).
    const renderers = processInfo.filter((info) => info.type === "renderer").map((info) => info.id);
    if (renderers.length === 0) throw new Error("Chromium reported no renderer process");
    const pid = renderers.reduce((busiest, id) => (processFigures(id).cpuMs > processFigures(busiest).cpuMs ? id : busiest));

    const load = await page.evaluate(() => {
      const bench = window.tetherBench;
      const thread = document.querySelector("main.thread");
      return {
        snapshotPostedAt: bench.snapshotPostedAt,
        snapshotAppliedAt: performance.getEntriesByName("tether-snapshot")[0]?.startTime ?? Number.NaN,
        endPaintedAt: bench.endPaintedAt,
        longTasks: bench.longTasks,
        entriesInDom: thread.querySelectorAll(":scope > [data-index]").length,
        elements: document.getElementsByTagName("*").length,
        atEnd: thread.scrollTop + thread.clientHeight >= thread.scrollHeight - 2,
      };
    });
    if (!load.atEnd) problems.push("the reopened thread was not scrolled to its end");
    const firstPaint = load.endPaintedAt - load.snapshotPostedAt;
    let interactiveAt = load.endPaintedAt;
    for (const task of load.longTasks) {
      if (task.start + task.duration > interactiveAt) interactiveAt = task.start + task.duration;
    }
    const interactive = interactiveAt - load.snapshotPostedAt;

    await cdp.send("HeapProfiler.collectGarbage");
    const afterLoad = await metrics(cdp);
    const loadProcess = processFigures(pid);

    // Idle: nothing happens for IDLE_MS; what did the page spend?
    // (The few milliseconds of tasks it shows even so are this script's own two evaluations
    // and metric reads, the same for both sessions.)
    const counters = () => page.evaluate(() => ({ frames: window.tetherBench.frames, timers: window.tetherBench.timers }));
    const idleStart = { bench: await counters(), metrics: await metrics(cdp), process: processFigures(pid) };
    await sleep(IDLE_MS);
    const idleEnd = { bench: await counters(), metrics: await metrics(cdp), process: processFigures(pid) };

    // Scrolling up through the thread, a step a frame, turning at the top.
    const scroll = await page.evaluate(
      ({ frames, step }) =>
        new Promise((resolve) => {
          const raf = window.tetherBench.raf;
          const thread = document.querySelector("main.thread");
          const deltas = [];
          let direction = -1;
          let last = null;
          let mostEntries = 0;
          let count = 0;
          const tick = (now) => {
            if (last !== null) deltas.push(now - last);
            last = now;
            mostEntries = Math.max(mostEntries, thread.querySelectorAll(":scope > [data-index]").length);
            if (count++ === frames) {
              resolve({ deltas, mostEntries, scrollTop: thread.scrollTop });
              return;
            }
            if (direction < 0 && thread.scrollTop <= 0) direction = 1;
            else if (direction > 0 && thread.scrollTop + thread.clientHeight >= thread.scrollHeight - 1) direction = -1;
            thread.scrollTop += direction * step;
            raf(tick);
          };
          raf(tick);
        }),
      { frames: SCROLL_FRAMES, step: SCROLL_STEP_PX },
    );
    if (problems.length > 0) throw new Error(`the page failed: ${problems.join("; ")}`);
    return {
      snapshotApplied: load.snapshotAppliedAt - load.snapshotPostedAt,
      firstPaint,
      interactive,
      heapMiB: afterLoad.JSHeapUsedSize / 2 ** 20,
      rendererMiB: loadProcess.rssMiB,
      entriesInDom: load.entriesInDom,
      elements: load.elements,
      idleCpuMs: idleEnd.process.cpuMs - idleStart.process.cpuMs,
      idleTaskMs: (idleEnd.metrics.TaskDuration - idleStart.metrics.TaskDuration) * 1000,
      idleFrames: idleEnd.bench.frames - idleStart.bench.frames,
      idleTimers: idleEnd.bench.timers - idleStart.bench.timers,
      scrollP95: percentile(scroll.deltas, 0.95),
      scrollWorst: Math.max(...scroll.deltas),
      scrollEntriesInDom: scroll.mostEntries,
    };
  } finally {
    await close();
  }
}

/** The figures, in the report's order: key, name, unit, which way is better, target. */
const FIGURES = [
  ["snapshotApplied", "snapshot received and in the model", "ms", "lower", null],
  ["firstPaint", "time to first paint (thread's end in sight)", "ms", "lower", null],
  ["interactive", "time to interactive (last long task over)", "ms", "lower", null],
  ["scrollP95", "scroll frame time p95", "ms", "lower", "≤ 16.7 ms (60 fps)"],
  ["scrollWorst", "scroll frame time, worst", "ms", "lower", null],
  ["heapMiB", "JS heap used after load", "MiB", "lower", null],
  ["rendererMiB", "renderer process memory (RSS) after load", "MiB", "lower", null],
  ["entriesInDom", "entries in the DOM after load", "entries", "lower", "< 200"],
  ["scrollEntriesInDom", "entries in the DOM while scrolling, most", "entries", "lower", "< 200"],
  ["elements", "elements in the DOM after load", "elements", "lower", null],
  ["idleCpuMs", "renderer CPU while idle 10 s", "ms", "lower", null],
  ["idleTaskMs", "main-thread task time while idle 10 s", "ms", "lower", null],
  ["idleFrames", "frames asked for while idle 10 s", "frames", "lower", "0 (idle: no frames or timers)"],
  ["idleTimers", "timers set while idle 10 s", "timers", "lower", "0 (idle: no frames or timers)"],
];

console.log(`bench thread: bundling the webview into ${buildDir}`);
await buildBenchPage(buildDir);
const server = await serveBenchPage(buildDir);
const results = { [LONG]: [], [SHORT]: [] };
try {
  // One warm-up (the file cache, Chromium's own first start), then the two take turns.
  await measure(server.base, SHORT);
  for (let run = 0; run < RUNS; run++) {
    for (const entries of [SHORT, LONG]) {
      const figures = await measure(server.base, entries);
      results[entries].push(figures);
      console.log(`  run ${run + 1}, ${entries} entries: ${FIGURES.map(([key]) => `${key} ${round(figures[key])}`).join(", ")}`);
    }
  }
} finally {
  server.close();
}

function round(value) {
  return Math.abs(value) >= 100 ? Math.round(value) : Math.round(value * 10) / 10;
}

const figures = [];
const rows = [];
for (const [key, name, unit, better, target] of FIGURES) {
  const tether = summary(results[LONG].map((figures) => figures[key]));
  const anchor = summary(results[SHORT].map((figures) => figures[key]));
  figures.push({
    figure: name,
    unit,
    better,
    tether,
    anchor: { name: `the same session with ${SHORT} entries`, ...anchor },
    ...(target === null ? {} : { target }),
  });
  const ratio = anchor.median === 0 ? (tether.median === 0 ? "1.0x" : "–") : `${(tether.median / anchor.median).toFixed(1)}x`;
  const spread = (summary) => `${round(summary.median)} (${round(summary.min)}–${round(summary.max)})`;
  rows.push([name, unit, spread(tether), spread(anchor), ratio, target ?? ""]);
}

const header = ["figure", "unit", `${LONG} entries`, `${SHORT} entries`, "ratio", "target"];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
const line = (cells) => cells.map((cell, column) => cell.padEnd(widths[column])).join("  ");
console.log(`\nThread: a reopened session in the webview (Chromium, ${VIEWPORT.width}×${VIEWPORT.height}), median (min–max) of ${RUNS} runs`);
console.log(line(header));
for (const row of rows) console.log(line(row));

const resultsDir = process.env.TETHER_BENCH_RESULTS;
if (resultsDir) {
  mkdirSync(resultsDir, { recursive: true });
  const report = { benchmark: "thread", title: `Thread: a ${LONG.toLocaleString("en")}-entry session opened in the webview`, figures };
  writeFileSync(join(resultsDir, "thread.json"), `${JSON.stringify(report, null, 2)}\n`);
}
