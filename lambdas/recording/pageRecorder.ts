/**
 * Records one page over its own CDP session: the recorder (recorderSource) is added to every
 * document the page loads, before the page's scripts, in an isolated world (RECORDER_WORLD).
 * The page's scripts see neither the recorder, nor its events, nor its binding, and cannot call
 * it. rrweb's code reaches a document's world only when its recording begins: the recorder asks
 * for it over the binding, and it is evaluated in that world (the context the binding was called
 * from). The recorder keeps its events in that world: they reach this side when the document
 * goes (over the binding) and when `take()` asks for them (only for a recording that is kept).
 */
import type { CdpChannel } from "./pageTarget";
import { RECORDER_BINDING, RECORDER_CAPPED, RECORDER_LOAD, RECORDER_LOADED, RECORDER_TAKE, RECORDER_WORLD } from "./recorderNames";
import { recorderSource } from "./recorderSource";

/** A recorded page: take() hands what its current document's recorder holds to `onMessage`. */
export interface PageRecording {
  /** The page's target id (the pages it opens name it as their opener). */
  targetId: string | undefined;
  take(): Promise<void>;
}

/** What the recorder of one page sends: a batch of events (JSON text of an array, untrusted), or word that its document reached its cap. */
export type RecorderMessage = { batch: string } | { capped: true };

type BindingCall = { name?: unknown; payload?: unknown; executionContextId?: unknown };
type FrameTree = { frameTree?: { frame?: { id?: unknown } } };
type World = { executionContextId?: unknown };
type Evaluated = { result?: { value?: unknown } };
type Info = { targetInfo?: { targetId?: unknown } };

/** Starts recording the page behind `cdp`; what its recorder sends goes to `onMessage`; `sent` is told once the commands are sent. */
export async function recordPage(cdp: CdpChannel, onMessage: (message: RecorderMessage) => void, sent?: () => void): Promise<PageRecording> {
  const { script, rrweb } = recorderSource();
  // rrweb's code, then recording starts (an answer to the recorder's ask); rrweb's code first where missing, then the events (a take).
  const load = `${rrweb}\nglobalThis.${RECORDER_LOADED}?.();`;
  const takeEvents = `${rrweb}\ntypeof globalThis.${RECORDER_TAKE} === "function" ? globalThis.${RECORDER_TAKE}() : ""`;
  cdp.on("Runtime.bindingCalled", (event: BindingCall) => {
    if (event?.name !== RECORDER_BINDING || typeof event.payload !== "string") return;
    if (event.payload === RECORDER_LOAD) {
      // Only the recorder's world has the binding: its context is where rrweb's code goes.
      const contextId = event.executionContextId;
      if (typeof contextId === "number") void cdp.send("Runtime.evaluate", { expression: load, contextId }).catch(() => undefined);
      return;
    }
    onMessage(event.payload === RECORDER_CAPPED ? { capped: true } : { batch: event.payload });
  });
  // In one go: the session runs them in order, so the binding exists before the script is added.
  // Bindings report their calls only to a session with the Runtime domain on; scripts for new
  // documents run only with the Page domain on. The script also runs at once in the document the
  // page has now (its first, an empty about:blank): cheap, since rrweb's code comes only once
  // recording begins, and it begins there only once something is written into it (a
  // `setContent`, a popup written by its opener).
  const setUp = Promise.all([
    cdp.send("Target.getTargetInfo") as Promise<Info>,
    cdp.send("Page.enable"),
    cdp.send("Runtime.enable"),
    cdp.send("Runtime.addBinding", { name: RECORDER_BINDING, executionContextName: RECORDER_WORLD }),
    cdp.send("Page.addScriptToEvaluateOnNewDocument", { source: script, worldName: RECORDER_WORLD, runImmediately: true }),
  ]);
  sent?.();
  const [info] = await setUp;
  const targetId = info?.targetInfo?.targetId;
  return {
    targetId: typeof targetId === "string" ? targetId : undefined,
    async take() {
      const contextId = await recorderWorld(cdp);
      if (contextId === undefined) return;
      // Taking starts a recording that had not begun (its code evaluated first where missing).
      const answer = (await cdp.send("Runtime.evaluate", { expression: takeEvents, contextId, returnByValue: true })) as Evaluated;
      const batch = answer?.result?.value;
      if (typeof batch === "string" && batch !== "") onMessage({ batch });
    },
  };
}

/** The recorder's world in the page's current document: the one of that name this session made there (a fresh, empty one if none was). */
async function recorderWorld(cdp: CdpChannel): Promise<number | undefined> {
  const tree = (await cdp.send("Page.getFrameTree")) as FrameTree;
  const frameId = tree?.frameTree?.frame?.id;
  if (typeof frameId !== "string") return undefined;
  const world = (await cdp.send("Page.createIsolatedWorld", { frameId, worldName: RECORDER_WORLD })) as World;
  return typeof world?.executionContextId === "number" ? world.executionContextId : undefined;
}
