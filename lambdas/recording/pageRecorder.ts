/**
 * Records one page over its own CDP session: the recorder (recorderSource) is added to every
 * document the page loads, before the page's scripts, in an isolated world (RECORDER_WORLD),
 * and sends its events through a binding that exists in that world only. The page's scripts
 * see neither the recorder, nor its buffer, nor the binding, and cannot call it.
 */
import type { CdpChannel } from "./pageTarget";
import { RECORDER_BINDING, RECORDER_WORLD } from "./recorderNames";
import { recorderSource } from "./recorderSource";

/** A recorded page: flush() asks its recorder to send what it holds (before the page's recording is kept). */
export interface PageRecording {
  flush(): Promise<void>;
}

type BindingCall = { name?: unknown; payload?: unknown; executionContextId?: unknown };

/**
 * Starts recording the page behind `cdp`; each batch of events (JSON text of an array, as the
 * page's recorder sent it: untrusted) goes to `onBatch`.
 */
export async function recordPage(cdp: CdpChannel, onBatch: (payload: string) => void): Promise<PageRecording> {
  let context: number | undefined;
  cdp.on("Runtime.bindingCalled", (event: BindingCall) => {
    if (event?.name !== RECORDER_BINDING || typeof event.payload !== "string") return;
    if (typeof event.executionContextId === "number") context = event.executionContextId;
    onBatch(event.payload);
  });
  // In one go: the session runs them in order, so the binding exists before the script is added.
  // Bindings report their calls only to a session with the Runtime domain on.
  const source = recorderSource();
  await Promise.all([
    cdp.send("Page.enable"),
    cdp.send("Runtime.enable"),
    cdp.send("Runtime.addBinding", { name: RECORDER_BINDING, executionContextName: RECORDER_WORLD }),
    cdp.send("Page.addScriptToEvaluateOnNewDocument", { source, worldName: RECORDER_WORLD, runImmediately: true }),
  ]);
  return {
    async flush() {
      if (context === undefined) return;
      // The binding's call reaches this side before the evaluation's answer does.
      await cdp.send("Runtime.evaluate", { expression: "globalThis.__browserfnFlush && globalThis.__browserfnFlush()", contextId: context }).catch(() => undefined);
    },
  };
}
