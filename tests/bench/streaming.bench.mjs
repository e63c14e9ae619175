// Benchmark (not a test): an agent's streamed reply through Tether's real pipeline minus the
// browser, against the same stream through the ACP SDK's `ClientSideConnection`. `cargo xtask
// bench streaming` builds what it needs and runs this under Node 24 as
// `node bench/streaming.bench.mjs <path to tetherd> <path to tether-test-agent> <path to tether_wasm.js>`;
// `--stages` after the paths prints, instead, where a burst's time goes (see `stages` below).
//
// The agent is the scripted test agent, saying a reply of 20,000 numbered chunks of 20 characters
// (`#000001 quick brown `, ...), behind streaming-relay.mjs, which paces it to 2,000 chunks a
// second and stamps every chunk with the wall-clock time it wrote it.
//
// Tether's side is what the extension host runs: a real tetherd (spawned by the extension's own
// `Sidecar`, reading the agent's stdout, logging and forwarding it over its socket), and the
// extension's own `EngineHost` (bundled here with esbuild, VS Code replaced by the unit tests'
// stub, as `npm test` does) driving the WASM engine. The chat view is a stand-in whose
// `postMessage` does what VS Code's does in the extension host before the message leaves it
// (`JSON.stringify`) and notes the time. The figure is the added latency of each chunk: from
// the agent's write to the post that carries it out of the host.
//
// The anchor is what a TypeScript extension without a sidecar would do: the SDK's
// `ClientSideConnection` on the agent's stdio, and a session update that appends each chunk's
// text to the last message of a thread array. Its figure is from the agent's write to that
// update.
//
// Host CPU is `process.cpuUsage()` over the turn, per 1,000 chunks: this process is the host on
// both sides (tetherd, the relay and the agent are processes of their own). The two sides take
// turns, RUNS each after a warm-up, so a busy machine slows both alike. Every run's chunks are
// checked before its figures count: all of them, each once, in order. The script prints its
// figures beside the anchor's and exits 0 whatever they are; it fails only when something could
// not run or came out wrong. With TETHER_BENCH_RESULTS set it writes `streaming.json` there;
// TETHER_BENCH_KEEP=1 keeps its work folder (tetherd's log, the session's event log).

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { ClientSideConnection, PROTOCOL_VERSION, ndJsonStream } from "@agentclientprotocol/sdk";

const args = process.argv.slice(2);
const showStages = args.includes("--stages");
// Absolute: the agent runs in the workspace folder, the engine is required from this file's.
const [tetherdPath, testAgentPath, enginePath, ...extra] = args.filter((arg) => arg !== "--stages").map((arg) => resolve(arg));
if (!tetherdPath || !testAgentPath || !enginePath || extra.length > 0) {
  console.error(
    "usage: node bench/streaming.bench.mjs <path to tetherd> <path to tether-test-agent> <path to tether_wasm.js> [--stages]",
  );
  process.exit(2);
}
for (const path of [tetherdPath, testAgentPath, enginePath]) {
  if (!existsSync(path)) {
    console.error(`${path} not found: run \`cargo xtask bench streaming\`, which builds it`);
    process.exit(2);
  }
}

const CHUNKS = 20_000;
const RATE = 2_000;
const RUNS = 5;
const WARMUP_CHUNKS = 2_000;
/** How long one turn may take before the run is declared stuck. */
const TURN_TIMEOUT_MS = 120_000;

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../..");
const extensionDir = join(repoRoot, "extension");
const relayPath = join(here, "streaming-relay.mjs");
const workDir = mkdtempSync(join(tmpdir(), "tether-streaming-bench-"));
const workspace = join(workDir, "workspace");
mkdirSync(workspace, { recursive: true });
const now = () => performance.timeOrigin + performance.now();
const utf8 = new TextDecoder();
/** A post's message, read as the webview reads it (webview/src/host-message.ts). */
const posted = (bytes) => JSON.parse(utf8.decode(bytes));

/** Chunk `n` (from 1): 20 characters, its number first. */
function chunkText(n) {
  return `#${String(n).padStart(6, "0")} quick brown `;
}

