// Benchmark (not a test): an agent's command running in a PTY owned by tetherd and read by the
// host over tetherd's socket, against the same command in a PTY that Node opens itself with
// node-pty (what VS Code's own terminals use). `cargo xtask bench terminal` builds tetherd in
// release and runs this under Node 24 as
// `node bench/terminal.bench.mjs <path to tetherd> <path to node-pty>`, with the node-pty that
// code-server ships (built for that Node).
//
// Two things are measured, because they are what a person watching a command notices:
// - Throughput: `seq 1 5000000` (about 44 MB through the PTY) from spawning it to its exit with
//   all its output received. On the tetherd side that is the host's whole cost: the
//   `terminal/create` request, then every `terminal/data` notification read from the socket,
//   split into lines and JSON.parse'd, until `terminal/exited`; on the node-pty side it is
//   `pty.spawn` until `onExit` (which node-pty fires only once the PTY's last output was read).
//   Figures are medians of timed runs after a warm-up, the two sides taking turns so that a busy
//   machine slows both alike.
// - Latency: a Node writer in the PTY prints a line with a timestamp every 10 ms; the
//   reader subtracts the stamp from the same clock when the line arrives. Both processes read the
//   same clock: the system's monotonic clock (`process.hrtime`, CLOCK_MONOTONIC on Linux, one for
//   every process). Each process's `performance.timeOrigin` is read once from the wall clock
//   when it starts, so two processes' `timeOrigin + now()` can disagree by a fraction of a
//   millisecond, the size of what is measured.
//
//   Each latency run gives its median and p95; the figures are the medians of those over the timed
//   runs, after a warm-up, the two sides taking turns.
//
// Every run's output is checked before its figure counts (all five million lines, in order; every
// stamped line, in order), so a fast but incomplete run cannot pass. The script prints its target
// (tetherd at least as fast as node-pty: throughput, and a line's latency at its median and p95)
// as PASS or MISS for information and exits 0 whatever the timings are; it fails only when
// something could not run or was wrong. With TETHER_BENCH_RESULTS set it writes `terminal.json`
// there (the figures with their spread, for `cargo xtask bench`'s report).

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const [tetherdPath, nodePtyPath, ...extra] = process.argv.slice(2);
if (!tetherdPath || !nodePtyPath || extra.length > 0) {
  console.error("usage: node bench/terminal.bench.mjs <path to tetherd> <path to node-pty>");
  process.exit(2);
}
if (!existsSync(tetherdPath)) {
  console.error(`tetherd not found at ${tetherdPath}: build it with \`cargo build --release -p tetherd\``);
  process.exit(2);
}
// node-pty is CommonJS; it loads its native module from its own folder.
const pty = createRequire(import.meta.url)(nodePtyPath);

/** `SIDECAR_PROTOCOL_VERSION` in crates/tether-core/src/sidecar.rs; tetherd refuses any other. */
const PROTOCOL_VERSION = 1;
/** `DEFAULT_TERMINAL_OUTPUT_LIMIT` in sidecar.rs: what tetherd retains when an agent names none. */
const OUTPUT_BYTE_LIMIT = 1024 * 1024;
/** tetherd's default PTY size, given to node-pty too so both programs see the same terminal. */
const COLS = 120;
const ROWS = 30;

const SEQ_LINES = 5_000_000;
const THROUGHPUT_WARMUPS = 1;
const THROUGHPUT_RUNS = 5;

const STAMPED_LINES = 200;
const STAMP_INTERVAL_MS = 10;
const LATENCY_WARMUPS = 1;
const LATENCY_RUNS = 5;
/** Prints `<n> <monotonic clock in ms>` every 10 ms, then exits. Stdout is the PTY, which Node writes
 * synchronously, so a stamp is taken right before its line goes out. */
const STAMP_WRITER = `
let n = 0;
const timer = setInterval(() => {
  n += 1;
  process.stdout.write(n + " " + (Number(process.hrtime.bigint()) / 1e6).toFixed(3) + "\\n");
  if (n === ${STAMPED_LINES}) clearInterval(timer);
}, ${STAMP_INTERVAL_MS});
`;

/** How long tetherd may take to say it listens, and to exit after SIGTERM. */
const TETHERD_START_MS = 10_000;
const TETHERD_EXIT_MS = 10_000;

