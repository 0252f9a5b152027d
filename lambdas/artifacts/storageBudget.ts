/**
 * The account's storage cap as a run sees it: the room its account had when the run started
 * (the service tells it), spent by each file the run keeps. Free of imports, so every bundle
 * (the local worker, the Lambda runner) can take it.
 */

/** The code of the error `artifacts.save` throws past the account's storage cap. */
export const STORAGE_LIMIT_CODE = "storage_limit_exceeded";

/** What `artifacts.save` throws when the file would pass the account's storage cap: catch it by its `code`. */
export class StorageLimitError extends Error {
  readonly code = STORAGE_LIMIT_CODE;
  override readonly name = "StorageLimitError";
}

interface Sink {
  save(name: string, data: Uint8Array, contentType: string): Promise<{ name: string; url: string; bytes: number }>;
}

/**
 * `sink` with the account's room (`bytesLeft`, in bytes) spent by each file saved through it; a
 * file that would pass it is refused with StorageLimitError and not sent. A name saved again
 * spends only what it grew by. Without `bytesLeft` (a service that says none): `sink` as it is.
 * The service counts again when it keeps the file (the run's own check is its code's).
 */
export function withStorageBudget<S extends Sink>(sink: S, bytesLeft: number | undefined): S {
  if (bytesLeft === undefined || !Number.isFinite(bytesLeft)) return sink;
  const spent = new Map<string, number>();
  let total = 0;
  const save: Sink["save"] = async (name, data, contentType) => {
    const after = total - (spent.get(name) ?? 0) + data.byteLength;
    if (after > bytesLeft) {
      throw new StorageLimitError(
        `${STORAGE_LIMIT_CODE}: the account's storage is full (its plan's max_storage_mb): '${name}' (${data.byteLength} bytes) would pass the ${bytesLeft} bytes it had left when this run started`,
      );
    }
    total = after;
    spent.set(name, data.byteLength);
    return sink.save(name, data, contentType);
  };
  return Object.assign(Object.create(Object.getPrototypeOf(sink) as object) as S, sink, { save });
}
