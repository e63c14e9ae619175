// The agent of the streaming benchmarks, as tetherd (or a TypeScript client) sees it: the scripted
// test agent behind a relay that stamps every streamed chunk with the wall-clock time it was
// written, and can pace the stream to a given rate. Used as
// `node streaming-relay.mjs <stamps file> <lines per second, 0 for as fast as possible> -- <agent> [args...]`.
// A prompt whose text says `paced at N/s` sets the rate for its turn (and those after it); one
// that says `unpaced` lifts it.
//
// Why a relay: the benchmarks need the time each chunk left the agent, and a rate the test agent
// cannot produce (its pauses are whole milliseconds, so 2,000 chunks a second is out of reach).
// The relay passes the client's lines to the agent untouched and writes the agent's lines on,
// one write per line (as the agent does, flushing each), either as soon as it has them or paced
// so that the n-th line of a run goes out n / rate seconds after the run's first. What its
// stdout reader sees is an agent that writes exactly then: the stamp is taken right after the
// write returns (a pipe write is synchronous in Node on Linux, blocking while the pipe is full),
// so a reader that falls behind makes the stamps later, as it would make a real agent's writes.
//
// The benchmarks' scenarios number their chunks: every chunk's text starts with `#` and six
// digits, from #000001 in each burst. After each run (the agent quiet for IDLE_MS), the relay
// appends one JSON line to the stamps file: `{"times": [t1, t2, ...]}`, `times[n - 1]` the write
// time of chunk n (`performance.timeOrigin + performance.now()`, the clock every process on the
// machine shares, Chromium's pages too).

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const [stampsFile, rateText, separator, command, ...args] = process.argv.slice(2);
let rate = Number(rateText);
if (!stampsFile || !Number.isFinite(rate) || rate < 0 || separator !== "--" || !command) {
  console.error("usage: node streaming-relay.mjs <stamps file> <chunks per second, 0 for unpaced> -- <agent> [args...]");
  process.exit(2);
}

/** How long the agent must be quiet for a run to be over and its stamps written. */
const IDLE_MS = 300;
/** What precedes a numbered chunk's number in the agent's JSON line. */
const CHUNK_MARK = '"text":"#';
const now = () => performance.timeOrigin + performance.now();

const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
agent.on("exit", (code, signal) => {
  flushStamps();
  process.exit(code ?? (signal ? 1 : 0));
});
process.stdin.setEncoding("utf8");
let clientPartial = "";
process.stdin.on("data", (text) => {
  // A prompt may change the rate; it is set before the agent sees the prompt, so its whole turn
  // goes at the new rate.
  const lines = (clientPartial + text).split("\n");
  clientPartial = lines.pop();
  for (const line of lines) {
    if (!line.includes('"session/prompt"')) continue;
    const paced = /paced at (\d+)\/s/.exec(line);
    if (paced) rate = Number(paced[1]);
    else if (line.includes("unpaced")) rate = 0;
  }
  agent.stdin.write(text);
});
// The client closing our stdin closes the agent's, which then exits.
process.stdin.on("end", () => agent.stdin.end());
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  process.on(signal, () => agent.kill(signal));
}

/** Lines read from the agent and not written yet. */
const queue = [];
let queueStart = 0;
let partial = "";
/** The write times of the current run's chunks, by number. */
let times = [];
let idleTimer;
/** When the current paced run started, and how many lines of it were written. */
let runStart;
let runWritten = 0;
let pacer;

agent.stdout.setEncoding("utf8");
agent.stdout.on("data", (text) => {
  let start = 0;
  let newline;
  while ((newline = text.indexOf("\n", start)) !== -1) {
    queue.push(partial + text.slice(start, newline + 1));
    partial = "";
    start = newline + 1;
  }
  partial += text.slice(start);
  if (rate === 0 && pacer === undefined) {
    writeDue(Infinity);
  } else {
    runStart ??= performance.now();
    pacer ??= setTimeout(pace, 0);
  }
});

function pace() {
  pacer = undefined;
  const due = Math.floor(((performance.now() - runStart) * rate) / 1000) + 1 - runWritten;
  writeDue(due);
  if (queueStart < queue.length) {
    // Node's timers fire no sooner than a millisecond: each tick writes what fell due since the
    // last one, so the rate holds on average (two lines a tick at 2,000 a second).
    pacer = setTimeout(pace, 0);
  } else {
    runStart = undefined;
    runWritten = 0;
  }
}

function writeDue(count) {
  for (let written = 0; written < count && queueStart < queue.length; written++) {
    const line = queue[queueStart];
    queue[queueStart] = undefined;
    queueStart += 1;
    process.stdout.write(line);
    const at = now();
    runWritten += 1;
    const mark = line.indexOf(CHUNK_MARK);
    if (mark !== -1) {
      const number = Number(line.slice(mark + CHUNK_MARK.length, mark + CHUNK_MARK.length + 6));
      if (number === 1) times = [];
      times[number - 1] = at;
    }
  }
  if (queueStart === queue.length) {
    queue.length = 0;
    queueStart = 0;
  }
  clearTimeout(idleTimer);
  idleTimer = setTimeout(flushStamps, IDLE_MS);
}

function flushStamps() {
  if (times.length === 0) return;
  appendFileSync(stampsFile, `${JSON.stringify({ times })}\n`);
  times = [];
}
