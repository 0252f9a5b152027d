/**
 * The sweeper's CloudWatch metric: how many runs it ended past their deadline (their workflow
 * never recorded them), written as one Embedded Metric Format line in the sweeper's log, which
 * CloudWatch turns into the metric (no PutMetricData permission needed). The stack alarms on
 * it (lib/runPipeline.ts).
 */
export const SWEPT_RUNS_METRIC = { namespace: "browserfn", name: "RunsSweptPastDeadline", dimension: "Stack" } as const;

/** The EMF log line of one sweep: `count` runs ended, for the stack named `stack` (its prefix). */
export function sweptRunsMetricLine(stack: string, count: number, at: Date): string {
  return JSON.stringify({
    _aws: {
      Timestamp: at.getTime(),
      CloudWatchMetrics: [
        {
          Namespace: SWEPT_RUNS_METRIC.namespace,
          Dimensions: [[SWEPT_RUNS_METRIC.dimension]],
          Metrics: [{ Name: SWEPT_RUNS_METRIC.name, Unit: "Count" }],
        },
      ],
    },
    [SWEPT_RUNS_METRIC.dimension]: stack,
    [SWEPT_RUNS_METRIC.name]: count,
  });
}
