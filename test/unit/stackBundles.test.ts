import { readdirSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { ENTRIES_DIR, HANDLER_EXTERNAL_MODULES, PROJECT_ROOT } from "../../lib/handlerFunction";

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

describe("the handlers' bundles", () => {
  let clients: Map<string, string[]>;
  beforeAll(async () => {
    clients = await clientsByEntry();
    expect([...clients.keys()].sort()).toEqual(ENTRIES);
  }, 300_000);

  it("bundle the pinned AWS SDK: nothing is left to the Lambda runtime", () => {
    expect(HANDLER_EXTERNAL_MODULES).toEqual([]);
    // The SDK is in the bundles themselves (every handler uses DynamoDB, but the cleanup).
    expect(ENTRIES.filter((entry) => (clients.get(entry) ?? []).length === 0)).toEqual([]);
  });

  it("give the authorizer (on every request's first call) and the stack cleanup only the clients they use", () => {
    expect(clients.get("authorizer")).toEqual(["client-dynamodb"]);
    expect(clients.get("stackCleanup")).toEqual(["client-lambda"]);
  });

  it("hold at most the service's seven clients, counted per bundle", () => {
    const all = ["client-dynamodb", "client-kms", "client-lambda", "client-s3", "client-scheduler", "client-sfn", "client-sqs"];
    for (const entry of ENTRIES) for (const client of clients.get(entry) ?? []) expect([entry, all.includes(client)]).toEqual([entry, true]);
    // The count of each, for the record (docs/deploy.md): the routes still build every port (lambdas/aws/awsDeps.ts).
    const counts = Object.fromEntries(ENTRIES.map((entry) => [entry, clients.get(entry)?.length ?? 0]));
    console.log(`AWS SDK clients per bundle: ${JSON.stringify(counts)}`);
  });
});
