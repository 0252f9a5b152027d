import { createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import { LocalScheduler } from "../../lambdas/schedule/localScheduler";
import { runScheduled } from "../../lambdas/schedule/runScheduled";
import { makeScheduledRunHandler } from "../../lambdas/schedule/scheduledRunHandler";
import { FakeClock } from "../helpers/fakeClock";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.destroy());


const logs = async (name: string) => (await t.call("GET", `/functions/${name}/logs?limit=100`)).body.items;

describe("scheduled runs", () => {
  it("run once per (function, due time) even when two schedulers fire it together", async () => {
    // A schedule far in the future: only the explicit firings below run.
    const fn = await t.deploy("racer", "export default async (who: string = 'nobody') => who;", {
      schedule: "0 0 1 1 *",
      schedule_params: { who: "cron" },
    });
    const due = "2026-06-01T12:00:00.000Z";
    const results = await Promise.all(Array.from({ length: 10 }, () => runScheduled(t.service.deps, fn.function_id, due)));
    const started = results.filter((r) => r.outcome === "started");
    expect(started).toHaveLength(1);
    expect(results.filter((r) => r.outcome === "duplicate")).toHaveLength(9);
    if (started[0]?.outcome !== "started") throw new Error("no run");
    const run = await started[0].run;
    expect(run).toMatchObject({ trigger: "schedule", status: "succeeded", result_json: '"cron"', params: { who: "cron" } });
    const entries = await logs("racer");
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ trigger: "schedule", status: "succeeded" });
    // The record shows the next due time after the one that fired.
    expect((await t.call("GET", "/functions/racer/info")).body.next_run_at).toBe("2027-01-01T00:00:00.000Z");
  });

  it("run once when two local schedulers on one store reach the same due time", async () => {
    const fn = await t.deploy("two-schedulers", "export default async () => 'once';", { schedule: "0 0 1 1 *" });
    const runs: Promise<unknown>[] = [];
    const make = (clock: FakeClock) =>
      new LocalScheduler({
        store: t.service.deps.store,
        clock,
        timers: clock,
        log: () => undefined,
        fire: async (id, at) => {
          const result = await runScheduled(t.service.deps, id, at);
          if (result.outcome === "started") runs.push(result.run);
          return result;
        },
      });
    // Fake clocks just before a due time of the yearly schedule (the service's real scheduler waits for 1 January).
    const clocks = [new FakeClock("2029-12-31T23:59:00Z"), new FakeClock("2029-12-31T23:59:00Z")];
    const schedulers = clocks.map(make);
    const record = (await t.call("GET", "/functions/two-schedulers/info")).body;
    const item = await t.service.deps.store.functions.getById(record.function_id);
    if (!item) throw new Error("missing");
    await Promise.all(schedulers.map((s) => s.sync(item)));
    await Promise.all(clocks.map((c) => c.advanceTo("2030-01-01T00:00:30Z")));
    await Promise.all(schedulers.map((s) => s.close()));
    await Promise.all(runs);
    expect(runs).toHaveLength(1);
    expect((await logs("two-schedulers")).map((l: { trigger: string }) => l.trigger)).toEqual(["schedule"]);
    expect(fn.function_id).toBe(record.function_id);
  });

  it("the scheduled-run Lambda handler runs a firing once, whatever the delivery count", async () => {
    const fn = await t.deploy("lambda-target", "export default async () => 'fired';", { schedule: "0 0 1 1 *" });
    const handler = makeScheduledRunHandler(t.service.deps);
    const event = { function_id: fn.function_id, scheduled_for: "2026-07-01T00:00:00Z" };
    const started = await handler(event);
    expect(started).toMatchObject({ outcome: "started", run_id: expect.stringMatching(/^run_/) });
    let run = (await t.call("GET", `/runs/${started.run_id}`)).body;
    for (let i = 0; i < 50 && run.status !== "succeeded"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = (await t.call("GET", `/runs/${started.run_id}`)).body;
    }
    expect(run).toMatchObject({ status: "succeeded", trigger: "schedule", result: "fired" });
    expect(await handler(event)).toMatchObject({ outcome: "duplicate" });
    await expect(handler({ function_id: fn.function_id, scheduled_for: "not a time" })).rejects.toThrow(/scheduled_for/);
    expect(await logs("lambda-target")).toHaveLength(1);
  });

  it("the scheduled-run Lambda handler on AWS stops reading the run's record once the run started (nothing reads on in its frozen container)", async () => {
    const fn = await t.deploy("aws-target", "export default async () => 'fired';", { schedule: "0 0 1 1 *" });
    let returned = false;
    const reads = { before: 0, after: 0 };
    const started: string[] = [];
    const runtime = createAwsRuntime({
      lambda: { send: async () => Promise.reject(new Error("no control plane here")) },
      stepFunctions: { send: async (command) => void started.push("name" in command.input ? (command.input.name ?? "") : "") },
      stateMachineArn: "arn:aws:states:eu-west-1:123456789012:stateMachine:bfn-runs",
      outcomes: { uploads: async (runId) => ({ url: "https://bucket.example/", fields: {}, outcome: { key: `outcomes/${runId}/outcome.json`, policy: "p", signature: "s" }, artifacts: { key_prefix: `outcomes/${runId}/artifact-`, policy_template: "{}", signatures: [] } }) },
      // The run never ends here (no workflow records it): a runtime still watching reads it every 5 ms until its deadline.
      runs: { get: async (runId) => { reads[returned ? "after" : "before"]++; return t.service.deps.store.runs.get(runId); } },
      functionPrefix: "bfn-", executionRoleArn: "role", executionRoleId: "AROAEXAMPLEEXECUTION", layerArns: [], logGroup: "/g", runPollIntervalMs: 5,
    });
    const handler = makeScheduledRunHandler({ ...t.service.deps, runtime });
    const firing = await handler({ function_id: fn.function_id, scheduled_for: "2026-07-02T00:00:00Z" });
    returned = true;
    expect(firing).toMatchObject({ outcome: "started", run_id: started[0] });
    // Forty poll intervals later, still no read.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reads.after).toBe(0);
  });

  it("skip a firing while the previous scheduled run is still running, and count the skip", async () => {
    const fn = await t.deploy("overlap", "export default async () => { await new Promise((r) => setTimeout(r, 1500)); return 1; }", {
      schedule: "0 0 1 1 *",
    });
    const first = await runScheduled(t.service.deps, fn.function_id, "2026-06-01T12:00:00.000Z");
    expect(first.outcome).toBe("started");
    const second = await runScheduled(t.service.deps, fn.function_id, "2026-06-01T12:01:00.000Z");
    expect(second).toMatchObject({ outcome: "skipped", reason: expect.stringMatching(/still (queued|running)/) });
    if (first.outcome === "started") await first.run;
    const third = await runScheduled(t.service.deps, fn.function_id, "2026-06-01T12:02:00.000Z");
    expect(third.outcome).toBe("started");
    if (third.outcome === "started") await third.run;
    const metrics = (await t.call("GET", "/functions/overlap/metrics")).body;
    expect(metrics).toMatchObject({ total_calls: 2, skipped_scheduled_runs: 1 });
  });

  it("skips a firing while the function is deploying or failed (its Lambda may not exist yet), and counts the skip", async () => {
    const fn = await t.deploy("redeploying", "export default async () => 1;", { schedule: "0 0 1 1 *" });
    const stored = await t.service.deps.store.functions.getById(fn.function_id);
    const deploying = await t.service.deps.store.functions.setStatus(stored!, "deploying", null);
    const firing = await runScheduled(t.service.deps, fn.function_id, "2026-06-01T12:00:00.000Z");
    expect(firing).toEqual({ outcome: "skipped", reason: "the function is deploying" });
    await t.service.deps.store.functions.setStatus(deploying!, "failed", "Lambda said no");
    expect(await runScheduled(t.service.deps, fn.function_id, "2026-06-01T12:01:00.000Z")).toEqual({ outcome: "skipped", reason: "the function is failed: Lambda said no" });
    const metrics = (await t.call("GET", "/functions/redeploying/metrics")).body;
    expect(metrics).toMatchObject({ total_calls: 0, skipped_scheduled_runs: 2 });
  });

  it("does nothing for a function whose schedule was removed", async () => {
    const fn = await t.deploy("unscheduled", "export default async () => 1;", { schedule: "@daily" });
    await t.call("PATCH", "/functions/unscheduled", { body: { schedule: null } });
    expect((await runScheduled(t.service.deps, fn.function_id, "2026-06-01T00:00:00.000Z")).outcome).toBe("unscheduled");
    expect(await logs("unscheduled")).toEqual([]);
  });

  it("refuses a schedule for a function whose required parameters nothing supplies", async () => {
    const code = "export default async (url: string, n: number = 1) => ({ url, n });";
    const refused = expectError(
      await t.call("POST", "/functions", { body: { name: "needs-url", code, schedule: "@hourly" } }),
      400,
      "invalid_schedule",
    );
    expect(refused.message).toMatch(/url is required/);
    expect((await t.call("GET", "/functions/needs-url/info")).status).toBe(404);
    const ok = await t.call("POST", "/functions", {
      body: { name: "needs-url", code, schedule: "@hourly", schedule_params: { url: "http://127.0.0.1/" } },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.schedule_params).toEqual({ url: "http://127.0.0.1/" });
    expectError(await t.call("PATCH", "/functions/needs-url", { body: { schedule_params: { n: 2 } } }), 400, "invalid_schedule");
    expectError(await t.call("PATCH", "/functions/needs-url", { body: { schedule_params: { url: 5 } } }), 400, "invalid_schedule");
  });
});