const workDir = mkdtempSync(join(tmpdir(), "tether-terminal-bench-"));
/** The monotonic clock the stamp writer stamps its lines with, in ms. */
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** A tetherd process and one host connection to it, speaking the sidecar wire (NDJSON JSON-RPC),
 * with one agent to own the terminals. One command runs at a time. */
class Tetherd {
  static async start() {
    const token = randomBytes(16).toString("hex");
    const child = spawn(tetherdPath, ["serve", "--socket", join(workDir, "sock", "tetherd.sock")], {
      env: { ...process.env, TETHER_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tetherd = new Tetherd(child);
    try {
      const socketPath = await tetherd.listening();
      await tetherd.connect(socketPath);
      await tetherd.request("hello", { token, protocolVersion: PROTOCOL_VERSION, client: "terminal benchmark" });
      // Any long-lived process can own the terminals; `sleep` prints nothing, so the socket
      // carries only what the commands print.
      const spawned = await tetherd.request("agent/spawn", {
        name: "benchmark owner",
        command: "sleep",
        args: ["3600"],
        cwd: workDir,
      });
      tetherd.agentId = spawned.agentId;
      return tetherd;
    } catch (error) {
      // Already failing: stopping tetherd is only cleanup, and its own failure would hide this one.
      await tetherd.stop().catch((stopError) => console.error(stopError.message));
      throw error;
    }
  }

  constructor(child) {
    this.child = child;
    this.exit = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    // tetherd logs to stderr, in colour even to a pipe; the tail is kept, as plain text, to
    // explain a failure.
    this.stderrTail = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      this.stderrTail = (this.stderrTail + chunk.replace(/\x1b\[[0-9;]*m/g, "")).slice(-4000);
    });
    this.nextId = 1;
    this.pending = new Map();
    this.partial = "";
    /** The command being run: where its `terminal/*` notifications go. */
    this.sink = undefined;
    /** Set once tetherd or its connection failed; every waiting request and run gets it. */
    this.brokenBy = undefined;
    this.stopping = false;
    this.exit.then(({ code, signal }) => {
      if (!this.stopping) this.broken(this.failure(`exited (${code ?? signal}) while the benchmark was running`));
    });
  }

  /** Fails whatever is waiting on tetherd, with the first thing that went wrong. */
  broken(error) {
    this.brokenBy ??= error;
    for (const { reject } of this.pending.values()) reject(this.brokenBy);
    this.pending.clear();
    this.sink?.failed(this.brokenBy);
  }

  /** Resolves with the socket path from tetherd's one stdout line, `{"listening":...}`. */
  listening() {
    return new Promise((resolve, reject) => {
      let stdout = "";
      const timer = setTimeout(() => reject(this.failure("did not say it was listening")), TETHERD_START_MS);
      this.child.stdout.setEncoding("utf8");
      this.child.stdout.on("data", (chunk) => {
        stdout += chunk;
        const newline = stdout.indexOf("\n");
        if (newline === -1) return;
        clearTimeout(timer);
        try {
          resolve(JSON.parse(stdout.slice(0, newline)).listening);
        } catch {
          reject(this.failure(`printed ${JSON.stringify(stdout.slice(0, newline))} instead of {"listening":...}`));
        }
      });
      this.exit.then(({ code, signal }) => reject(this.failure(`exited (${code ?? signal}) before listening`)));
    });
  }

  connect(socketPath) {
    return new Promise((resolve, reject) => {
      this.socket = net.createConnection(socketPath);
      this.socket.setEncoding("utf8");
      this.socket.on("connect", resolve);
      this.socket.on("error", reject);
      this.socket.on("data", (chunk) => {
        try {
          this.receive(chunk);
        } catch (error) {
          this.broken(error);
        }
      });
      this.socket.on("close", () => {
        if (!this.stopping) this.broken(this.failure("closed the connection"));
      });
    });
  }

  /** Splits the socket's text into lines and handles each as one JSON-RPC message. */
  receive(chunk) {
    let start = 0;
    let newline;
    while ((newline = chunk.indexOf("\n", start)) !== -1) {
      const line = this.partial + chunk.slice(start, newline);
      this.partial = "";
      start = newline + 1;
      this.handle(JSON.parse(line));
    }
    this.partial += chunk.slice(start);
  }

  handle(message) {
    if (message.method === "terminal/data") {
      this.sinkFor(message.params.terminalId).data(message.params.data);
    } else if (message.method === "terminal/exited") {
      this.sinkFor(message.params.terminalId).exited(message.params);
    } else if (message.id !== undefined && this.pending.has(message.id)) {
      const { resolve, reject, method } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(new Error(`tetherd: ${method} failed: ${JSON.stringify(message.error)}`));
      else resolve(message.result);
    }
    // Other notifications (the owning agent's exit at the end) are not part of the benchmark.
  }

  /** The running command's sink. Its `terminal/data` may come before the answer to
   * `terminal/create`, so the sink takes the first terminal id it sees and insists on it. */
  sinkFor(terminalId) {
    if (!this.sink) throw new Error(`tetherd sent output for terminal ${terminalId} while no command was running`);
    this.sink.terminalId ??= terminalId;
    if (this.sink.terminalId !== terminalId) {
      throw new Error(`tetherd sent output for terminal ${terminalId} while terminal ${this.sink.terminalId} was running`);
    }
    return this.sink;
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.brokenBy) return reject(this.brokenBy);
      this.pending.set(id, { resolve, reject, method });
      this.socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  /** Runs a command in a new terminal; `onData(text)` gets its output as it arrives. Resolves
   * once `terminal/exited` has come (every `terminal/data` came before it) with the time from the
   * request to then, and releases the terminal afterwards (not timed). */
  async run(command, args, onData) {
    let exited;
    let failed;
    const done = new Promise((resolve, reject) => {
      exited = resolve;
      failed = reject;
    });
    // The failure is seen through `await done` below; this only keeps Node from calling it
    // unhandled when `terminal/create` fails first and `done` is never awaited.
    done.catch(() => {});
    this.sink = { terminalId: undefined, data: onData, exited, failed };
    const started = performance.now();
    const created = await this.request("terminal/create", {
      agentId: this.agentId,
      command,
      args,
      cwd: workDir,
      outputByteLimit: OUTPUT_BYTE_LIMIT,
    });
    const { status } = await done;
    const ms = performance.now() - started;
    if (this.sink.terminalId !== created.terminalId) {
      throw new Error(`tetherd created terminal ${created.terminalId} but sent output for ${this.sink.terminalId}`);
    }
    this.sink = undefined;
    await this.request("terminal/release", { terminalId: created.terminalId });
    return { ms, exitCode: status.exitCode, signal: status.signal };
  }

  /** tetherd's memory from /proc: the peak (VmHWM) and current (VmRSS) resident set, in bytes. */
  memory() {
    const status = readFileSync(`/proc/${this.child.pid}/status`, "utf8");
    const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
    return { peak: kib("VmHWM"), current: kib("VmRSS") };
  }

  /** SIGTERM, as the host's shutdown does; fails unless tetherd exits by itself. */
  async stop() {
    this.stopping = true;
    this.socket?.destroy();
    this.child.kill("SIGTERM");
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(resolve, TETHERD_EXIT_MS, undefined);
    });
    const exit = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (exit === undefined) {
      this.child.kill("SIGKILL");
      throw this.failure(`did not exit within ${TETHERD_EXIT_MS / 1000} s of SIGTERM (killed)`);
    }
    return exit;
  }

