import { newDeployId } from "../../lambdas/functions/ids";
import { STALE_DEPLOY_MS } from "../../lambdas/functions/startDeploy";
import { recordFailedDeployJob } from "../../lambdas/runtime/aws/deployJobs";
import { failStuckDeploys } from "../../lambdas/runtime/aws/stuckDeploys";
import type { FunctionItem } from "../../lambdas/functions/types";
import { type MemoryStore, startMemoryStore } from "../helpers/memoryStore";
import { functionItem } from "../helpers/records";

// The two writers that end a lost deploy on AWS (the sweeper's stuck-deploy pass, a deploy job's
// failure event) end only a deploy that is still going: never one that finished meanwhile, nor
// a newer one.
let memory: MemoryStore;
beforeAll(async () => {
  memory = await startMemoryStore();
});
afterAll(() => memory?.close());

const log = () => undefined;
const LONG_AGO = "2026-01-01T00:00:00.000Z";

async function deploying(name: string, deployId: string | undefined): Promise<FunctionItem> {
  const base = functionItem({ name, function_id: `fn_0000000000000000000000${name.length.toString().padStart(4, "0")}`, status: "deploying", updated_at: LONG_AGO });
  const fn: FunctionItem = deployId === undefined ? base : { ...base, deploy_id: deployId };
  expect(await memory.store.functions.create(fn)).toBe(true);
  return (await memory.store.functions.getByName(fn.account_id, fn.name)) as FunctionItem;
}

it("the sweeper leaves a deploy that finished after it read the record as it ended", async () => {
  const stale = await deploying("finished", newDeployId());
  // The deploy job records `active` between the sweeper's read of the index and its write.
  expect(await memory.store.functions.setStatus(stale, "active", null)).toMatchObject({ status: "active" });
  const reading = { listDeployingSince: async () => [stale], setStatus: memory.store.functions.setStatus.bind(memory.store.functions) };
  const now = new Date(Date.parse(LONG_AGO) + STALE_DEPLOY_MS + 60_000);
  expect(await failStuckDeploys({ store: { functions: reading as unknown as MemoryStore["store"]["functions"] }, log }, now)).toBe(0);
  expect(await memory.store.functions.getByName(stale.account_id, "finished")).toMatchObject({ status: "active", status_reason: null });
});

it("a failure event that names no deploy does not end a deploy that has an id", async () => {
  const fn = await deploying("newer-deploy", newDeployId());
  const event = { kind: "deploy", account_id: fn.account_id, function_id: fn.function_id, name: fn.name, version: fn.latest_version };
  expect(await recordFailedDeployJob({ store: memory.store, log }, event, "timed out")).toBe("ignored");
  expect(await memory.store.functions.getByName(fn.account_id, fn.name)).toMatchObject({ status: "deploying" });
  // Its own job's failure does.
  expect(await recordFailedDeployJob({ store: memory.store, log }, { ...event, deploy_id: fn.deploy_id }, "timed out")).toBe("failed");
  expect(await memory.store.functions.getByName(fn.account_id, fn.name)).toMatchObject({ status: "failed" });
});
