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

/**
 * BENCH_TENANT_GAP_MS (default 0): the hostile-tenant benches' pause before each of the other
 * tenant's calls, not timed. 0: back to back, so the tenant alone keeps both cores of this
 * machine busy (each call's successor worker process starts while the next call is made) and,
 * once another account is busy too, its fair half of the CPU is bound to slow it whatever the
 * service does; with a gap the tenant asks for less than its share, as a warm function's caller
 * usually does, and the figure is what a neighbour takes from it.
 */
export const TENANT_GAP_MS = Number(process.env.BENCH_TENANT_GAP_MS ?? 0);

/** The pause before one of the other tenant's calls (TENANT_GAP_MS). */
export async function tenantGap(): Promise<void> {
  if (TENANT_GAP_MS > 0) await new Promise((resolve) => setTimeout(resolve, TENANT_GAP_MS));
}

/**
 * A 90 % bootstrap interval of p50(over) / p50(under): both samples resampled with replacement
 * `resamples` times. It says how far sampling alone moves the ratio within one run (what moves
 * it between runs, the machine's own state, it cannot see: hence the interleaved phases).
 */
export function ratioInterval(over: number[], under: number[], resamples = 2000): { low: number; high: number } {
  const resampledP50 = (values: number[]) => percentile(Array.from({ length: values.length }, () => values[Math.floor(Math.random() * values.length)] as number), 0.5);
  const ratios = Array.from({ length: resamples }, () => resampledP50(over) / resampledP50(under)).sort((a, b) => a - b);
  return { low: round(percentile(ratios, 0.05)), high: round(percentile(ratios, 0.95)) };
}