describe("the running service's scheduler (real time)", () => {
  it("runs a `* * * * *` schedule at the minute; a schedule removed before it does not fire", async () => {
    // Real timers, a real service and real runs, but the service's clock runs ahead of the
    // machine's so that its next minute is a few seconds away (waiting for the machine's next
    // minute cost this file up to two minutes).
    // 10 s ahead of the minute leaves the start and three requests time to finish first.
    const offsetMs = 60_000 - ((Date.now() + 10_000) % 60_000);
    const clock = { now: () => new Date(Date.now() + offsetMs) };
    const s = await startTestService({ serviceOptions: { clock } });
    try {
      const logsOf = async (name: string) => (await s.call("GET", `/functions/${name}/logs?limit=100`)).body.items;
      await s.deploy("every-minute", "export default async () => new Date().toISOString();", { schedule: "* * * * *" });
      await s.deploy("removed", "export default async () => 1;", { schedule: "* * * * *" });
      const removed = await s.call("PATCH", "/functions/removed", { body: { schedule: null } });
      expect(removed.body).toMatchObject({ schedule: null, next_run_at: null });
      let entries: { trigger: string; timestamp: string; run_id: string }[] = [];
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && entries.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        entries = await logsOf("every-minute");
      }
      expect(entries).toHaveLength(1);
      expect(entries[0]?.trigger).toBe("schedule");
      // Fired within a second of the (service's) minute: the run was created (queued_at) by
      // then; a cold worker start may follow before it runs.
      const fired = (await s.call("GET", `/runs/${entries[0]?.run_id}`)).body;
      const sinceMinute = Date.parse(fired.queued_at) % 60_000;
      expect(sinceMinute).toBeLessThan(1000);

      // The schedule removed before the same minute never fired: the runs of "every-minute"
      // show the minute came, and 2 s past it "removed" has no run.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(await logsOf("removed")).toEqual([]);
      expect(await logsOf("every-minute")).toHaveLength(1);
    } finally {
      await s.destroy();
    }
  }, 150_000);
});