/** The scenario: a prompt naming a burst's size gets that many numbered chunks at once. */
function scenario(sizes) {
  // Longest first: "burst of 2000" is part of "burst of 20000".
  const prompts = [...new Set(sizes)].sort((a, b) => b - a).map((size) => {
    let text = "";
    for (let n = 1; n <= size; n++) text += chunkText(n);
    return `[[prompt]]\nmatch = "burst of ${size} "\nsteps = [{ say = "${text}", chunks = ${size}, interval_ms = 0 }]\n`;
  });
  return `description = "The streaming benchmark's numbered bursts."\n\n${prompts.join("\n")}`;
}

const scenarioPath = join(workDir, "streaming.toml");
writeFileSync(scenarioPath, scenario([CHUNKS, WARMUP_CHUNKS, 5_000]));

/** The prompt that asks for a burst of `size` chunks, paced at `rate` a second (0: unpaced). */
function promptFor(size, rate) {
  return `A burst of ${size} chunks, ${rate > 0 ? `paced at ${rate}/s` : "unpaced"}.`;
}

/** The runs the relay wrote stamps for so far, oldest first. */
function stampedRuns(stampsFile) {
  if (!existsSync(stampsFile)) return [];
  return readFileSync(stampsFile, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line).times);
}

/** The stamps of the first run after the `before` runs stamped earlier; waits for the relay to
 * write them (it does once the agent has been quiet for a moment). */
async function waitForStamps(stampsFile, before, size) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const times = stampedRuns(stampsFile)[before];
    if (times) {
      if (times.length !== size) throw new Error(`the relay stamped ${times.length} chunks of a burst of ${size}`);
      return times;
    }
    if (Date.now() > deadline) throw new Error(`the relay wrote no stamps for a burst of ${size}`);
    await sleep(50);
  }
}

/**
 * The chunk numbers in `text` (the concatenation of whole chunks, as both sides receive them),
 * each with `at`, appended to `arrivals`; throws when the text is not whole chunks.
 */
function noteChunks(text, at, arrivals) {
  if (text.length % 20 !== 0) throw new Error(`received ${JSON.stringify(text.slice(0, 60))}…, not whole chunks`);
  for (let start = 0; start < text.length; start += 20) {
    const n = Number(text.slice(start + 1, start + 7));
    if (text.slice(start, start + 20) !== chunkText(n)) {
      throw new Error(`received ${JSON.stringify(text.slice(start, start + 20))} where a chunk should be`);
    }
    arrivals.push(n, at);
  }
}

/** Per-chunk latencies (ms) from the arrivals ([n, time, n, time, ...]) and the relay's stamps,
 * after checking every chunk came once, in order. */
function latencies(side, arrivals, stamps) {
  const count = arrivals.length / 2;
  if (count !== stamps.length) throw new Error(`${side}: ${count} chunks arrived of ${stamps.length}`);
  const result = new Float64Array(count);
  for (let index = 0; index < count; index++) {
    const n = arrivals[2 * index];
    if (n !== index + 1) throw new Error(`${side}: chunk ${n} arrived where chunk ${index + 1} should`);
    result[index] = arrivals[2 * index + 1] - stamps[index];
  }
  return result;
}

function quantile(values, q) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted.at(-1), runs: sorted.length };
}

const cpuMs = (usage) => (usage.user + usage.system) / 1000;

// ----- Tether: tetherd, the extension's Sidecar and EngineHost, the WASM engine -----

/** The extension's host code, bundled as its unit tests bundle it: VS Code is their stub. */
function loadHost() {
  const esbuild = createRequire(join(extensionDir, "package.json"))("esbuild");
  const outfile = join(workDir, "host.cjs");
  esbuild.buildSync({
    stdin: {
      contents: 'export { EngineHost, engineInput } from "./src/engineHost";\nexport { Sidecar } from "./src/sidecar";\n',
      resolveDir: extensionDir,
      sourcefile: "streaming-bench-host.ts",
      loader: "ts",
    },
    absWorkingDir: extensionDir,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    alias: { vscode: "./test/vscodeStub.ts" },
    // The engine is given to the host here; the host's own loader is not used.
    external: ["./wasm/tether_wasm.js"],
    outfile,
    logLevel: "error",
  });
  return createRequire(import.meta.url)(outfile);
}