  failure(what) {
    return new Error(`tetherd ${what}; its last log lines:\n${this.stderrTail}`);
  }
}

/** Runs a command in a node-pty PTY; resolves once node-pty reports the exit (after the PTY's
 * last output) with the time from the spawn to then. */
function runNodePty(command, args, onData) {
  return new Promise((resolve) => {
    const started = performance.now();
    const terminal = pty.spawn(command, args, { name: "xterm-256color", cols: COLS, rows: ROWS, cwd: workDir });
    terminal.onData(onData);
    terminal.onExit(({ exitCode, signal }) => {
      resolve({ ms: performance.now() - started, exitCode, signal: signal || null });
    });
  });
}

/** Checks that `chunks` are exactly `seq 1 5000000` through a PTY (`1\r\n2\r\n...5000000\r\n`),
 * reading it character by character so no copy of 44 MB is made. */
function checkSeq(side, chunks) {
  let expected = 1;
  let value = 0;
  let digits = 0;
  let sawReturn = false;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code >= 48 && code <= 57 && !sawReturn) {
        value = value * 10 + (code - 48);
        digits += 1;
      } else if (code === 13 && digits > 0 && !sawReturn) {
        sawReturn = true;
      } else if (code === 10 && sawReturn) {
        if (value !== expected) throw new Error(`${side}: line ${expected} of seq's output reads ${value}`);
        expected += 1;
        value = 0;
        digits = 0;
        sawReturn = false;
      } else {
        throw new Error(`${side}: unexpected character ${JSON.stringify(chunk[i])} in line ${expected} of seq's output`);
      }
    }
  }
  const lines = expected - 1;
  if (lines !== SEQ_LINES || digits > 0 || sawReturn) {
    throw new Error(`${side}: seq's output ends after ${lines} complete lines, not ${SEQ_LINES}`);
  }
}

