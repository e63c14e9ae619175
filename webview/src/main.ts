// Entry point of the chat webview: wires the host's messages to the model and the view.
//
// Messages are applied to the model as they arrive (cheap) and the DOM is updated in one
// `requestAnimationFrame` callback per frame, however many messages came in. The webview posts
// `ready` once loaded and the host answers with a snapshot, so a reloaded webview redraws from
// the host's state; if a patch ever does not fit the model, the webview asks again the same way.
// Until that first snapshot, the thread's last screen as an earlier window saved it is shown
// (`last-screen.ts`): the host may take seconds to read a long session again after a reload.
//
// Nothing runs while nothing changes: a frame is asked for only when a message arrived, the
// person scrolled the thread, or a frame said it has more to draw (text rationed, a long thread's
// window drawn in slices). Performance marks say how long a window (re)load took, for the
// end-to-end tests to read: `tether-ready` when the webview asks for its state,
// `tether-snapshot` when a snapshot arrives (its detail: the entries' count),
// `tether-snapshot-drawn` after the frame that drew it, `tether-restored` when a saved last
// screen is put in the model and `tether-restored-drawn` after the frame that drew it (their
// detail: the entries' count), and, for a long thread whose snapshot
// left its earlier entries out, `tether-earlier-entries` when the last of them (the first
// entries: they come most recent first) arrived.

import DOMPurify from "dompurify";
import { ChatView } from "./chat-view";
import { MarkdownRenderer } from "./markdown";
import { readHostMessage } from "./host-message";
import { restoreLastScreen } from "./last-screen";
import { ChangeSet, applyHostMessage, emptyModel } from "./model";
import type { HostToWebview, VsCodeApi } from "./protocol";
import { UiState } from "./ui-state";

declare function acquireVsCodeApi(): VsCodeApi;

function start(): void {
  const api = acquireVsCodeApi();
  const root = document.getElementById("app");
  if (root === null) throw new Error("the webview's HTML has no #app element");

  const uiState = new UiState(api);
  const model = emptyModel();
  let changes = new ChangeSet();
  let frameRequested = false;
  let resyncRequested = false;

  const requestFrame = (): void => {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(renderFrame);
  };
  const view = new ChatView(
    root,
    new MarkdownRenderer(DOMPurify),
    (message) => api.postMessage(message),
    uiState,
    undefined,
    undefined,
    requestFrame,
  );
  function renderFrame(): void {
    frameRequested = false;
    const frameChanges = changes;
    changes = new ChangeSet();
    let more: boolean;
    try {
      more = view.render(model, frameChanges);
    } catch (error) {
      if (!model.restored) throw error;
      // A saved screen this webview cannot draw (saved by another version, say): the chat waits
      // for the host's snapshot as it would with nothing saved.
      console.warn("tether: could not draw the saved last screen", error);
      Object.assign(model, emptyModel());
      frameChanges.reset = true;
      more = view.render(model, frameChanges);
    }
    if (frameChanges.reset) {
      const detail = { entries: model.entries.length };
      performance.mark(model.restored ? "tether-restored-drawn" : "tether-snapshot-drawn", { detail });
    }
    if (more) requestFrame();
  }

  window.addEventListener("message", (event: MessageEvent<unknown>) => {
    const read = readHostMessage(event.data);
    if ("error" in read) {
      console.warn(`tether: ignoring a message from the host: ${read.error}`, event.data);
      return;
    }
    if (view.receive(read.message)) return;
    if (!applyHostMessage(model, read.message, changes)) {
      console.warn("tether: ignoring a message of unknown shape from the host", read.message);
      return;
    }
    const message = read.message as HostToWebview;
    if (message.type === "snapshot") {
      resyncRequested = false;
      // The snapshot's own thread: one of a session still starting leaves a restored screen's.
      const entries = message.snapshot.earlier + message.snapshot.entries.length;
      performance.mark("tether-snapshot", { detail: { entries } });
    }
    if (message.type === "earlierEntries" && message.from === 0) performance.mark("tether-earlier-entries");
    if (changes.outOfSync !== null && !resyncRequested) {
      console.warn(`tether: asking the host for a snapshot: ${changes.outOfSync}`);
      resyncRequested = true;
      api.postMessage({ type: "ready" });
    }
    if (!changes.isEmpty) requestFrame();
  });

  if (restoreLastScreen(uiState.savedScreen, model, changes)) {
    performance.mark("tether-restored", { detail: { entries: model.entries.length } });
    requestFrame();
  }
  performance.mark("tether-ready");
  api.postMessage({ type: "ready" });
}

start();