/** The times spent in each engine method, when `--stages` asks (else nothing is wrapped). */
const engineTimes = new Map();
function timed(engine) {
  return new Proxy(engine, {
    get(target, name) {
      const value = target[name];
      if (typeof value !== "function") return value;
      return (...callArgs) => {
        const started = performance.now();
        try {
          return value.apply(target, callArgs);
        } finally {
          const spent = engineTimes.get(name) ?? { calls: 0, ms: 0 };
          spent.calls += 1;
          spent.ms += performance.now() - started;
          engineTimes.set(name, spent);
        }
      };
    },
  });
}

class TetherSide {
  name = "Tether (tetherd + engine host + WASM engine)";

  static async start() {
    const side = new TetherSide();
    await side.startHost();
    return side;
  }

  async startHost() {
    const { EngineHost, Sidecar, engineInput } = loadHost();
    const wasm = createRequire(import.meta.url)(enginePath);
    this.stampsFile = join(workDir, "tether-stamps.jsonl");
    this.problems = [];
    const log = {
      trace() {},
      debug() {},
      info() {},
      warn: (text) => this.problems.push(`warn: ${text}`),
      error: (text) => this.problems.push(`error: ${text}`),
    };
    const token = randomBytes(16).toString("hex");
    const config = {
      token,
      clientName: "Tether",
      clientVersion: "0.1.0",
      workspaceRoot: workspace,
      workspaceFolders: [workspace],
      mcpServers: null,
      tetherDir: join(workspace, ".tether"),
      demoAgentCommand: null,
      agents: [
        {
          name: "Streaming benchmark",
          command: process.execPath,
          args: [relayPath, this.stampsFile, "0", "--", testAgentPath, "--scenario", scenarioPath],
        },
      ],
      builtinProfiles: [],
      defaultProfile: "Streaming benchmark",
      permissions: { defaultMode: "ask", rules: [] },
      followAgent: false,
      workspaceTrusted: true,
      claudeCli: { persistent: false, idleTimeoutMinutes: 30 },
    };
    /** Every post out of the host: its time, and its message as JSON bytes (read with `posted`). */
    this.posts = [];
    /** With `--stages`: socket reads, as [time, chunk numbers in them]. */
    this.reads = [];
    const posts = this.posts;
    const view = {
      badge: undefined,
      webview: {
        postMessage(message) {
          // What VS Code's `postMessage` does in the extension host before the message leaves:
          // the host posts JSON bytes, which VS Code sends on as they are.
          if (!(message instanceof Uint8Array)) throw new Error("the host posted something other than JSON bytes");
          posts.push(now(), message);
          return Promise.resolve(true);
        },
      },
      onDidDispose: () => ({ dispose() {} }),
    };
    const ignore = { show() {}, update() {}, open() {}, clear() {}, write() {}, confirmStop() {}, close() {}, ask() {}, dispose() {} };
    const recordFile = join(workDir, "storage", "tetherd.json");
    const startSidecar = () => {
      this.sidecar?.dispose();
      this.sidecar = Sidecar.start(
        { binaryPath: tetherdPath, token, graceSeconds: 5, logDirectory: join(workDir, "logs"), recordFile, reconnect: false, log },
        {
          connected: (write) => this.host.sidecarConnected(write),
          bytes: (bytes) => {
            if (showStages) this.noteRead(bytes);
            this.host.sidecarBytes(bytes);
          },
          closed: (reason) => this.host.sidecarClosed(reason),
          failedToStart: (message) => this.host.sidecarClosed(message),
        },
      );
    };
    const restarts = {
      restarted: () => this.problems.push("the engine panicked and was restarted"),
      stopped: (reason) => this.problems.push(`the engine stopped: ${reason}`),
    };
    const newEngine = (onPanic) => {
      // As the extension makes it (extension.ts).
      const engine = new wasm.Engine(engineInput(config), onPanic);
      return showStages ? timed(engine) : engine;
    };
    this.host = EngineHost.create(newEngine, log, startSidecar, ignore, ignore, ignore, ignore, restarts);
    this.host.attachView(view);
    this.host.start();
    this.host.webviewMessage({ type: "ready" });
    await this.waitForPost((message) => message.session?.status?.type === "ready", "the session to be ready");
    this.tetherdPid = JSON.parse(readFileSync(recordFile, "utf8")).pid;
  }