/** One throughput run: the command, its checked output, and the figure. */
async function throughput(side, runner) {
  const chunks = [];
  let bytes = 0;
  // Collecting the strings is all the reader does while timed; checking comes after.
  const { ms, exitCode, signal } = await runner("seq", ["1", String(SEQ_LINES)], (data) => {
    chunks.push(data);
    bytes += data.length;
  });
  if (exitCode !== 0) throw new Error(`${side}: seq exited with ${exitCode ?? signal}`);
  checkSeq(side, chunks);
  // The output is ASCII, so its characters are its bytes.
  return { ms, bytes };
}

/** One latency run: how long after its stamp each line arrived, in ms. The reader only notes
 * when each piece of output arrived; the lines are parsed and checked after the run. */
async function latency(side, runner) {
  const arrivals = [];
  const { exitCode, signal } = await runner(process.execPath, ["-e", STAMP_WRITER], (data) => {
    arrivals.push({ at: now(), data });
  });
  if (exitCode !== 0) throw new Error(`${side}: the stamp writer exited with ${exitCode ?? signal}`);
  const delays = [];
  let partial = "";
  for (const { at, data } of arrivals) {
    const lines = (partial + data).split("\n");
    partial = lines.pop();
    for (const line of lines) {
      const [n, stamp] = line.trimEnd().split(" ");
      if (Number(n) !== delays.length + 1 || !Number.isFinite(Number(stamp))) {
        throw new Error(`${side}: expected stamped line ${delays.length + 1}, got ${JSON.stringify(line)}`);
      }
      // A line split across two pieces arrived with its second piece.
      delays.push(at - Number(stamp));
    }
  }
  if (delays.length !== STAMPED_LINES || partial !== "") {
    throw new Error(`${side}: ${delays.length} of ${STAMPED_LINES} stamped lines arrived`);
  }
  return delays;
}

const median = (values) => quantile(values, 0.5);

/** A figure over runs, as the results file has it. */
const spread = (values) => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
  runs: values.length,
});

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const mb = (bytes) => (bytes / 1e6).toFixed(1);
const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);
const ms = (value) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
const pad = (text, width) => String(text).padEnd(width);

