/**
 * Builds a value on first use and keeps it for the life of the container. A failed build is
 * not kept: the next call tries again (a throttled or misconfigured start is not permanent).
 */
export function once<T>(build: () => T | Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= Promise.resolve()
      .then(build)
      .catch((error: unknown) => {
        value = undefined;
        throw error;
      });
    return value;
  };
}
