import { cancelRun } from "../../lambdas/handlers/cancelRun";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { CANCELED_ERROR } from "../../lambdas/runtime/aws/awsRuntime";
import { STATE_MACHINE_ARN } from "../helpers/awsPipeline";
import { type AwsRunWorld, answerJson, apiEvent, runIdOf, startAwsRunWorld } from "../helpers/awsRunWorld";

// POST /runs/{run_id}/cancel on AWS: the run's workflow is stopped (StopExecution, exactly), the
// run is recorded canceled and whatever its Lambda answers afterwards is discarded; the plan's
// slot stays taken while the Lambda invocation may still run (a Lambda cannot be stopped), and
// frees once the lease expires after the invocation's latest possible end.

const SLOW = 'export default async (ms: number) => { console.log("started"); await new Promise((resolve) => setTimeout(resolve, ms)); console.log("done"); return { slept: ms }; };';

describe("cancel on AWS", () => {
  let world: AwsRunWorld;
  beforeAll(async () => {
    world = await startAwsRunWorld();
    await world.create("acme", "slow", SLOW, { timeout_seconds: 10 });
  }, 60_000);
  afterAll(() => world?.close());

  const cancel = (account: string, runId: string) =>
    cancelRun(world.deps)(apiEvent(account, "POST", `/runs/${runId}/cancel`, undefined, { run_id: runId }), lambdaContext("cancelRun", "req"));

  it("stops the workflow, records the run canceled, discards the later answer, and keeps the slot until the lease expires", async () => {
    const accepted = await world.invoke("acme", "slow", { ms: 2500 });
    expect(accepted.statusCode).toBe(202); // the world's sync window is 1 s
    const runId = runIdOf(accepted);
    // Its Lambda has the run (the record says running once the start is written).
    for (let look = 0; look < 200 && (await world.run(runId))?.status !== "running"; look++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await world.run(runId))?.status).toBe("running");
    expect((await world.inFlight("acme"))).toBe(1);

    // Another account's cancel finds no such run, and stops nothing.
    expect([(await cancel("someone-else", runId)).statusCode, world.pipeline.stepFunctions.stops]).toEqual([404, []]);

    const answer = await cancel("acme", runId);
    expect(answer.statusCode).toBe(200);
    expect(answerJson(answer)).toMatchObject({ run_id: runId, status: "canceled", result: null, error: { code: "run_canceled" } });
    expect(world.pipeline.stepFunctions.stops).toEqual([
      { executionArn: `${STATE_MACHINE_ARN.replace(":stateMachine:", ":execution:")}:${runId}`, error: CANCELED_ERROR, cause: "POST /runs/{run_id}/cancel" },
    ]);
    expect(world.pipeline.stepFunctions.executions.get(runId)?.status).toBe("ABORTED");

    // The Lambda invocation runs on to its end; its answer is dropped, the record stays canceled.
    await world.pipeline.settled();
    const run = await world.run(runId);
    expect(run).toMatchObject({ status: "canceled", result_json: null, error: { code: "run_canceled" } });
    expect(world.pipeline.stepFunctions.executions.get(runId)?.trail).not.toContain("Record");
    expect(await world.metered((await world.pipeline.memory.store.functions.getByName("acme", "slow"))?.function_id ?? "")).toBe(1);

    // Never released early: not by the cancel, the stopped execution's event, nor the answer.
    expect(await world.inFlight("acme")).toBe(1);
    // The lease ends after the invocation's latest possible end (its timeout, Lambda's margin, throttle waits).
    const { inFlight } = await world.pipeline.memory.store.limits.current("acme", new Date(Date.now() + (10 + 5 + 30) * 1000));
    expect(inFlight).toBe(1);
    expect((await world.pipeline.memory.store.limits.current("acme", new Date(Date.now() + 3600_000))).inFlight).toBe(0);

    // Ended: a second cancel is 409 and stops nothing more.
    const again = await cancel("acme", runId);
    expect([again.statusCode, answerJson(again)]).toEqual([409, expect.objectContaining({ error: expect.objectContaining({ code: "run_finished" }) })]);
    expect(world.pipeline.stepFunctions.stops).toHaveLength(1);
  }, 60_000);
});