let tetherd;
let stopped = false;
try {
  tetherd = await Tetherd.start();
  const sides = [
    ["tetherd", (command, args, onData) => tetherd.run(command, args, onData)],
    ["node-pty", runNodePty],
  ];
  const nodePtyVersion = createRequire(import.meta.url)(join(nodePtyPath, "package.json")).version;
  console.log(`tetherd (release, over its socket) vs node-pty ${nodePtyVersion} in Node ${process.versions.node}`);
  const atStart = tetherd.memory();

  const runs = { tetherd: [], "node-pty": [] };
  let bytes;
  for (let round = 0; round < THROUGHPUT_WARMUPS + THROUGHPUT_RUNS; round++) {
    for (const [side, runner] of sides) {
      const run = await throughput(side, runner);
      bytes = run.bytes;
      if (round >= THROUGHPUT_WARMUPS) runs[side].push(run.ms);
    }
  }
  // VmHWM is the peak since tetherd started, and it started idle: so this is the throughput runs' peak.
  const afterThroughput = tetherd.memory();

  // Each latency run's median and p95, per side.
  const latencies = { tetherd: { p50: [], p95: [] }, "node-pty": { p50: [], p95: [] } };
  for (let round = 0; round < LATENCY_WARMUPS + LATENCY_RUNS; round++) {
    for (const [side, runner] of sides) {
      const delays = await latency(side, runner);
      if (round < LATENCY_WARMUPS) continue;
      latencies[side].p50.push(quantile(delays, 0.5));
      latencies[side].p95.push(quantile(delays, 0.95));
    }
  }

  // Throughput per run in MB/s, so that its median, min and max are figures of the same kind.
  const rates = (side) => runs[side].map((runMs) => bytes / 1e6 / (runMs / 1000));
  const figures = [
    {
      figure: `throughput, seq 1 ${SEQ_LINES}`,
      unit: "MB/s",
      better: "higher",
      tether: spread(rates("tetherd")),
      anchor: { name: `node-pty ${nodePtyVersion}`, ...spread(rates("node-pty")) },
      target: "≥ anchor",
    },
    ...[
      ["p50", "median"],
      ["p95", "p95"],
    ].map(([key, name]) => ({
      figure: `line latency ${name}`,
      unit: "ms",
      better: "lower",
      tether: spread(latencies.tetherd[key]),
      anchor: { name: `node-pty ${nodePtyVersion}`, ...spread(latencies["node-pty"][key]) },
      target: "≤ anchor",
    })),
  ];

  const range = (side, format) => `${format(side.median)} [${format(side.min)}–${format(side.max)}]`;
  const table = figures.map(({ figure, unit, better, tether, anchor }) => {
    const format = unit === "ms" ? ms : (value) => `${value.toFixed(1)} MB/s`;
    const ratio = tether.median / anchor.median;
    const met = better === "higher" ? ratio >= 1 : ratio <= 1;
    return [figure, range(tether, format), range(anchor, format), `${ratio.toFixed(2)}×`, met ? "PASS" : "MISS"];
  });
  const header = ["case", "tetherd", "node-pty", "ratio", "at least node-pty"];
  const widths = header.map((title, i) => Math.max(title.length, ...table.map((row) => String(row[i]).length)));
  console.log();
  console.log(header.map((title, i) => pad(title, widths[i])).join("  ").trimEnd());
  for (const row of table) console.log(row.map((cell, i) => pad(cell, widths[i])).join("  ").trimEnd());

  const resultsDir = process.env.TETHER_BENCH_RESULTS;
  if (resultsDir) {
    mkdirSync(resultsDir, { recursive: true });
    const results = { benchmark: "terminal", title: "Terminal: a command's output through tetherd's PTY and socket", figures };
    writeFileSync(join(resultsDir, "terminal.json"), `${JSON.stringify(results, null, 2)}\n`);
  }

  const exit = await tetherd.stop();
  stopped = true;
  console.log(`
ratio = tetherd / node-pty (throughput: MB/s, higher is better; latency: ms, lower is better);
medians [min–max] over the timed runs.
Throughput: ${THROUGHPUT_RUNS} runs after ${THROUGHPUT_WARMUPS} warm-up, each from spawn to exit with all ${mb(bytes)} MB of output
read (tetherd: terminal/create until terminal/exited, every terminal/data parsed from the socket;
node-pty: spawn until onExit). Latency: ${LATENCY_RUNS} runs after ${LATENCY_WARMUPS} warm-up of ${STAMPED_LINES} lines, one every ${STAMP_INTERVAL_MS} ms,
each a line's timestamp in the writer to its arrival in this process; a run's median and p95.
Target (information only, the benchmark never fails on timing): tetherd at least as fast as node-pty.
tetherd's peak RSS during the throughput runs: ${mib(afterThroughput.peak)} MiB (VmHWM; ${mib(atStart.current)} MiB before them,
outputByteLimit ${mib(OUTPUT_BYTE_LIMIT)} MiB). tetherd exited on SIGTERM (${exit.code ?? exit.signal}).`);
} finally {
  if (tetherd && !stopped) {
    // Already failing: stopping tetherd is only cleanup, and its own failure would hide the first.
    await tetherd.stop().catch((error) => console.error(error.message));
  }
  rmSync(workDir, { recursive: true, force: true });
}
