/** A promise with its resolve and reject at hand. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

/** A Deferred whose rejection, if no one awaits it, is never an unhandled rejection. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => undefined); // awaited by whoever needs it; never an unhandled rejection
  return { promise, resolve, reject };
}