  noteRead(bytes) {
    const at = now();
    const numbers = [];
    const mark = Buffer.from('"text":"#');
    for (let found = bytes.indexOf(mark); found !== -1; found = bytes.indexOf(mark, found + 1)) {
      numbers.push(Number(bytes.subarray(found + mark.length, found + mark.length + 6).toString()));
    }
    this.reads.push([at, numbers]);
  }

  /** Waits until a post (from `from` on) satisfies `test`; returns its index in `posts`. */
  async waitForPost(test, what, from = 0) {
    const deadline = Date.now() + TURN_TIMEOUT_MS;
    let checked = from;
    for (;;) {
      for (; checked < this.posts.length; checked += 2) {
        if (test(posted(this.posts[checked + 1]))) return checked;
      }
      if (this.problems.some((problem) => problem.startsWith("error"))) {
        throw new Error(`Tether failed waiting for ${what}:\n${this.problems.join("\n")}`);
      }
      if (Date.now() > deadline) throw new Error(`Tether: timed out waiting for ${what}:\n${this.problems.join("\n")}`);
      await sleep(20);
    }
  }

  /** One turn: the prompt for `size` chunks at `rate`; returns the per-chunk latencies and the
   * host's CPU time. */
  async burst(size, rate) {
    const from = this.posts.length;
    const stampedBefore = stampedRuns(this.stampsFile).length;
    this.reads = [];
    engineTimes.clear();
    const tetherdCpu = processCpuMs(this.tetherdPid);
    const cpu = process.cpuUsage();
    this.host.webviewMessage({ type: "prompt", text: promptFor(size, rate), attachments: [] });
    await this.waitForPost(
      (message) => message.thread?.some((patch) => patch.op === "turn" && patch.state.type !== "running"),
      `the end of a burst of ${size}`,
      from,
    );
    const hostCpuMs = cpuMs(process.cpuUsage(cpu));
    const tetherdCpuMs = processCpuMs(this.tetherdPid) - tetherdCpu;
    const arrivals = [];
    for (let index = from; index < this.posts.length; index += 2) {
      const message = posted(this.posts[index + 1]);
      for (const patch of message.thread ?? []) {
        if (patch.op === "appendChunk" && patch.kind === "text") noteChunks(patch.text, this.posts[index], arrivals);
        if (patch.op === "push" && patch.entry.type === "agent") {
          for (const chunk of patch.entry.chunks) noteChunks(chunk.text, this.posts[index], arrivals);
        }
      }
    }
    const stamps = await waitForStamps(this.stampsFile, stampedBefore, size);
    const ended = posted(this.posts.at(-1));
    const turn = ended.thread?.find((patch) => patch.op === "turn");
    if (turn?.state.type !== "ended") throw new Error(`Tether: the turn did not end well: ${JSON.stringify(turn)}`);
    return { latencies: latencies("Tether", arrivals, stamps), hostCpuMs, tetherdCpuMs, stamps, arrivals };
  }

  async stop() {
    this.sidecar?.dispose();
    this.host?.dispose();
    if (this.tetherdPid) {
      try {
        process.kill(this.tetherdPid, "SIGTERM");
      } catch {
        // Gone already.
      }
    }
  }
}

/** User plus system CPU time of process `pid` so far, from /proc (10 ms resolution). */
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

// ----- The anchor: @agentclientprotocol/sdk's ClientSideConnection on the agent's stdio -----

class SdkSide {
  name = "@agentclientprotocol/sdk ClientSideConnection";

