/** Calls completed by `callers` loops of `work` that start calls for `seconds`, and the time they took. */
export async function load(callers: number, seconds: number, work: () => Promise<unknown>): Promise<{ calls: number; seconds: number }> {
  let calls = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        await work();
        calls++;
      }
    }),
  );
  return { calls, seconds: (performance.now() - started) / 1000 };
}

/**
 * Calls per second of two kinds of work at the same concurrency, each loaded for `seconds` in
 * all, in turns A B B A of half that each: a drift in the machine's speed during the
 * measurement weighs on both alike. A call still under way at a turn's end is waited for and counted.
 */
export async function throughputSideBySide(
  callers: number,
  seconds: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a: number; b: number }> {
  const half = seconds / 2;
  const a1 = await load(callers, half, a);
  const b1 = await load(callers, half, b);
  const b2 = await load(callers, half, b);
  const a2 = await load(callers, half, a);
  const rate = (x: { calls: number; seconds: number }, y: { calls: number; seconds: number }) => (x.calls + y.calls) / (x.seconds + y.seconds);
  return { a: rate(a1, a2), b: rate(b1, b2) };
}
