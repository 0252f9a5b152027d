/**
 * Resolves in the next turn of the event loop (after I/O callbacks of this one). Work that
 * follows an answer but must not delay it (metering, giving a lease back) starts there: the
 * answer is written in the current turn.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
