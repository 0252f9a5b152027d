/**
 * The most intervals open at one instant. An interval is [from, to): one that ends as another
 * begins does not count twice.
 */
export function peakOverlap(intervals: { from: number; to: number }[]): number {
  const events = intervals.flatMap(({ from, to }) => [
    { at: from, delta: 1 },
    { at: to, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let peak = 0;
  for (const event of events) {
    open += event.delta;
    peak = Math.max(peak, open);
  }
  return peak;
}
