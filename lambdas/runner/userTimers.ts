/**
 * The timer functions an automation's module sees (loadAutomation passes them in place of
 * the globals): the same as Node's, but the worker knows which of them are still pending
 * when a run has returned. A worker whose run left a timer pending is replaced, not reused.
 * (Code that reaches the real globals another way gets no further: the service freezes the
 * whole sandbox between runs.)
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

/** The automation's timers still pending that keep the process going (unref'd ones do not count). */
export function pendingUserTimers(): number {
  let count = 0;
  for (const handle of pending) {
    if (handle.hasRef()) count++;
  }
  return count;
}