  static async start() {
    const side = new SdkSide();
    side.stampsFile = join(workDir, "sdk-stamps.jsonl");
    side.agent = spawn(process.execPath, [relayPath, side.stampsFile, "0", "--", testAgentPath, "--scenario", scenarioPath], {
      cwd: workspace,
      stdio: ["pipe", "pipe", "inherit"],
    });
    /** The thread, as a straightforward client keeps it. */
    side.thread = [];
    side.arrivals = undefined;
    const stream = ndJsonStream(Writable.toWeb(side.agent.stdin), Readable.toWeb(side.agent.stdout));
    side.connection = new ClientSideConnection(
      () => ({
        sessionUpdate: async ({ update }) => {
          if (update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return;
          let last = side.thread.at(-1);
          if (last?.role !== "agent") {
            last = { role: "agent", text: "" };
            side.thread.push(last);
          }
          last.text += update.content.text;
          side.received?.push(now(), update.content.text);
        },
        requestPermission: async () => ({ outcome: { outcome: "cancelled" } }),
      }),
      stream,
    );
    await side.connection.initialize({ protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    side.sessionId = (await side.connection.newSession({ cwd: workspace, mcpServers: [] })).sessionId;
    return side;
  }

  async burst(size, rate) {
    this.received = [];
    const stampedBefore = stampedRuns(this.stampsFile).length;
    const text = promptFor(size, rate);
    const cpu = process.cpuUsage();
    this.thread.push({ role: "user", text });
    const answer = await this.connection.prompt({ sessionId: this.sessionId, prompt: [{ type: "text", text }] });
    const hostCpuMs = cpuMs(process.cpuUsage(cpu));
    if (answer.stopReason !== "end_turn") throw new Error(`SDK: the turn ended with ${answer.stopReason}`);
    const arrivals = [];
    for (let index = 0; index < this.received.length; index += 2) {
      noteChunks(this.received[index + 1], this.received[index], arrivals);
    }
    const stamps = await waitForStamps(this.stampsFile, stampedBefore, size);
    return { latencies: latencies("SDK", arrivals, stamps), hostCpuMs, stamps, arrivals };
  }

  async stop() {
    this.agent.stdin.end();
    this.agent.kill();
  }
}

// ----- Where a burst's time goes (--stages) -----

/** The stages of one Tether burst: the agent's writes, tetherd's log, the host's socket reads,
 * the engine's calls and the posts. */
async function stages(tether, size, rate) {
  const result = await tether.burst(size, rate);
  const { stamps, arrivals, latencies: added } = result;
  const last = stamps.length - 1;
  const firstWrite = stamps[0];
  const lastWrite = stamps[last];
  const readOf = new Map();
  for (const [at, numbers] of tether.reads) for (const n of numbers) readOf.set(n, at);
  const logged = loggedTimes(size);
  const lastRead = readOf.get(size);
  const lastPost = arrivals.at(-1);
  const readDelays = stamps.map((stamp, index) => (readOf.get(index + 1) ?? NaN) - stamp);
  const postDelays = stamps.map((_, index) => arrivals[2 * index + 1] - (readOf.get(index + 1) ?? NaN));
  const engine = [...engineTimes].map(([name, { calls, ms }]) => `${name} ${ms.toFixed(1)} ms in ${calls} calls`).join(", ");
  const reads = tether.reads.length;
  const posts = new Set(arrivals.filter((_, index) => index % 2 === 1)).size;
  const ms = (value) => `${value.toFixed(1)} ms`;
  console.log(`\n${size} chunks ${rate > 0 ? `at ${rate}/s` : "as fast as the agent writes"}:`);
  console.log(`  agent: wrote them in ${ms(lastWrite - firstWrite)}`);
  if (logged) {
    console.log(`  tetherd's log: last chunk logged ${ms(logged.last - lastWrite)} after its write (log times are whole ms)`);
  }
  console.log(
    `  agent write → socket read in the host: p50 ${ms(quantile(readDelays, 0.5))}, p99 ${ms(quantile(readDelays, 0.99))}, ` +
      `last chunk ${ms(lastRead - lastWrite)} (${reads} reads)`,
  );
  console.log(
    `  socket read → post out of the host: p50 ${ms(quantile(postDelays, 0.5))}, p99 ${ms(quantile(postDelays, 0.99))}, ` +
      `last chunk ${ms(lastPost - lastRead)} (${posts} posts)`,
  );
  console.log(
    `  agent write → post: p50 ${ms(quantile(added, 0.5))}, p99 ${ms(quantile(added, 0.99))}, last chunk ${ms(added[last])}`,
  );
  console.log(`  host CPU ${ms(result.hostCpuMs)} (engine: ${engine}); tetherd CPU ${ms(result.tetherdCpuMs)}`);
}

/** When tetherd logged the chunks of the last burst of `size` (the session log's whole-ms times). */
function loggedTimes(size) {
  const sessions = join(workspace, ".tether", "sessions");
  if (!existsSync(sessions)) return undefined;
  const newest = readdirSync(sessions)
    .map((name) => join(sessions, name, "events.jsonl"))
    .filter((file) => existsSync(file))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) return undefined;
  const lines = readFileSync(newest, "utf8").trim().split("\n");
  // The agent's messages are embedded in the log's lines as they are, not as strings.
  const mark = `"text":"${chunkText(size)}`;
  for (let index = lines.length - 1; index >= 0; index--) {
    if (lines[index].includes(mark)) {
      const time = /"time":"([^"]+)"/.exec(lines[index])?.[1];
      return time ? { last: Date.parse(time) } : undefined;
    }
  }
  return undefined;
}

