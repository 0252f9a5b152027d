/**
 * `npm run bench:batch`: batches (issue #22), each figure side by side with its baseline in
 * the same run (see docs/benchmarks.md, "Batches (issue #22)"):
 *
 * 1. writing 1,000 queued run records: BatchWrite (25 a request, 8 requests at a time, what
 *    POST /functions/{ref}/batch does) against parallel single puts (25 at a time), on dynalite;
 * 2. a 1,000-item batch of a no-browser function on `pro`, from POST to the end of its last run
 *    (GET /batches/{id} has finished_at), against 1,000 `Prefer: respond-async` calls made by
 *    the bench itself (100 callers, each trying a 429 again after its Retry-After), from the first
 *    call to the end of the last run; in turns A B B A; and the batch's 202 alone.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_PLANS } from "../lambdas/config/plans";
import { createDynaliteClients } from "../lambdas/local/dynaliteClient";
import { startDynalite } from "../lambdas/local/dynaliteServer";
import { newRun } from "../lambdas/runs/newRun";
import { createTablesIfMissing } from "../lambdas/store/createTables";
import { createStore } from "../lambdas/store/store";
import { startBenchService } from "./benchService";
import { round, summary } from "./stats";

/** Items of a batch and respond-async calls of a turn (BENCH_ITEMS; the target is stated for 1,000). */
const ITEMS = Number(process.env.BENCH_ITEMS ?? 1000);
/** Warm-up calls before part 2 (BENCH_WARM_UP). */
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 300);
const ASYNC_CALLERS = 100;
const WRITE_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** How often both sides look whether their runs have ended (what a client polling a batch does: waitForBatch starts at 250 ms). */
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 250);
const QUICK = "export default async function run({ n }: { n: number }) { return n; }";

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  if (process.env.BENCH_SKIP_WRITES !== "1") await recordWrites();
  await batchAgainstAsyncCalls();
}

/** 1: the same 1,000 run records written both ways, in turns. */
async function recordWrites(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-batch-"));
  const dynamo = await startDynalite(path.join(dir, "dynamodb"));
  const clients = createDynaliteClients(dynamo.endpoint, dynamo.secret);
  try {
    await createTablesIfMissing(clients.client, "bench");
    const store = createStore(clients.doc, "bench");
    const fn = { account_id: "bench", function_id: "fn_bench", name: "quick", memory_mb: 1024, timeout_seconds: 60 };
    const runs = () => Array.from({ length: ITEMS }, (_, n) => newRun(fn, { version: 1, trigger: "batch", params: { n }, queuedAt: new Date().toISOString(), batchId: "batch_bench" }));
    const batchWrite = async () => store.batches.putRuns(runs(), () => true, (run) => store.runs.put(run));
    const parallelPuts = async () => {
      const all = runs();
      let next = 0;
      await Promise.all(Array.from({ length: 25 }, async () => {
        while (next < all.length) await store.runs.put(all[next++]!);
      }));
    };
    const a: number[] = [];
    const b: number[] = [];
    const time = async (work: () => Promise<void>, into: number[]) => {
      const started = performance.now();
      await work();
      into.push(performance.now() - started);
    };
    await batchWrite();
    await parallelPuts();
    for (let i = 0; i < WRITE_ROUNDS; i++) {
      await time(batchWrite, a);
      await time(parallelPuts, b);
      await time(parallelPuts, b);
      await time(batchWrite, a);
    }
    console.log(`1,000 queued run records, ${a.length} times each (ms): BatchWrite ${JSON.stringify(summary(a))}; parallel puts (25) ${JSON.stringify(summary(b))}`);
  } finally {
    clients.destroy();
    await dynamo.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** 2: a batch against the same runs started one call each. */
async function batchAgainstAsyncCalls(): Promise<void> {
  const service = await startBenchService("process", "defaults");
  const call = async (method: string, urlPath: string, token: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(service.url + urlPath, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
  try {
    const account = await call("POST", "/api-keys", service.key, { account: "bench-pro", plan: "pro" });
    const token = String(account.body.key);
    if ((await call("POST", "/functions", token, { name: "quick", code: QUICK })).status !== 201) throw new Error("deploy failed");
    console.log(`service: ${service.sandbox.line}; workers ${JSON.stringify(service.workers)}; plan pro ${JSON.stringify(DEFAULT_PLANS.pro)}`);
    // Warm-up: the service's paths for both kinds, and the function's workers.
    for (let i = 0; i < WARM_UP; i++) await call("POST", "/functions/quick", token, { n: i });

    /** Until every run of `runIds` has ended, read from the function's latest runs. */
    const untilEnded = async (runIds: readonly string[]) => {
      const wanted = new Set(runIds);
      for (;;) {
        const logs = await call("GET", `/functions/quick/logs?limit=${ITEMS}`, token);
        const ended = (logs.body.items as { run_id: string; status: string }[]).filter((run) => wanted.has(run.run_id) && run.status !== "queued" && run.status !== "running");
        if (ended.length === wanted.size) return;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    };
    let refusals = 0;
    const asyncCalls = async (): Promise<number> => {
      const started = performance.now();
      const runIds: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: ASYNC_CALLERS }, async () => {
          while (next < ITEMS) {
            const n = next++;
            for (;;) {
              const answer = await call("POST", "/functions/quick", token, { n }, { prefer: "respond-async" });
              if (answer.status === 202) {
                runIds.push(String(answer.body.run_id));
                break;
              }
              if (answer.status !== 429) throw new Error(`async call: ${answer.status} ${JSON.stringify(answer.body)}`);
              refusals++;
              await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get("retry-after") ?? 1) * 1000));
            }
          }
        }),
      );
      await untilEnded(runIds);
      return performance.now() - started;
    };
    const accepts: number[] = [];
    const batch = async (): Promise<number> => {
      const started = performance.now();
      const answer = await call("POST", "/functions/quick/batch", token, { items: Array.from({ length: ITEMS }, (_, n) => ({ n })) });
      if (answer.status !== 202) throw new Error(`batch: ${answer.status} ${JSON.stringify(answer.body)}`);
      accepts.push(performance.now() - started);
      for (;;) {
        const status = await call("GET", `/batches/${answer.body.batch_id}`, token);
        if (status.body.finished_at !== null) {
          if (status.body.counts.succeeded !== ITEMS) throw new Error(`batch ended ${JSON.stringify(status.body.counts)}`);
          return performance.now() - started;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    };
    // Each turn printed as it ends (a turn of 1,000 runs takes minutes on a loaded machine since a worker process serves one run).
    const turn = async (name: string, work: () => Promise<number>, into: number[]) => {
      into.push(await work());
      console.log(`turn ${name}: ${round(into[into.length - 1] ?? 0)} ms`);
    };
    const a: number[] = [];
    const b: number[] = [];
    await turn("A (respond-async calls)", asyncCalls, a);
    await turn("B (batch)", batch, b);
    await turn("B (batch)", batch, b);
    await turn("A (respond-async calls)", asyncCalls, a);
    const median = (values: number[]) => summary(values).p50;
    console.log(`${ITEMS} respond-async calls (${ASYNC_CALLERS} callers) to the end of the last run (ms): ${a.map(round).join(", ")}; 429s tried again: ${refusals}`);
    console.log(`a ${ITEMS}-item batch to the end of its last run (ms): ${b.map(round).join(", ")}; its 202 (ms): ${accepts.map(round).join(", ")}`);
    console.log(`batch / calls: ${round(median(b) / median(a))} (target ≤ 1.1)`);
  } finally {
    await service.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
