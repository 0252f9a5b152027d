import { DEFAULT_CONCURRENCY_PLAN, WAITING_ROUTES } from "../../lib/concurrencyPlan";
import { handlerFunctionNames } from "../../lib/handlerGrants";
import { ROUTE_SPECS } from "../../lambdas/routes/routeSpecs";
import { synthStack } from "../helpers/testStack";

// #23.1: the control plane keeps reserved concurrency. Every Lambda of the stack has its own
// reservation (a floor and a ceiling), the routes that hold a caller while a run goes have a
// ceiling of their own, and together they leave the runs more than half of an account at
// Lambda's default quota (1,000), and Lambda's required 100 unreserved.

type Resources = Record<string, { Properties: { FunctionName?: unknown; ReservedConcurrentExecutions?: unknown } }>;

function ownLambdas(resources: Resources): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const { Properties } of Object.values(resources)) {
    if (typeof Properties.FunctionName === "string" && Properties.FunctionName.startsWith("bfn-test-")) found.set(Properties.FunctionName, Properties.ReservedConcurrentExecutions);
  }
  return found;
}

describe("reserved concurrency of the stack's own Lambdas", () => {
  it("reserves for each of them by the default plan, and leaves the runs most of a default account", () => {
    const lambdas = ownLambdas(synthStack().findResources("AWS::Lambda::Function") as Resources);
    const names = handlerFunctionNames("bfn-test");
    expect(lambdas.size).toBe(ROUTE_SPECS.length + 10);
    expect(lambdas.get(names.stackCleanup)).toBe(1);
    expect(lambdas.get(names.runnerRollout)).toBe(1);
    expect(lambdas.get(names.runnerRolloutTrigger)).toBe(1);
    expect(lambdas.get(names.authorizer)).toBe(DEFAULT_CONCURRENCY_PLAN.authorizer);
    expect(lambdas.get(names.runRecorder)).toBe(DEFAULT_CONCURRENCY_PLAN.runRecorder);
    expect(lambdas.get(names.runSweeper)).toBe(DEFAULT_CONCURRENCY_PLAN.runSweeper);
    expect(lambdas.get(names.deployJob)).toBe(DEFAULT_CONCURRENCY_PLAN.deployJob);
    expect(lambdas.get(names.scheduledRun)).toBe(DEFAULT_CONCURRENCY_PLAN.scheduledRun);
    for (const spec of ROUTE_SPECS) {
      expect([spec.operationId, lambdas.get(names.route(spec))]).toEqual([spec.operationId, WAITING_ROUTES.has(spec.operationId) ? DEFAULT_CONCURRENCY_PLAN.waitingRoute : DEFAULT_CONCURRENCY_PLAN.route]);
    }
    const reserved = [...lambdas.values()].reduce<number>((sum, value) => sum + Number(value), 0);
    expect([...lambdas.values()].every((value) => typeof value === "number" && value >= 1)).toBe(true);
    expect(reserved).toBe(440);
    expect(1000 - reserved).toBeGreaterThan(500);
  });

  it("takes counts over the default from the context, and none with `off`", () => {
    const names = handlerFunctionNames("bfn-test");
    const raised = ownLambdas(synthStack({}, { reservedConcurrency: '{"authorizer":200,"waitingRoute":400,"routes":{"getRun":20}}' }).findResources("AWS::Lambda::Function") as Resources);
    const getRun = ROUTE_SPECS.find((spec) => spec.operationId === "getRun");
    expect(getRun && raised.get(names.route(getRun))).toBe(20);
    expect(raised.get(names.authorizer)).toBe(200);
    expect(raised.get(names.runRecorder)).toBe(DEFAULT_CONCURRENCY_PLAN.runRecorder);
    const invoke = ROUTE_SPECS.find((spec) => spec.operationId === "invokePost");
    expect(invoke && raised.get(names.route(invoke))).toBe(400);
    const off = ownLambdas(synthStack({}, { reservedConcurrency: "off" }).findResources("AWS::Lambda::Function") as Resources);
    expect([...off.values()].every((value) => value === undefined)).toBe(true);
    expect(() => synthStack({}, { reservedConcurrency: '{"authorizer":0}' })).toThrow(/reservedConcurrency/);
    expect(() => synthStack({}, { reservedConcurrency: '{"nobody":3}' })).toThrow(/reservedConcurrency/);
    expect(() => synthStack({}, { reservedConcurrency: '{"routes":{"noSuchRoute":3}}' })).toThrow(/reservedConcurrency.routes names no route: noSuchRoute/);
  });
});
