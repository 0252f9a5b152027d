import { createServer } from "node:net";
import path from "node:path";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import type { LambdaHandler } from "../../lambdas/http/defineRoute";
import type { HttpResult } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { type DynaliteServer, startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient } from "../../lambdas/store/dynamo";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { SERVICE_LAMBDA_ENV } from "../helpers/awsEnv";
import { type StoreProxy, startStoreProxy } from "../helpers/storeProxy";

// #23.12: the route entries as the stack deploys them, each building its deps with its route
// group's factory (lambdas/aws/routeDeps) from the Lambda's environment, serve requests: the
// table is dynalite (AWS_ENDPOINT_URL_DYNAMODB, through a proxy that adds the store's secret),
// and every other AWS endpoint is a closed port on 127.0.0.1, so a route that reached another
// service's client would fail here instead of reaching the internet.

const ENTRIES = path.join(__dirname, "..", "..", "lambdas", "aws", "entries");
// eslint-disable-next-line @typescript-eslint/no-require-imports -- each entry is loaded only once its environment is set
const entry = (name: string): LambdaHandler => (require(path.join(ENTRIES, `${name}.ts`)) as { handler: LambdaHandler }).handler;

const admin = principalContext({ account_id: "acme", plan: "pro", admin: true, key_id: null });
const call = (name: string, event: APIGatewayProxyEventV2): Promise<HttpResult> => entry(name)(event, lambdaContext(name, "req"));
const errorCode = (result: HttpResult) => (JSON.parse(result.body ?? "{}") as { error?: { code?: string } }).error?.code;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the route entries on their groups' deps", () => {
  let dynamo: DynaliteServer;
  let proxy: StoreProxy;
  const saved = { ...process.env };

  beforeAll(async () => {
    dynamo = await startDynalite(null);
    proxy = await startStoreProxy(dynamo);
    const { client } = createDocumentClient({ endpoint: proxy.endpoint, region: "eu-west-1", credentials: { accessKeyId: "x", secretAccessKey: "y" } });
    try {
      await createTablesIfMissing(client, SERVICE_LAMBDA_ENV.BROWSERFN_TABLE_PREFIX ?? "");
    } finally {
      client.destroy();
    }
    Object.assign(process.env, SERVICE_LAMBDA_ENV, {
      AWS_ENDPOINT_URL: `http://127.0.0.1:${await closedPort()}`,
      AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "y",
      AWS_MAX_ATTEMPTS: "1",
    });
  }, 60_000);

  afterAll(async () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
    await proxy.close();
    await dynamo.close();
  });

  it("data: an API key created through one entry is listed by another", async () => {
    const created = await call("createApiKey", apiGatewayEvent(admin, "POST", "/api-keys", { name: "ci" }));
    expect(created.statusCode).toBe(201);
    const listed = await call("listApiKeys", apiGatewayEvent(admin, "GET", "/api-keys", undefined));
    expect(listed.statusCode).toBe(200);
    expect(JSON.stringify(JSON.parse(listed.body ?? "{}"))).toContain('"name":"ci"');
  }, 30_000);

  it("invoke, cancel, artifacts: each builds its clients and answers from the table what the table decides", async () => {
    const invoked = await call("invokePost", apiGatewayEvent(admin, "POST", "/functions/missing", {}, { ref: "missing" }));
    expect([invoked.statusCode, errorCode(invoked)]).toEqual([404, "function_not_found"]);
    const canceled = await call("cancelRun", apiGatewayEvent(admin, "POST", "/runs/run_missing/cancel", undefined, { run_id: "run_missing" }));
    expect([canceled.statusCode, errorCode(canceled)]).toEqual([404, "run_not_found"]);
    const artifact = await call("getArtifact", apiGatewayEvent(admin, "GET", "/runs/run_missing/artifacts/a.png", undefined, { run_id: "run_missing", name: "a.png" }));
    expect([artifact.statusCode, errorCode(artifact)]).toEqual([404, "run_not_found"]);
  }, 30_000);
});
