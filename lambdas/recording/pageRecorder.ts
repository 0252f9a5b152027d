/**
 * Records one page over its own CDP session: the recorder (recorderSource) is added to every
 * document the page loads, before the page's scripts, in an isolated world (RECORDER_WORLD).
 * The page's scripts see neither the recorder, nor its events, nor its binding, and cannot call
 * it. The recorder keeps its events in that world: they reach this side when the document goes
 * (over the binding) and when `take()` asks for them (only for a recording that is kept).
 */
import type { CdpChannel } from "./pageTarget";
import { RECORDER_BINDING, RECORDER_CAPPED, RECORDER_TAKE, RECORDER_WORLD } from "./recorderNames";
import { recorderSource } from "./recorderSource";

/** A recorded page: take() hands what its current document's recorder holds to `onBatch`. */
export interface PageRecording {
  take(): Promise<void>;
}

/** What the recorder of one page sends: a batch of events (JSON text of an array, untrusted), or word that its document reached its cap. */
export type RecorderMessage = { batch: string } | { capped: true };

type BindingCall = { name?: unknown; payload?: unknown };
type FrameTree = { frameTree?: { frame?: { id?: unknown } } };
type World = { executionContextId?: unknown };
type Evaluated = { result?: { value?: unknown } };

/** Starts recording the page behind `cdp`; what its recorder sends goes to `onMessage`. */
export async function recordPage(cdp: CdpChannel, onMessage: (message: RecorderMessage) => void): Promise<PageRecording> {
  cdp.on("Runtime.bindingCalled", (event: BindingCall) => {
    if (event?.name !== RECORDER_BINDING || typeof event.payload !== "string") return;
    onMessage(event.payload === RECORDER_CAPPED ? { capped: true } : { batch: event.payload });
  });
  // In one go: the session runs them in order, so the binding exists before the script is added.
  // Bindings report their calls only to a session with the Runtime domain on; scripts for new
  // documents run only with the Page domain on.
  const source = recorderSource();
  await Promise.all([
    cdp.send("Page.enable"),
    cdp.send("Runtime.enable"),
    cdp.send("Runtime.addBinding", { name: RECORDER_BINDING, executionContextName: RECORDER_WORLD }),
    cdp.send("Page.addScriptToEvaluateOnNewDocument", { source, worldName: RECORDER_WORLD, runImmediately: true }),
  ]);
  return {
    async take() {
      const tree = (await cdp.send("Page.getFrameTree")) as FrameTree;
      const frameId = tree?.frameTree?.frame?.id;
      if (typeof frameId !== "string") return;
      // The world of that name this session made for the document: the recorder's (a fresh, empty one if it never ran there).
      const world = (await cdp.send("Page.createIsolatedWorld", { frameId, worldName: RECORDER_WORLD })) as World;
      if (typeof world?.executionContextId !== "number") return;
      const expression = `typeof globalThis.${RECORDER_TAKE} === "function" ? globalThis.${RECORDER_TAKE}() : ""`;
      const answer = (await cdp.send("Runtime.evaluate", { expression, contextId: world.executionContextId, returnByValue: true })) as Evaluated;
      const batch = answer?.result?.value;
      if (typeof batch === "string" && batch !== "") onMessage({ batch });
    },
  };
}
