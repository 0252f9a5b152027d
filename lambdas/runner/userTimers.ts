/**
 * The timer functions an automation's module sees (loadAutomation passes them in place of
 * the globals): the same as Node's, but the runner knows which of them are still pending
 * when a run has returned (the Lambda runner then retires its container, see realmSnapshot).
 * A local worker needs none of it: its process serves one run (see hostMain).
 */
type Handle = NodeJS.Timeout | NodeJS.Immediate;

const pending = new Set<Handle>();

type Callback = (...args: unknown[]) => void;

export const userTimers = {
  setTimeout(callback: Callback, ms?: number, ...args: unknown[]): NodeJS.Timeout {
    const handle: NodeJS.Timeout = setTimeout(() => {
      pending.delete(handle);
      callback(...args);
    }, ms);
    pending.add(handle);
    return handle;
  },
  setInterval(callback: Callback, ms?: number, ...args: unknown[]): NodeJS.Timeout {
    const handle = setInterval(callback, ms, ...args);
    pending.add(handle);
    return handle;
  },
  setImmediate(callback: Callback, ...args: unknown[]): NodeJS.Immediate {
    const handle: NodeJS.Immediate = setImmediate(() => {
      pending.delete(handle);
      callback(...args);
    });
    pending.add(handle);
    return handle;
  },
  clearTimeout(handle?: NodeJS.Timeout | string | number): void {
    if (handle && typeof handle === "object") pending.delete(handle);
    clearTimeout(handle);
  },
  clearInterval(handle?: NodeJS.Timeout | string | number): void {
    if (handle && typeof handle === "object") pending.delete(handle);
    clearInterval(handle);
  },
  clearImmediate(handle?: NodeJS.Immediate): void {
    if (handle) pending.delete(handle);
    clearImmediate(handle);
  },
};

/**
 * The automation's timers still pending, unref'd ones too (an unref'd timer still fires in the
 * process's later life: for the Lambda runner's realm, see realmSnapshot).
 */
export function pendingUserTimers(): number {
  return pending.size;
}
