import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";
import { processesWith } from "../helpers/processes";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestService;
let outage: { stop(): Promise<number> } | undefined;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await outage?.stop();
  await t.destroy();
  expect(dynalitePids()).toEqual([]);
});

/** The service's dynalite process (its command line names the child script and the data dir). */
function dynalitePids(): number[] {
  return processesWith("dynaliteChild.cjs").filter((pid) => processesWith(t.dataDir).includes(pid));
}

/** Kills every dynalite of the service as soon as it shows up, until `stop()`; counts the kills. */
function keepStoreDown(): { stop(): Promise<number> } {
  let running = true;
  let kills = 0;
  const loop = (async () => {
    while (running) {
      for (const pid of dynalitePids()) {
        try {
          process.kill(pid, "SIGKILL");
          kills++;
        } catch {
          // ended meanwhile
        }
      }
      await sleep(5);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return kills;
    },
  };
}

describe("the store (dynalite) dies and comes back", () => {
  it("answers 503 service_unavailable with Retry-After meanwhile, then recovers without a restart and records the run that ended in between", async () => {
    await t.deploy("quick", "export default async () => ({ ok: true });");
    await t.deploy("slow", "export default async () => { await new Promise((r) => setTimeout(r, 1500)); return 'done'; }");
    expect((await t.call("POST", "/functions/quick")).status).toBe(200);

    const inFlight = t.call("POST", "/functions/slow");
    let running = false;
    for (let i = 0; i < 200 && !running; i++) {
      const items = (await t.call("GET", "/functions/slow/logs?limit=1")).body.items;
      running = items[0]?.status === "running";
      if (!running) await sleep(20);
    }
    expect(running).toBe(true);

    outage = keepStoreDown();
    await sleep(100);
    const statuses: number[] = [];
    // Listing, an invocation, a create: each needs the store (records may be cached; the run's admission is not).
    const during = [
      await t.call("GET", "/functions"),
      await t.call("POST", "/functions/quick"),
      await t.call("POST", "/functions", { body: { name: "during", code: "export default async () => 1;" } }),
    ];
    for (const response of during) {
      const error = expectError(response, 503, "service_unavailable");
      expect(error.message).toMatch(/store/);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      statuses.push(response.status);
    }
    expect((await t.call("GET", "/health")).status).toBe(200);

    // The run in flight ends while the store is down: its caller still gets the result.
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.body).toBe("done");
    const runId = finished.headers.get("x-run-id");
    await sleep(300);
    const kills = await outage.stop();
    expect(kills).toBeGreaterThanOrEqual(2); // the supervisor restarted it at least once meanwhile

    // Recovery: the same service, the same port and data, answering again.
    let recovered = await t.call("GET", "/functions");
    for (let i = 0; i < 300 && recovered.status !== 200; i++) {
      expect(recovered.status).toBe(503);
      await sleep(50);
      recovered = await t.call("GET", "/functions");
    }
    expect(recovered.status).toBe(200);
    expect(recovered.body.items.map((f: { name: string }) => f.name)).toEqual(["quick", "slow"]);
    expect(dynalitePids()).toHaveLength(1);

    // The run that ended during the outage is recorded once the store is back.
    let run = (await t.call("GET", `/runs/${runId}`)).body;
    for (let i = 0; i < 200 && run.status !== "succeeded"; i++) {
      await sleep(50);
      run = (await t.call("GET", `/runs/${runId}`)).body;
    }
    expect(run).toMatchObject({ status: "succeeded", result: "done", error: null });
    expect(run.finished_at).not.toBeNull();
    let metrics = (await t.call("GET", "/functions/slow/metrics")).body;
    for (let i = 0; i < 100 && metrics.total_calls !== 1; i++) {
      await sleep(50);
      metrics = (await t.call("GET", "/functions/slow/metrics")).body;
    }
    expect(metrics).toMatchObject({ total_calls: 1, succeeded_calls: 1 });
    // Its plan slot is given back too (else it stayed taken until its lease expired, minutes later).
    let usage = (await t.call("GET", "/usage")).body;
    for (let i = 0; i < 200 && usage.remaining.concurrency !== usage.limits.concurrency; i++) {
      await sleep(50);
      usage = (await t.call("GET", "/usage")).body;
    }
    expect(usage.remaining.concurrency).toBe(usage.limits.concurrency);

    // Everything works again.
    expect((await t.call("POST", "/functions/quick")).body).toEqual({ ok: true });
    await t.deploy("after", "export default async () => 'after';");
    expect((await t.call("POST", "/functions/after")).body).toBe("after");
    expect(statuses).toEqual([503, 503, 503]);
  });
});
