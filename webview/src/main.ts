// Entry point of the chat webview: wires the host's messages to the model and the view.
//
// Messages are applied to the model as they arrive (cheap) and the DOM is updated in one
// `requestAnimationFrame` callback per frame, however many messages came in. The webview posts
// `ready` once loaded and the host answers with a snapshot, so a reloaded webview redraws from
// the host's state; if a patch ever does not fit the model, the webview asks again the same way.

import DOMPurify from "dompurify";
import { ChatView } from "./chat-view";
import { MarkdownRenderer } from "./markdown";
import { ChangeSet, applyHostMessage, emptyModel } from "./model";
import type { VsCodeApi } from "./protocol";
import { UiState } from "./ui-state";

declare function acquireVsCodeApi(): VsCodeApi;

function start(): void {
  const api = acquireVsCodeApi();
  const root = document.getElementById("app");
  if (root === null) throw new Error("the webview's HTML has no #app element");

  const uiState = new UiState(api);
  const view = new ChatView(root, new MarkdownRenderer(DOMPurify), (message) => api.postMessage(message), uiState);
  const model = emptyModel();
  let changes = new ChangeSet();
  let frameRequested = false;
  let resyncRequested = false;

  const requestFrame = (): void => {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(renderFrame);
  };
  function renderFrame(): void {
    frameRequested = false;
    const frameChanges = changes;
    changes = new ChangeSet();
    if (view.render(model, frameChanges)) requestFrame();
  }

  window.addEventListener("message", (event: MessageEvent<unknown>) => {
    if (view.receive(event.data)) return;
    if (!applyHostMessage(model, event.data, changes)) {
      console.warn("tether: ignoring a message of unknown shape from the host", event.data);
      return;
    }
    if (changes.reset) resyncRequested = false;
    if (changes.outOfSync !== null && !resyncRequested) {
      console.warn(`tether: asking the host for a snapshot: ${changes.outOfSync}`);
      resyncRequested = true;
      api.postMessage({ type: "ready" });
    }
    if (!changes.isEmpty) requestFrame();
  });

  api.postMessage({ type: "ready" });
}

start();
