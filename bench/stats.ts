/** Percentile of a list of numbers (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

export function summary(values: number[]): { p50: number; p95: number; mean: number; n: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { p50: round(percentile(values, 0.5)), p95: round(percentile(values, 0.95)), mean: round(mean), n: values.length };
}

export function round(n: number): number {
  return Math.round(n * 100) / 100;
}

export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}
