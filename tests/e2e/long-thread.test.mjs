// End to end: a thread of 10,000 entries. The scripted test agent runs scenarios/long-thread.toml:
// a prompt with "short" gets a burst of 10 entries, one with "hundred" a burst of 100, one with
// "stream" a reply that grows for 12 s, and any other a burst of 10,000 (agent messages with a
// paragraph and a ten-line code block, alternating with completed reads, runs and edits with a
// diff), each burst sent as fast as the pipe takes it.
//
// In one VS Code, in order (a step that fails skips the rest):
// 1. a short thread, and a window reload of it: the anchor of the reload figures;
// 2. a burst of 100, then one of 10,000 entries: the last entry shows, fewer than 200 entries are
//    in the DOM;
// 3. jumping to the top shows the first entries, and back to the end the last;
// 4. a reply streaming at the end of the long thread stays in sight as it grows;
// 5. a reply of one long line stays in sight too, and only the pieces of it in sight are laid out;
// 6. an idle chat schedules no frame and no timer, and changes nothing, for 5 s;
// 7. the find bar finds a message near the top and brings it into sight, highlighted;
// 8. a window reload: the last entries show again, first from the screen the webview saved, the
//    DOM stays under 200 entries, and the renderer's JS heap is no bigger than before the reload.
//
// What is asserted is structure, never time. The figures (time from the agent's last write to
// the last entry in sight, the webview's long tasks, entries and nodes in the DOM, the CPU the
// extension host and the browser's renderers used for a burst, window reload to the last screen
// drawn and to the host's snapshot drawn, by the webview's own marks) are printed beside their
// anchor, measured in the same run.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";

import { orderedSteps, repoRoot, testAgent, withVSCode } from "./harness.mjs";

const TEST_TIMEOUT_MS = 20 * 60_000;
/** Waits for what a thread of 10,000 entries takes: its replay after a reload, on busy cores. */
const LONG_WAIT_MS = 240_000;
/** The goal: whatever the thread's length, fewer entries than this in the DOM. */
const MOST_ENTRIES_DRAWN = 200;

const scenario = path.join(repoRoot, "tests", "e2e", "scenarios", "long-thread.toml");
// `root` is the launch folder: the agent's record of what it wrote goes there, for the time of
// its last write.
const agentRecord = (root) => path.join(root, "agent-stdout.jsonl");
const settings = (root) => ({
  // A reloaded window must find tetherd, and its agent, still running.
  "tether.sidecarGraceSeconds": 120,
  "tether.agents": [
    { name: "Long", command: testAgent, args: ["--scenario", scenario, "--record-stdout", agentRecord(root)] },
  ],
  "tether.defaultAgent": "Long",
});

