// Benchmark (not a test): what Tether costs before the person does anything. `cargo xtask bench
// footprint` builds what it needs and runs this under Node 24 as
// `node bench/footprint.bench.mjs <engine dir> <speed-built engine dir> <path to tetherd>`.
//
// Three figures, each beside its anchor from the same run:
// - The WASM engine's size after wasm-opt, against the goal of 700 KB. The engine is read
//   and compiled on every activation of the extension, so its size is start-up time.
// - Activation: a fresh Node process from loading the engine's module (which reads the .wasm,
//   compiles and instantiates it) to a constructed `Engine`, what the extension does before its
//   chat can answer. Anchors: the same engine built for speed (`--release`, opt-level 3: what it
//   cost before the size-tuned profile) and loading `@agentclientprotocol/sdk`, the module a
//   TypeScript ACP client loads instead.
// - tetherd's resident memory (VmRSS) while idle, after a host said hello, against a Node process
//   that does nothing (the least a sidecar written in Node would cost).
//
// Each process-start figure is the median of RUNS fresh processes, the variants taking turns so
// that a busy machine slows all alike. The script prints its figures and exits 0 whatever they
// are; it fails only when something could not run. With TETHER_BENCH_RESULTS set it also writes
// `footprint.json` there for `cargo xtask bench`'s report.

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const [engineDir, speedEngineDir, tetherdPath, ...extra] = process.argv.slice(2);
if (!engineDir || !speedEngineDir || !tetherdPath || extra.length > 0) {
  console.error("usage: node bench/footprint.bench.mjs <engine dir> <speed-built engine dir> <path to tetherd>");
  process.exit(2);
}
for (const path of [join(engineDir, "tether_wasm.js"), join(speedEngineDir, "tether_wasm.js"), tetherdPath]) {
  if (!existsSync(path)) {
    console.error(`${path} not found: run \`cargo xtask bench footprint\`, which builds it`);
    process.exit(2);
  }
}

const RUNS = 15;
const WASM_GOAL_BYTES = 700 * 1000;
/** How long tetherd is left idle after the hello before its memory is read. */
const IDLE_MS = 2000;
/** `SIDECAR_PROTOCOL_VERSION` in crates/tether-core/src/sidecar.rs. */
const PROTOCOL_VERSION = 1;

/** The configuration the extension gives the engine (`EngineConfig`), for a workspace that
 * exists nowhere: constructing an engine does no IO. */
const ENGINE_CONFIG = {
  token: "benchmark",
  clientName: "Tether",
  clientVersion: "0.1.0",
  workspaceRoot: "/workspace",
  workspaceFolders: ["/workspace"],
  mcpServers: null,
  tetherDir: "/workspace/.tether",
  demoAgentCommand: null,
  agents: null,
  builtinProfiles: [],
  defaultProfile: null,
  permissions: { defaultMode: "ask", rules: [] },
  followAgent: false,
  workspaceTrusted: true,
  claudeCli: { persistent: false, idleTimeoutMinutes: 30 },
};

/** Runs in a fresh Node process: loads the engine module, constructs an engine, prints the time
 * each took. */
const ACTIVATE_ENGINE = `
const { performance } = require("node:perf_hooks");
const started = performance.now();
const wasm = require(process.argv[1]);
const loaded = performance.now();
// The engine reads its configuration as JSON bytes, as the extension passes it (engineInput).
const engine = new wasm.Engine(new TextEncoder().encode(process.argv[2]), () => {});
const ready = performance.now();
engine.free();
process.stdout.write(JSON.stringify({ load: loaded - started, ready: ready - started }));
`;

/** Runs in a fresh Node process: loads the ACP SDK as a TypeScript client would. */
const LOAD_SDK = `
const started = performance.now();
await import("@agentclientprotocol/sdk");
process.stdout.write(JSON.stringify({ load: performance.now() - started, ready: performance.now() - started }));
`;