// ----- The run -----

const sides = [];
try {
  const tether = await TetherSide.start();
  sides.push(tether);
  if (showStages) {
    await tether.burst(WARMUP_CHUNKS, 0);
    for (const [size, rate] of [[5_000, 0], [20_000, 0], [5_000, RATE], [20_000, RATE]]) {
      await stages(tether, size, rate);
    }
  } else {
    const sdk = await SdkSide.start();
    sides.push(sdk);
    const results = new Map(sides.map((side) => [side, { p50: [], p99: [], last: [], cpu: [] }]));
    for (const side of sides) await side.burst(WARMUP_CHUNKS, 0);
    for (let run = 0; run < RUNS; run++) {
      for (const side of sides) {
        const { latencies: added, hostCpuMs } = await side.burst(CHUNKS, RATE);
        const figures = results.get(side);
        figures.p50.push(quantile(added, 0.5));
        figures.p99.push(quantile(added, 0.99));
        figures.last.push(added.at(-1));
        figures.cpu.push((hostCpuMs * 1000) / CHUNKS);
        console.error(
          `run ${run + 1}, ${side.name}: p50 ${quantile(added, 0.5).toFixed(2)} ms, p99 ${quantile(added, 0.99).toFixed(2)} ms, ` +
            `last ${added.at(-1).toFixed(2)} ms, CPU ${((hostCpuMs * 1000) / CHUNKS).toFixed(1)} ms per 1,000 chunks`,
        );
      }
    }
    const ours = results.get(tether);
    const theirs = results.get(sdk);
    const line = (what, unit, mine, anchor) => {
      const a = summary(mine);
      const b = summary(anchor);
      console.log(
        `${what}: Tether ${a.median.toFixed(2)} ${unit} (${a.min.toFixed(2)}–${a.max.toFixed(2)}), ` +
          `SDK ${b.median.toFixed(2)} ${unit} (${b.min.toFixed(2)}–${b.max.toFixed(2)}), ratio ${(a.median / b.median).toFixed(2)}×`,
      );
      return { a, b };
    };
    console.log(`\nStreaming: ${CHUNKS} chunks at ${RATE}/s, agent stdout → post out of the host (SDK: → state updated); medians of ${RUNS} runs (min–max)`);
    const p50 = line("added latency p50", "ms", ours.p50, theirs.p50);
    const p99 = line("added latency p99", "ms", ours.p99, theirs.p99);
    const last = line("last chunk", "ms", ours.last, theirs.last);
    const cpu = line("host CPU per 1,000 chunks", "ms", ours.cpu, theirs.cpu);
    const anchor = (stats) => ({ name: sdk.name, ...stats });
    const figures = [
      { figure: "added latency p50", unit: "ms", better: "lower", tether: p50.a, anchor: anchor(p50.b) },
      { figure: "added latency p99", unit: "ms", better: "lower", tether: p99.a, anchor: anchor(p99.b) },
      { figure: "last chunk", unit: "ms", better: "lower", tether: last.a, anchor: anchor(last.b), target: "≤ 100 ms" },
      { figure: "host CPU per 1,000 chunks", unit: "ms", better: "lower", tether: cpu.a, anchor: anchor(cpu.b) },
    ];
    const resultsDir = process.env.TETHER_BENCH_RESULTS;
    if (resultsDir) {
      mkdirSync(resultsDir, { recursive: true });
      const title = `Streaming: ${CHUNKS.toLocaleString("en")} chunks at ${RATE.toLocaleString("en")}/s, agent stdout → webview patch out of the host`;
      writeFileSync(join(resultsDir, "streaming.json"), `${JSON.stringify({ benchmark: "streaming", title, figures }, null, 2)}\n`);
    }
  }
} finally {
  for (const side of sides) await side.stop();
  await sleep(200);
  if (process.env.TETHER_BENCH_KEEP === "1") console.error(`kept ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
}