test("a thread of 10,000 entries: few in the DOM, the right ones in sight, idle when nothing changes", {
  timeout: TEST_TIMEOUT_MS,
}, async (t) => {
  await withVSCode({ name: "long-thread", settings }, async (vscode) => {
    let { chat } = await vscode.startChat();
    const step = orderedSteps(t, vscode);
    const figures = [];
    const figure = (line) => {
      figures.push(line);
      console.log(`long-thread: ${line}`);
    };
    const entries = () => chat.locator("main.thread > .entry");
    const entryAt = (index) => chat.locator(`main.thread > .entry[data-index="${index}"]`);
    /** The highest entry index in the DOM (-1 before the first prompt). */
    const lastIndex = async () =>
      (await entries().count()) === 0 ? -1 : Number(await entries().last().getAttribute("data-index"));
    const frame = async () => (await chat.locator("#app").elementHandle()).ownerFrame();
    /** Waits until entry `index` is drawn and at least partly inside the thread's visible part. */
    const inSight = async (index, timeout = 60_000) => {
      const webview = await frame();
      await waitInSight(webview, index, timeout).catch(async (error) => {
        // What the thread drew instead, for the failure's log.
        const drawn = await webview.evaluate(() =>
          [...document.querySelectorAll("main.thread > .entry")].map((entry) => `${entry.dataset.index}: ${entry.textContent.slice(0, 40)}`),
        );
        console.error(`entry ${index} never came into sight; drawn:\n  ${drawn.join("\n  ")}`);
        throw error;
      });
    };
    const waitInSight = async (webview, index, timeout) => {
      await webview.waitForFunction(
        (wanted) => {
          const thread = document.querySelector("main.thread");
          const entry = thread?.querySelector(`:scope > .entry[data-index="${wanted}"]`);
          if (!thread || !entry) return false;
          const box = thread.getBoundingClientRect();
          const at = entry.getBoundingClientRect();
          return at.bottom > box.top && at.top < box.bottom && at.height > 0;
        },
        index,
        { timeout, polling: 100 },
      );
    };
    const drawnCount = async () => (await frame()).evaluate(() => ({
      entries: document.querySelectorAll("main.thread > .entry").length,
      nodes: document.querySelector("main.thread").querySelectorAll("*").length,
      documentNodes: document.querySelectorAll("*").length,
    }));
    /**
     * Starts watching the webview for entry `index` coming into sight (a MutationObserver: no
     * polling in the page) and for long tasks; `results()` gives when it came (the page's
     * wall-clock time) and the long tasks seen.
     */
    const watch = async (index) => {
      const webview = await frame();
      await webview.evaluate((wanted) => {
        const state = { shownAt: null, lastMessageAt: null, longTasks: [] };
        window.__longThreadWatch = state;
        // When the host's last message came, apart from when the webview drew what it brought.
        state.onMessage = () => {
          if (state.shownAt === null) state.lastMessageAt = Date.now();
        };
        window.addEventListener("message", state.onMessage, true);
        const thread = document.querySelector("main.thread");
        const check = () => {
          if (state.shownAt !== null) return;
          const entry = thread.querySelector(`:scope > .entry[data-index="${wanted}"]`);
          if (!entry) return;
          const box = thread.getBoundingClientRect();
          const at = entry.getBoundingClientRect();
          if (at.bottom > box.top && at.top < box.bottom) {
            state.shownAt = Date.now();
            state.observer.disconnect();
          }
        };
        state.observer = new MutationObserver(check);
        state.observer.observe(thread, { childList: true, subtree: true, characterData: true });
        state.tasks = new PerformanceObserver((list) => {
          for (const task of list.getEntries()) {
            state.longTasks.push({ duration: task.duration, name: task.name });
          }
        });
        state.tasks.observe({ type: "longtask" });
      }, index);
      return {
        results: () =>
          webview.evaluate(() => {
            const state = window.__longThreadWatch;
            state.tasks.disconnect();
            window.removeEventListener("message", state.onMessage, true);
            return { shownAt: state.shownAt, lastMessageAt: state.lastMessageAt, longTasks: state.longTasks };
          }),
      };
    };
    const describeLongTasks = (tasks) => {
      const own = tasks.filter((task) => task.name === "self");
      const total = own.reduce((sum, task) => sum + task.duration, 0);
      const longest = own.reduce((most, task) => Math.max(most, task.duration), 0);
      return `${own.length} long tasks in the webview (${Math.round(total)} ms in all, longest ${Math.round(longest)} ms)` +
        `; ${tasks.length - own.length} more seen from the frame, not its own`;
    };
    /** Sends `words`, waits until the burst's last entry is in sight; returns the figures. */
    const burst = async (words, size) => {
      const prompt = (await lastIndex()) + 1;
      const last = prompt + size;
      const watcher = await watch(last);
      const cpuBefore = vscode.cpuTimes();
      await vscode.sendPrompt(words);
      // Not the prompt's entry: the burst may push it out of the window before a frame draws it.
      await inSight(last, LONG_WAIT_MS);
      const cpuAfter = vscode.cpuTimes();
      await chat.locator('.turn-state[data-state="ended"]').waitFor({ timeout: LONG_WAIT_MS });
      const lastWrite = fs.statSync(agentRecord(vscode.root)).mtimeMs;
      const { shownAt, lastMessageAt, longTasks } = await watcher.results();
      const drawn = await drawnCount();
      const cpu = {
        extensionHostMs: cpuAfter.extensionHostMs - cpuBefore.extensionHostMs,
        renderersMs: cpuAfter.renderersMs - cpuBefore.renderersMs,
      };
      return { last, shownAfterMs: shownAt - lastWrite, arrivedAfterMs: lastMessageAt - lastWrite, longTasks, drawn, cpu };
    };
    /** The CPU a burst took, from the prompt sent to its last entry in sight. */
    const describeCpu = (run) =>
      `CPU from the prompt to the last entry in sight: extension host ${Math.round(run.cpu.extensionHostMs)} ms, ` +
      `browser renderers ${Math.round(run.cpu.renderersMs)} ms`;
    /**
     * Reloads the window and waits for the host's snapshot holding entry `index` to be drawn.
     * Returns when the webview first drew the thread's last screen (the screen it saved itself,
     * else the host's snapshot; by its own marks, on the clock this process reads too), when it
     * drew the host's snapshot, how long until the test saw entry `index` in sight (which adds
     * opening the view through the command palette, and polling), and the webview's marks.
     */
    const reload = async (index) => {
      const started = Date.now();
      await vscode.reloadWindow();
      await vscode.openTetherView();
      chat = vscode.chatFrame();
      await inSight(index, LONG_WAIT_MS);
      const shownMs = Date.now() - started;
      const webview = await frame();
      await webview.waitForFunction(
        (wanted) => performance.getEntriesByName("tether-snapshot").some((mark) => mark.detail?.entries > wanted),
        index,
        { timeout: LONG_WAIT_MS },
      );
      const marks = await webview.evaluate((wanted) => {
        const at = (name) => performance.getEntriesByName(name).at(-1)?.startTime ?? null;
        const holding = (name) => performance.getEntriesByName(name).find((mark) => mark.detail?.entries > wanted);
        // The first snapshot of the thread (an earlier one says the session is being read), and
        // the first frame drawn after it.
        const snapshot = holding("tether-snapshot");
        const drawn = snapshot && performance.getEntriesByName("tether-snapshot-drawn").find((mark) => mark.startTime >= snapshot.startTime);
        const restored = holding("tether-restored");
        const restoredDrawn = holding("tether-restored-drawn");
        const absolute = (mark) => (mark ? performance.timeOrigin + mark.startTime : null);
        return {
          ready: at("tether-ready"),
          restored: restored?.startTime ?? null,
          restoredDrawn: restoredDrawn?.startTime ?? null,
          snapshot: snapshot?.startTime ?? null,
          drawn: drawn?.startTime ?? null,
          restoredDrawnAt: absolute(restoredDrawn),
          drawnAt: absolute(drawn),
        };
      }, index);
      assert.ok(marks.drawnAt !== null, "the webview marked the frame that drew the host's snapshot");
      const hostMs = marks.drawnAt - started;
      const restoredMs = marks.restoredDrawnAt === null ? null : marks.restoredDrawnAt - started;
      return { lastScreenMs: Math.min(hostMs, restoredMs ?? Infinity), restoredMs, hostMs, shownMs, marks };
    };
    const marksLine = ({ ready, restored, restoredDrawn, snapshot, drawn }) => {
      if (ready === null || snapshot === null || drawn === null) return "marks missing";
      const saved =
        restoredDrawn === null
          ? restored === null
            ? "no saved screen"
            : "its saved screen drawn with the host's"
          : `its saved screen drawn ${Math.round(restoredDrawn - ready)} ms after`;
      return (
        `webview asked for its state → ${saved}, the host's snapshot arrived ${Math.round(snapshot - ready)} ms, ` +
        `→ drawn ${Math.round(drawn - snapshot)} ms`
      );
    };
    const reloadLine = (entries, run) =>
      `reload of a ${entries}-entry thread → its last screen drawn: ${Math.round(run.lastScreenMs)} ms` +
      (run.restoredMs === null ? " (the host's snapshot)" : ` (the webview's saved screen; the host's after ${Math.round(run.hostMs)} ms)`) +
      ` (in sight for the test after ${run.shownMs} ms; ${marksLine(run.marks)})`;
    let shortReload;
    await step("1. a short thread, and a window reload of it (the anchor)", async () => {
      const short = await burst("A short burst, please", 10);
      assert.ok(short.drawn.entries <= 11);
      shortReload = await reload(short.last);
      figure(reloadLine(short.last + 1, shortReload));
    });

    let longLast;
    await step("2. a burst of 10,000 entries: the last shows, fewer than 200 entries in the DOM", async () => {
      const hundred = await burst("A hundred entries, please", 100);
      const arrival = (run) =>
        `the host's last message came ${Math.round(run.arrivedAfterMs)} ms after it, ` +
        `drawn ${Math.round(run.shownAfterMs - run.arrivedAfterMs)} ms later`;
      figure(
        `burst of 100: last entry in sight ${Math.round(hundred.shownAfterMs)} ms after the agent's last write ` +
          `(${arrival(hundred)}); ` +
          `${describeLongTasks(hundred.longTasks)}; ${hundred.drawn.entries} entries / ${hundred.drawn.nodes} nodes in the thread; ` +
          describeCpu(hundred),
      );
      const long = await burst("Now the long one", 10_000);
      longLast = long.last;
      figure(
        `burst of 10,000: last entry in sight ${Math.round(long.shownAfterMs)} ms after the agent's last write ` +
          `(${(long.shownAfterMs / Math.max(1, hundred.shownAfterMs)).toFixed(1)}× the burst of 100; ${arrival(long)}); ` +
          `${describeLongTasks(long.longTasks)}; ${long.drawn.entries} entries / ${long.drawn.nodes} nodes in the thread ` +
          `(${long.drawn.documentNodes} in the document) for ${long.last + 1} entries; ${describeCpu(long)}`,
      );
      assert.ok(long.drawn.entries < MOST_ENTRIES_DRAWN, `${long.drawn.entries} entries in the DOM`);
      assert.match(await entryAt(long.last).innerText(), /cargo test --lib module_10000/);
      await vscode.screenshot("long-thread-end.png");
    });

    await step("3. jumping to the top shows the first entries, and back to the end the last", async () => {
      const webview = await frame();
      await webview.evaluate(() => {
        document.querySelector("main.thread").scrollTop = 0;
      });
      await inSight(0);
      await inSight(1);
      assert.match(await entryAt(1).innerText(), /Entry 00001 of 10:/);
      assert.ok((await drawnCount()).entries < MOST_ENTRIES_DRAWN);
      assert.equal(await entryAt(longLast).count(), 0, "the end is not drawn at the top");
      await vscode.screenshot("long-thread-top.png");

      await webview.evaluate(() => {
        const thread = document.querySelector("main.thread");
        thread.scrollTop = thread.scrollHeight;
      });
      await inSight(longLast);
      assert.ok((await drawnCount()).entries < MOST_ENTRIES_DRAWN);
      assert.equal(await entryAt(1).count(), 0, "the top is not drawn at the end");
    });

    await step("4. a reply streaming at the end of the long thread stays in sight as it grows", async () => {
      const reply = longLast + 2;
      await vscode.sendPrompt("Now stream a reply");
      const webview = await frame();
      for (const line of ["020", "040", "060", "080", "100", "120"]) {
        await entryAt(reply).filter({ hasText: `Streamed line ${line}` }).waitFor({ timeout: 60_000 });
        const pinned = await webview.evaluate((index) => {
          const thread = document.querySelector("main.thread");
          const entry = thread.querySelector(`:scope > .entry[data-index="${index}"]`);
          const box = thread.getBoundingClientRect();
          const at = entry.getBoundingClientRect();
          // The reply's end (its newest text) is at the bottom of what is in sight.
          return { bottom: at.bottom, viewBottom: box.bottom, top: at.top, viewTop: box.top };
        }, reply);
        assert.ok(
          pinned.bottom <= pinned.viewBottom + 1 && pinned.bottom > pinned.viewTop,
          `line ${line}: the reply's end is in sight (${JSON.stringify(pinned)})`,
        );
      }
      await chat.locator('.turn-state[data-state="ended"]').waitFor();
      assert.ok((await drawnCount()).entries < MOST_ENTRIES_DRAWN);
    });

    await step("5. a reply of one long line stays in sight, and only its pieces in sight are laid out", async () => {
      const reply = longLast + 4;
      // The browser says when it starts or stops skipping an element's contents (laying them
      // out, painting them): an event that does not bubble, so it is caught on its way down.
      await (await frame()).evaluate(() => {
        document.addEventListener("contentvisibilityautostatechange", (event) => {
          event.target.e2eSkipped = event.skipped;
        }, { capture: true });
      });
      await vscode.sendPrompt("Now one long line");
      await entryAt(reply).filter({ hasText: "the last words of the long line" }).waitFor();
      await chat.locator('.turn-state[data-state="ended"]').last().waitFor();
      const webview = await frame();
      // Two frames, so the browser has decided about the last pieces too.
      await webview.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      const shown = await webview.evaluate((index) => {
        const thread = document.querySelector("main.thread");
        const entry = thread.querySelector(`:scope > .entry[data-index="${index}"]`);
        const groups = [...entry.querySelectorAll(".markdown .paragraph-pieces")];
        const view = thread.getBoundingClientRect();
        const box = entry.getBoundingClientRect();
        const text = entry.querySelector(".markdown").textContent;
        return {
          bottom: box.bottom,
          viewBottom: view.bottom,
          viewTop: view.top,
          pieces: entry.querySelectorAll(".markdown p.paragraph-piece").length,
          piecesInGroups: groups.reduce((count, group) => count + group.querySelectorAll(":scope > p.paragraph-piece").length, 0),
          groups: groups.length,
          skipped: groups.filter((group) => group.e2eSkipped === true).length,
          skippedShare: groups.filter((group) => group.e2eSkipped === true).reduce((chars, group) => chars + group.textContent.length, 0) / text.length,
          text,
        };
      }, reply);
      assert.ok(shown.bottom <= shown.viewBottom + 1 && shown.bottom > shown.viewTop, `the line's end is in sight (${shown.bottom}, ${shown.viewTop}-${shown.viewBottom})`);
      // About 80,000 characters in pieces of about 2,000, ten to a group (the browser's box it
      // may skip): most of the line is far above what is in sight, and not laid out.
      assert.ok(shown.pieces >= 35, `${shown.pieces} pieces`);
      assert.equal(shown.piecesInGroups, shown.pieces, "every piece is in a group");
      assert.ok(shown.groups >= 4 && shown.groups <= Math.ceil(shown.pieces / 10), `${shown.pieces} pieces in ${shown.groups} groups`);
      assert.ok(shown.skippedShare >= 0.5, `${shown.skipped} of ${shown.groups} groups skipped, ${Math.round(shown.skippedShare * 100)}% of the text`);
      // Every word is there, once, in order, laid out or not.
      const words = shown.text.trim().split(/\s+/);
      assert.equal(words.length, 3 * 5000 + 10);
      assert.equal(words.slice(-10).join(" "), "and these are the last words of the long line.");
      assert.ok(words.slice(0, 3 * 5000).every((word, at) => word === (at % 3 === 1 ? "after" : "word")));
      await vscode.screenshot("long-thread-long-line.png");
    });

    await step("6. an idle chat schedules no frame and no timer, and changes nothing, for 5 s", async () => {
      const webview = await frame();
      await webview.evaluate(() => {
        const counts = { requestAnimationFrame: 0, setTimeout: 0, setInterval: 0, requestIdleCallback: 0, mutations: 0 };
        window.__idleCounts = counts;
        for (const name of ["requestAnimationFrame", "setTimeout", "setInterval", "requestIdleCallback"]) {
          const original = window[name];
          if (typeof original !== "function") continue;
          window[name] = function counted(...args) {
            counts[name]++;
            return original.apply(this, args);
          };
        }
        new MutationObserver((records) => {
          counts.mutations += records.length;
        }).observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
      });
      const counts = () => webview.evaluate(() => ({ ...window.__idleCounts }));
      const quiet = (counted) => Object.values(counted).every((value) => value === 0);
      // What the last turn left (code blocks coloured in idle time) finishes first: a quiet
      // second, then the five seconds measured.
      let before = await counts();
      for (let attempt = 0; attempt < 30; attempt++) {
        await sleep(1_000);
        const now = await counts();
        if (JSON.stringify(now) === JSON.stringify(before)) break;
        before = now;
      }
      await sleep(5_000);
      const after = await counts();
      const during = Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - before[name]]));
      figure(`idle for 5 s: ${JSON.stringify(during)}`);
      assert.ok(quiet(during), `the idle chat did something: ${JSON.stringify(during)}`);
    });

    await step("7. the find bar finds a message near the top and brings it into sight", async () => {
      await chat.locator("textarea.composer-input").click();
      const webview = await frame();
      await vscode.page.keyboard.press("Control+f");
      const input = chat.locator(".find-bar .find-input");
      await input.waitFor();
      const started = Date.now();
      await input.fill("Entry 00003 of 10000");
      await chat.locator(".find-bar .find-count", { hasText: "1 of 1" }).waitFor();
      figure(`find over ${longLast + 3} entries: "1 of 1" after ${Date.now() - started} ms`);
      // Entry 3 of the burst: the prompt before it was entry longLast - 10,000.
      const found = longLast - 10_000 + 3;
      await inSight(found);
      const highlighted = await webview.evaluate(() => {
        const current = CSS.highlights?.get("tether-find-current");
        return current ? [...current].map((range) => range.toString()) : null;
      });
      assert.deepEqual(highlighted, ["Entry 00003 of 10000"]);
      assert.ok((await drawnCount()).entries < MOST_ENTRIES_DRAWN);
      await vscode.screenshot("long-thread-find.png");
      // A match in the thread's first entry, at its very top: nothing scrolls above it, and the
      // bar once covered it. It shows below the bar.
      await input.fill("A short burst");
      await chat.locator(".find-bar .find-count", { hasText: "1 of 1" }).waitFor();
      await inSight(0);
      const boxes = await webview.evaluate(() => {
        const current = CSS.highlights?.get("tether-find-current");
        const range = current ? [...current][0] : undefined;
        const match = range?.getBoundingClientRect();
        const bar = document.querySelector(".find-bar")?.getBoundingClientRect();
        return match && bar ? { matchTop: match.top, barBottom: bar.bottom } : null;
      });
      assert.ok(boxes !== null && boxes.matchTop >= boxes.barBottom, `the first entry's match is under the bar: ${JSON.stringify(boxes)}`);
      await input.press("Escape");
      await chat.locator(".find-bar").waitFor({ state: "hidden" });
    });

    await step("8. a window reload: the last entries show again, and the DOM stays under 200 entries", async () => {
      const last = longLast + 4;
      const before = await vscode.rendererMemory();
      const longReload = await reload(last);
      const drawn = await drawnCount();
      // The rest of the thread arrives after its last screen, a few hundred entries a frame.
      await (await frame()).waitForFunction(() => performance.getEntriesByName("tether-earlier-entries").length > 0, null, {
        timeout: LONG_WAIT_MS,
      });
      const after = await vscode.rendererMemory();
      const mib = (value) => `${Math.round(value)} MiB`;
      figure(
        `the workbench's renderer, garbage collected, before → after the reload: JS heap ${mib(before.jsHeapMiB)} → ` +
          `${mib(after.jsHeapMiB)}, resident ${mib(before.rendererRssMiB)} → ${mib(after.rendererRssMiB)}`,
      );
      // The reloaded window holds the same thread: its heap is the first one's size again, not
      // the first one's plus its own (a chat the reload did not let go of doubles it).
      assert.ok(after.jsHeapMiB <= before.jsHeapMiB * 1.25, `JS heap ${mib(before.jsHeapMiB)} → ${mib(after.jsHeapMiB)}`);
      const more = (field) => {
        const difference = Math.round(longReload[field] - shortReload[field]);
        const ratio = (longReload[field] / shortReload[field]).toFixed(2);
        return `${Math.abs(difference)} ms ${difference < 0 ? "less" : "more"} than the short thread's (${ratio}×)`;
      };
      figure(
        `${reloadLine(last + 1, longReload)}; last screen ${more("lastScreenMs")}, the host's snapshot ${more("hostMs")}; ` +
          `${drawn.entries} entries / ${drawn.nodes} nodes in the thread`,
      );
      // The webview saved the end of the thread before the reload, and the reloaded one started
      // from it: without that, its first screen waits for the host to read the whole log again.
      assert.ok(longReload.marks.restored !== null, "the reloaded webview restored the thread's last screen");
      assert.ok(drawn.entries < MOST_ENTRIES_DRAWN, `${drawn.entries} entries in the DOM`);
      await vscode.screenshot("long-thread-reloaded.png");
    });
    for (const line of figures) t.diagnostic(line);
  });
});