function timedProcess(args) {
  const result = spawnSync(process.execPath, args, { encoding: "utf8", cwd: process.cwd() });
  if (result.status !== 0) {
    throw new Error(`node ${args.slice(0, 2).join(" ")} failed (${result.status ?? result.signal}): ${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

const variants = [
  { name: "engine (size-tuned)", args: ["-e", ACTIVATE_ENGINE, join(engineDir, "tether_wasm.js"), JSON.stringify(ENGINE_CONFIG)] },
  { name: "engine built for speed", args: ["-e", ACTIVATE_ENGINE, join(speedEngineDir, "tether_wasm.js"), JSON.stringify(ENGINE_CONFIG)] },
  { name: "@agentclientprotocol/sdk", args: ["--input-type=module", "-e", LOAD_SDK] },
];

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted.at(-1), runs: sorted.length };
}

function activation() {
  const times = new Map(variants.map((variant) => [variant.name, []]));
  // One warm-up each (the file cache), then the variants take turns.
  for (const variant of variants) timedProcess(variant.args);
  for (let run = 0; run < RUNS; run++) {
    for (const variant of variants) times.get(variant.name).push(timedProcess(variant.args).ready);
  }
  return new Map([...times].map(([name, values]) => [name, summary(values)]));
}

/** tetherd's VmRSS after a host connected, said hello, and left it idle for IDLE_MS. */
async function tetherdIdleRss() {
  const workDir = mkdtempSync(join(tmpdir(), "tether-footprint-bench-"));
  const token = randomBytes(16).toString("hex");
  const child = spawn(tetherdPath, ["serve", "--socket", join(workDir, "sock", "tetherd.sock")], {
    env: { ...process.env, TETHER_TOKEN: token },
    stdio: ["ignore", "pipe", "ignore"],
  });
  try {
    const socketPath = await new Promise((resolve, reject) => {
      let stdout = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
        const newline = stdout.indexOf("\n");
        if (newline !== -1) resolve(JSON.parse(stdout.slice(0, newline)).listening);
      });
      child.on("exit", (code, signal) => reject(new Error(`tetherd exited (${code ?? signal}) before listening`)));
    });
    const socket = net.createConnection(socketPath);
    await new Promise((resolve, reject) => {
      socket.on("connect", resolve);
      socket.on("error", reject);
    });
    const answered = new Promise((resolve) => socket.once("data", resolve));
    const hello = { jsonrpc: "2.0", id: 1, method: "hello", params: { token, protocolVersion: PROTOCOL_VERSION, client: "footprint benchmark" } };
    socket.write(`${JSON.stringify(hello)}\n`);
    await answered;
    await sleep(IDLE_MS);
    const rss = residentBytes(child.pid);
    socket.destroy();
    return rss;
  } finally {
    child.kill("SIGTERM");
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** A Node process that does nothing, idle for as long: the anchor for tetherd's memory. */
async function idleNodeRss() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { stdio: "ignore" });
  try {
    await sleep(IDLE_MS);
    return residentBytes(child.pid);
  } finally {
    child.kill("SIGTERM");
  }
}

function residentBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  if (!Number.isFinite(kib)) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return kib * 1024;
}

const single = (value) => ({ median: value, min: value, max: value, runs: 1 });
const wasmBytes = statSync(join(engineDir, "tether_wasm_bg.wasm")).size;
const speedWasmBytes = statSync(join(speedEngineDir, "tether_wasm_bg.wasm")).size;
const activated = activation();
const tetherdRss = await tetherdIdleRss();
const nodeRss = await idleNodeRss();

const kb = (bytes) => bytes / 1000;
const mib = (bytes) => bytes / (1024 * 1024);
const figures = [
  {
    figure: "WASM engine after wasm-opt",
    unit: "KB",
    better: "lower",
    tether: single(kb(wasmBytes)),
    anchor: { name: "the same engine built for speed", ...single(kb(speedWasmBytes)) },
    target: `≤ ${kb(WASM_GOAL_BYTES)} KB`,
  },
  {
    figure: "activation: module load → engine ready",
    unit: "ms",
    better: "lower",
    tether: activated.get("engine (size-tuned)"),
    anchor: { name: "the same engine built for speed", ...activated.get("engine built for speed") },
  },
  {
    figure: "activation: module load → engine ready",
    unit: "ms",
    better: "lower",
    tether: activated.get("engine (size-tuned)"),
    anchor: { name: "loading @agentclientprotocol/sdk", ...activated.get("@agentclientprotocol/sdk") },
  },
  {
    figure: "tetherd idle RSS",
    unit: "MiB",
    better: "lower",
    tether: single(mib(tetherdRss)),
    anchor: { name: "an idle Node process", ...single(mib(nodeRss)) },
  },
];

const fixed = (value) => value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2);
console.log(`footprint (${RUNS} fresh processes per activation figure, medians [min–max])`);
for (const { figure, unit, tether, anchor, target } of figures) {
  const spread = (side) => (side.runs > 1 ? ` [${fixed(side.min)}–${fixed(side.max)}]` : "");
  const ratio = anchor.median > 0 ? ` (${(tether.median / anchor.median).toFixed(2)}×)` : "";
  console.log(
    `  ${figure}: ${fixed(tether.median)}${spread(tether)} ${unit} vs ${anchor.name} ${fixed(anchor.median)}${spread(anchor)} ${unit}${ratio}` +
      (target ? `; goal ${target}: ${tether.median <= WASM_GOAL_BYTES / 1000 ? "PASS" : "MISS"}` : ""),
  );
}

const resultsDir = process.env.TETHER_BENCH_RESULTS;
if (resultsDir) {
  mkdirSync(resultsDir, { recursive: true });
  const results = { benchmark: "footprint", title: "Footprint: engine size, activation, tetherd's memory", figures };
  writeFileSync(join(resultsDir, "footprint.json"), `${JSON.stringify(results, null, 2)}\n`);
}
