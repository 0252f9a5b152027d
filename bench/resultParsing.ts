/**
 * `npx tsx bench/resultParsing.ts`: where a worker's frame is parsed (docs/benchmarks.md, "Parsing
 * results off the thread"). For `done` frames of growing size (a result of many small objects),
 * the request thread's time with the frame parsed there (as FrameReader + parseRunOutcome did)
 * against the frame sent to the parsing thread and back: the round trip's wall time, and the
 * request thread's own CPU for it (the copy, the hand-over, the parsed frame's clone back; from
 * /proc's per-thread counters in 10 ms ticks, so a mean over the rounds).
 */
import { readFileSync } from "node:fs";
import { encodeFrame } from "../lambdas/runner/frames";
import { jsonTextDeeperThan } from "../lambdas/runner/jsonDepth";
import { MAX_JSON_DEPTH } from "../lambdas/runner/outputLimits";
import { parseRunOutcome } from "../lambdas/runner/outcomeSchema";
import { ResultParser } from "../lambdas/runtime/local/resultParsing/resultParser";
import { round } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const SIZES_KB = [1, 4, 16, 64, 256, 1024, 4096];

function frameOf(kb: number): Buffer {
  const items = Array.from({ length: Math.max(1, Math.round((kb * 1024) / 40)) }, (_, i) => ({ i, name: `item-${i}` }));
  return encodeFrame({ type: "done", runId: "r", outcome: { status: "succeeded", result_json: JSON.stringify(items), logs: "", browser_ms: 0 } }).subarray(4);
}

/** This process's main thread's CPU so far (ms; the kernel counts it in 10 ms ticks: read over many rounds). */
function mainThreadCpuMs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main(): Promise<void> {
  const parser = new ResultParser();
  await parser.parse("warm", frameOf(128), MAX_JSON_DEPTH, []); // the thread started
  const rows = [];
  for (const kb of SIZES_KB) {
    const body = frameOf(kb);
    const inline: number[] = [];
    const trip: number[] = [];
    let tripCpu = 0;
    for (let i = 0; i < ROUNDS; i++) {
      let start = performance.now();
      const text = body.toString("utf8");
      if (!jsonTextDeeperThan(text, MAX_JSON_DEPTH)) {
        const message = JSON.parse(text) as { outcome: unknown };
        parseRunOutcome(message.outcome, 1000);
      }
      inline.push(performance.now() - start);
      const cpu = mainThreadCpuMs();
      start = performance.now();
      const parsed = await parser.parse("bench", body, MAX_JSON_DEPTH, []);
      trip.push(performance.now() - start);
      if (parsed.ok) parseRunOutcome((parsed.message as { outcome: unknown }).outcome, 1000, parsed.resultJson);
      tripCpu += mainThreadCpuMs() - cpu;
    }
    rows.push({ frame_kb: round(body.length / 1024), inline_ms: round(median(inline)), off_thread_wall_ms: round(median(trip)), off_thread_request_thread_cpu_ms_mean: round(tripCpu / ROUNDS) });
  }
  await parser.close();
  console.log(JSON.stringify({ rounds: ROUNDS, p50: rows }, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
