import type { CfnFunction, IFunction } from "aws-cdk-lib/aws-lambda";
import { z } from "zod";
import type { RouteSpec } from "../lambdas/routes/routeSpecs";

/**
 * Reserved concurrency of each of the stack's own Lambdas (docs/deploy.md, "Concurrency plan").
 * A reservation is a floor and a ceiling at once: a control-plane Lambda keeps its share however
 * many function Lambdas and waiting invocations run, and the routes that hold a caller while a run
 * goes (invocations, MCP, event long-polls) cannot take the account's whole pool from the runs.
 * Function Lambdas (the runs) use the unreserved rest, which Lambda keeps at 100 or more.
 */
export interface ConcurrencyPlan {
  authorizer: number;
  runRecorder: number;
  runSweeper: number;
  deployJob: number;
  scheduledRun: number;
  webhookDelivery: number;
  routeNotFound: number;
  /** Each route that waits for a run: POST/GET /functions/{name}, POST /mcp, GET /runs/{id}/events. */
  waitingRoute: number;
  /** Each other route. */
  route: number;
  /** Counts of single routes by operationId, over `waitingRoute` and `route` (e.g. `{"invokePost": 1000}`). */
  routes: Record<string, number>;
}

/**
 * The default: 425 reserved with the stack's 38 routes, which leaves 575 of an account at
 * Lambda's default quota (1,000) to the runs. docs/deploy.md says what to raise for more.
 */
export const DEFAULT_CONCURRENCY_PLAN: ConcurrencyPlan = {
  authorizer: 50,
  runRecorder: 50,
  runSweeper: 1,
  deployJob: 5,
  scheduledRun: 10,
  webhookDelivery: 5,
  routeNotFound: 2,
  waitingRoute: 50,
  route: 3,
  routes: {},
};

/** The routes whose handler holds the caller while a run goes. */
export const WAITING_ROUTES: ReadonlySet<string> = new Set(["invokePost", "invokeGet", "mcp", "getRunEvents"]);

const count = z.coerce.number().int().min(1).max(10_000);

/** The `reservedConcurrency` setting: `off` (no reservations: an account whose quota is too small for any), or counts over the default plan. */
export const ConcurrencySettingSchema = z.union([
  z.literal("off"),
  z
    .object({
      authorizer: count,
      runRecorder: count,
      runSweeper: count,
      deployJob: count,
      scheduledRun: count,
      webhookDelivery: count,
      routeNotFound: count,
      waitingRoute: count,
      route: count,
      routes: z.record(z.string().regex(/^[A-Za-z]+$/), count),
    })
    .partial()
    .strict()
    .transform((given): ConcurrencyPlan => ({ ...DEFAULT_CONCURRENCY_PLAN, ...given })),
]);

export type ConcurrencySetting = ConcurrencyPlan | "off";

/** The stack's own Lambdas, as the Handlers construct has them. */
export interface OwnLambdas {
  routes: readonly { spec: RouteSpec; handler: IFunction }[];
  authorizer: IFunction;
  routeNotFound: IFunction;
  scheduledRun: IFunction;
  runRecorder: IFunction;
  runSweeper: IFunction;
  deployJob: IFunction;
  webhookDelivery: IFunction;
}

/** Sets each Lambda's reserved concurrency from the plan; gives the total reserved (0 when `off`). */
export function applyConcurrencyPlan(lambdas: OwnLambdas, setting: ConcurrencySetting): number {
  if (setting === "off") return 0;
  const reservations: [IFunction, number][] = [
    [lambdas.authorizer, setting.authorizer],
    [lambdas.routeNotFound, setting.routeNotFound],
    [lambdas.scheduledRun, setting.scheduledRun],
    [lambdas.runRecorder, setting.runRecorder],
    [lambdas.runSweeper, setting.runSweeper],
    [lambdas.deployJob, setting.deployJob],
    [lambdas.webhookDelivery, setting.webhookDelivery],
    ...lambdas.routes.map(({ spec, handler }): [IFunction, number] => [
      handler,
      setting.routes[spec.operationId] ?? (WAITING_ROUTES.has(spec.operationId) ? setting.waitingRoute : setting.route),
    ]),
  ];
  const unknown = Object.keys(setting.routes).filter((id) => !lambdas.routes.some(({ spec }) => spec.operationId === id));
  if (unknown.length > 0) throw new Error(`reservedConcurrency.routes names no route: ${unknown.join(", ")}`);
  for (const [fn, reserved] of reservations) {
    (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = reserved;
  }
  return reservations.reduce((sum, [, reserved]) => sum + reserved, 0);
}
