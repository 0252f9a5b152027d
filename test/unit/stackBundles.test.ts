import { readdirSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { ENTRIES_DIR, HANDLER_EXTERNAL_MODULES, PROJECT_ROOT } from "../../lib/handlerFunction";
import { routeGroupOf, type RouteGroup } from "../../lib/routeRoles";
import { ROUTES } from "../../lambdas/routes/routeTable";

// The AWS SDK clients in each handler's bundle (#23.12), from esbuild's own account of what it
// bundled (its metafile), with the stack's bundling options: the SDK is bundled (the pinned one,
// not the Lambda runtime's), and a bundle holds the clients its entry's imports reach.

const ENTRIES = readdirSync(ENTRIES_DIR).filter((file) => file.endsWith(".ts")).map((file) => file.slice(0, -3)).sort();

/** One esbuild run over every entry (parsed once): each output's inputs are its bundle's modules. */
async function clientsByEntry(): Promise<Map<string, string[]>> {
  const result = await build({
    entryPoints: Object.fromEntries(ENTRIES.map((entry) => [entry, path.join(ENTRIES_DIR, `${entry}.ts`)])),
    absWorkingDir: PROJECT_ROOT,
    outdir: path.join(PROJECT_ROOT, "cdk.out", "bundle-count"),
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    target: "node22",
    mainFields: ["module", "main"],
    external: [...HANDLER_EXTERNAL_MODULES],
    logLevel: "silent",
  });
  const byEntry = new Map<string, string[]>();
  for (const output of Object.values(result.metafile.outputs)) {
    if (!output.entryPoint) continue;
    const clients = new Set<string>();
    for (const input of Object.keys(output.inputs)) {
      const match = /node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\//.exec(input);
      if (match?.[1]) clients.add(match[1]);
    }
    byEntry.set(path.basename(output.entryPoint, ".ts"), [...clients].sort());
  }
  return byEntry;
}

const DYNAMODB = "client-dynamodb";
const KMS = "client-kms";
const LAMBDA = "client-lambda";
const S3 = "client-s3";
const SCHEDULER = "client-scheduler";
const SFN = "client-sfn";
const SQS = "client-sqs";

/** The clients each route group's deps factory builds (lambdas/aws/routeDeps/), as its role's grants say (lib/routeRoles.ts). */
const ROUTE_GROUP_CLIENTS: Record<RouteGroup | "open", string[]> = {
  // Starts runs (StartExecution), presigns their uploads and profiles (S3), seals secrets (KMS), webhooks and wait queues (SQS).
  invoke: [DYNAMODB, KMS, S3, SFN, SQS],
  cancel: [DYNAMODB, SFN, SQS],
  // Deploys, deletes and quotas (Lambda), schedules, webhook signing secrets.
  functions: [DYNAMODB, KMS, LAMBDA, SCHEDULER],
  secrets: [DYNAMODB, KMS],
  artifacts: [DYNAMODB, S3],
  profiles: [DYNAMODB, S3],
  live: [DYNAMODB, S3],
  data: [DYNAMODB],
  open: [DYNAMODB],
};

/** The other Lambdas' clients. */
const OTHER_CLIENTS: Record<string, string[]> = {
  authorizer: [DYNAMODB],
  // No client is built: the route table's modules reach lib-dynamodb's command classes (which import the client's).
  routeNotFound: [DYNAMODB],
  scheduledRun: ROUTE_GROUP_CLIENTS.invoke,
  deployJob: [DYNAMODB, LAMBDA],
  runRecorder: [DYNAMODB, KMS, S3, SFN, SQS],
  runSweeper: [DYNAMODB, KMS, S3, SFN, SQS],
  webhookDelivery: [DYNAMODB, KMS, SQS],
  runnerRollout: [DYNAMODB, LAMBDA],
  runnerRolloutTrigger: [LAMBDA],
  stackCleanup: [LAMBDA],
};

/** Each entry's expected clients: a route's by its group, the others' by name. */
function expectedClients(): Map<string, string[]> {
  const expected = new Map<string, string[]>(Object.entries(OTHER_CLIENTS));
  for (const route of ROUTES) expected.set(route.operationId, ROUTE_GROUP_CLIENTS[route.auth ? routeGroupOf(route) : "open"]);
  return expected;
}

describe("the handlers' bundles", () => {
  let clients: Map<string, string[]>;
  beforeAll(async () => {
    clients = await clientsByEntry();
    expect([...clients.keys()].sort()).toEqual(ENTRIES);
  }, 300_000);

  it("bundle the pinned AWS SDK: nothing is left to the Lambda runtime", () => {
    expect(HANDLER_EXTERNAL_MODULES).toEqual([]);
    // The SDK is in the bundles themselves.
    expect(ENTRIES.filter((entry) => (clients.get(entry) ?? []).length === 0)).toEqual([]);
  });

  it("hold exactly the clients their Lambda uses, entry by entry (#23.12)", () => {
    const expected = expectedClients();
    expect([...expected.keys()].sort()).toEqual(ENTRIES);
    const counts = Object.fromEntries(ENTRIES.map((entry) => [entry, clients.get(entry)?.length ?? 0]));
    console.log(`AWS SDK clients per bundle: ${JSON.stringify(counts)}`);
    for (const entry of ENTRIES) expect([entry, clients.get(entry)]).toEqual([entry, [...(expected.get(entry) ?? [])].sort()]);
  });
});
