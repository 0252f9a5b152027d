import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import path from "node:path";
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import { lazyAuthorizer, makeAuthorizer } from "../../lambdas/aws/authorizer";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import { AWS_ENV, readAwsEnv, readIdentityEnv } from "../../lambdas/aws/awsConfig";
import { SERVICE_LAMBDA_ENV } from "../helpers/awsEnv";
import { lazyRoute, once } from "../../lambdas/aws/lazyHandlers";
import { makeRouteNotFound } from "../../lambdas/aws/routeNotFound";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import type { Deps } from "../../lambdas/deps";
import { listApiKeys } from "../../lambdas/handlers/listApiKeys";
import { createIdentity } from "../../lambdas/identity/identity";
import { issueApiKey } from "../../lambdas/identity/issueApiKey";
import { ApiError } from "../../lambdas/http/errors";
import type { HttpResult } from "../../lambdas/http/response";
import { ROUTES } from "../../lambdas/routes/routeTable";
import { routeGroupOf } from "../../lib/routeRoles";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient } from "../../lambdas/store/dynamo";
import { createStore, type Store } from "../../lambdas/store/store";
import { startMemoryStore } from "../helpers/memoryStore";
import { startStoreProxy } from "../helpers/storeProxy";

const ENTRIES = path.join(__dirname, "..", "..", "lambdas", "aws", "entries");

function apiEvent(method: string, rawPath: string, extra: { headers?: Record<string, string>; authorizer?: Record<string, unknown>; stage?: string } = {}) {
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath,
    rawQueryString: "",
    headers: extra.headers ?? {},
    isBase64Encoded: false,
    requestContext: {
      accountId: "123456789012",
      apiId: "api",
      domainName: "api.execute-api.eu-west-1.amazonaws.com",
      domainPrefix: "api",
      http: { method, path: rawPath, protocol: "HTTP/1.1", sourceIp: "203.0.113.1", userAgent: "test" },
      requestId: "req-1",
      routeKey: "$default",
      stage: extra.stage ?? "$default",
      time: "",
      timeEpoch: 0,
      ...(extra.authorizer ? { authorizer: { lambda: extra.authorizer } } : {}),
    },
  } as APIGatewayProxyEventV2;
}

const authorizerEvent = (authorization?: string) =>
  ({ type: "REQUEST", headers: authorization ? { authorization } : {}, requestContext: { requestId: "req-1" } }) as unknown as APIGatewayRequestAuthorizerEventV2;

const body = (result: HttpResult) => JSON.parse(result.body ?? "null") as { error?: { code: string; message: string } } & Record<string, unknown>;

describe("the Lambda entries", () => {
  it("has one entry per route of the route table, each bundling only its own handler", () => {
    for (const route of ROUTES) {
      const file = path.join(ENTRIES, `${route.operationId}.ts`);
      expect(existsSync(file)).toBe(true);
      const source = readFileSync(file, "utf8");
      // Built by its route group's deps factory (lambdas/aws/routeDeps): the bundle holds only that group's clients (#23.12).
      const factory = route.auth ? `${routeGroupOf(route)}RouteDeps` : "openRouteDeps";
      expect(source).toContain(`export const handler = lazyRoute(${route.operationId}, ${factory});`);
      expect(source).not.toMatch(/routeTable|HANDLERS/);
    }
    for (const name of ["authorizer", "scheduledRun", "routeNotFound", "runRecorder", "runSweeper"]) expect(existsSync(path.join(ENTRIES, `${name}.ts`))).toBe(true);
  });

  it("build nothing at import: an entry loads without any environment", () => {
    const saved = process.env[AWS_ENV.tablePrefix];
    delete process.env[AWS_ENV.tablePrefix];
    try {
      for (const name of ["health", "invokePost", "authorizer", "scheduledRun", "runRecorder", "runSweeper"]) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        expect(typeof require(path.join(ENTRIES, `${name}.ts`)).handler).toBe("function");
      }
    } finally {
      if (saved !== undefined) process.env[AWS_ENV.tablePrefix] = saved;
    }
  });
});

describe("the Lambda environment", () => {
  const env = SERVICE_LAMBDA_ENV;

  it("parses into typed settings with defaults", () => {
    const config = readAwsEnv(env);
    expect(config).toMatchObject({ region: "eu-west-1", tablePrefix: "bfn", syncWaitSeconds: 25, runRetentionDays: 30, oauth: null, publicUrl: null });
    expect(config.runtime.layerArns).toHaveLength(2);
    expect(config.runtime).toMatchObject({ stateMachineArn: "arn:aws:states:eu-west-1:123456789012:stateMachine:bfn-runs", runBucket: "bfn-run-bucket" });
    expect(config.schedules).toMatchObject({ groupName: "bfn", namePrefix: "" });
  });

  it("fails naming every bad or missing variable, and OAuth settings come all together", () => {
    expect(() => readAwsEnv({ ...env, [AWS_ENV.plans]: "{", [AWS_ENV.executionRoleArn]: "role" })).toThrow(
      /BROWSERFN_PLANS: not a JSON object of plans[\s\S]*BROWSERFN_EXECUTION_ROLE_ARN: must be an ARN/,
    );
    expect(() => readIdentityEnv({ AWS_REGION: "eu-west-1" })).toThrow(/BROWSERFN_TABLE_PREFIX/);
    expect(() => readIdentityEnv({ ...env, [AWS_ENV.oauthIssuer]: "https://issuer.example" })).toThrow(/or none/);
  });
});

describe("the authorizer and the route handlers behind it", () => {
  let memory: { store: Store; close(): Promise<void> };
  let key: string;
  beforeAll(async () => {
    memory = await startMemoryStore();
    ({ key } = await issueApiKey(memory.store.accounts, { account_id: "acme", plan: "pro", admin: false, name: "k", now: new Date() }));
  });
  afterAll(() => memory.close());

  const depsWithoutIdentity = (): Deps =>
    ({
      store: memory.store,
      identity: {
        authenticate: () => Promise.reject(new Error("behind the authorizer, the handler must not check the token again")),
        forget: () => undefined,
      },
      config: { plans: DEFAULT_PLANS, publicUrl: null, syncWaitSeconds: 25, maxBodyBytes: MAX_BODY_BYTES },
      log: () => undefined,
    }) as unknown as Deps;

  it("always allows, passing the principal or the error, which the handler answers in the API's shape", async () => {
    const authorizer = makeAuthorizer({ identity: createIdentity(memory.store.accounts), log: () => undefined });
    const handler = listApiKeys(depsWithoutIdentity());
    const call = async (authorization?: string) => {
      const verdict = await authorizer(authorizerEvent(authorization));
      expect(verdict.isAuthorized).toBe(true);
      return handler(apiEvent("GET", "/api-keys", { authorizer: verdict.context }), lambdaContext("listApiKeys", "req-1"));
    };

    const ok = await call(`Bearer ${key}`);
    expect(ok.statusCode).toBe(200);
    expect((body(ok).items as unknown[]).length).toBe(1);

    const missing = await call(undefined);
    expect([missing.statusCode, body(missing).error?.code]).toEqual([401, "missing_token"]);
    const wrong = await call("Bearer bfn_not-a-real-key-0000000000000000");
    expect([wrong.statusCode, body(wrong).error?.code]).toEqual([401, "invalid_token"]);
  });

  it("answers from the Authorization header alone, so API Gateway's cache by that header mixes no callers", async () => {
    const authorizer = makeAuthorizer({ identity: createIdentity(memory.store.accounts), log: () => undefined });
    const event = (authorization: string, requestId: string, path: string) =>
      ({
        type: "REQUEST",
        routeKey: `GET ${path}`,
        rawPath: path,
        headers: { authorization, "user-agent": requestId, "x-forwarded-for": "203.0.113.9" },
        queryStringParameters: { run: requestId },
        requestContext: { requestId },
      }) as unknown as APIGatewayRequestAuthorizerEventV2;
    const first = await authorizer(event(`Bearer ${key}`, "req-1", "/api-keys"));
    expect(await authorizer(event(`Bearer ${key}`, "req-2", "/functions"))).toEqual(first);
    expect(first.context).toEqual({ account_id: "acme", plan: "pro", admin: false, key_id: expect.any(String) });
    const refused = await authorizer(event("Bearer bfn_not-a-real-key-0000000000000000", "req-3", "/usage"));
    expect(refused.context).toEqual({ error_code: "invalid_token", error_message: "The API key is not valid (unknown or deleted)" });
  });

  it("throws, so that API Gateway caches nothing, when it cannot reach a verdict; the handler keeps retry hints", async () => {
    const handler = listApiKeys(depsWithoutIdentity());
    const unavailable = await handler(
      apiEvent("GET", "/api-keys", { authorizer: { error_code: "service_unavailable", error_message: "JWKS down", error_retry_after: "5" } }),
      lambdaContext("listApiKeys", "req-1"),
    );
    expect([unavailable.statusCode, unavailable.headers?.["retry-after"]]).toEqual([503, "5"]);
    const logged: string[] = [];
    const failing = (error: Error) =>
      makeAuthorizer({ identity: { authenticate: () => Promise.reject(error), forget: () => undefined }, log: (line) => logged.push(line) });
    await expect(failing(new Error("DynamoDB is down"))(authorizerEvent("Bearer bfn_x"))).rejects.toThrow(/could not be checked/);
    const jwks = new ApiError("service_unavailable", "JWKS down", {}, { "retry-after": "5" });
    await expect(failing(jwks)(authorizerEvent("Bearer eyJ.x.y"))).rejects.toThrow(/could not be checked/);
    expect(logged).toEqual([expect.stringMatching(/^\[req-1\] authorizer error: .*DynamoDB is down/), expect.stringMatching(/^\[req-1\] authorizer error: .*JWKS down/)]);
    expect(logged.join("\n")).not.toContain("bfn_x");

    const errorLog = jest.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      let builds = 0;
      const lazy = lazyAuthorizer(() => {
        builds += 1;
        throw new Error("Invalid Lambda environment: BROWSERFN_TABLE_PREFIX missing");
      });
      await expect(lazy(authorizerEvent("Bearer bfn_x"))).rejects.toThrow(/could not start/);
      await expect(lazy(authorizerEvent("Bearer bfn_x"))).rejects.toThrow(/could not start/);
      expect(builds).toBe(2);
      expect(errorLog).toHaveBeenCalledWith(expect.stringContaining("BROWSERFN_TABLE_PREFIX"));
    } finally {
      errorLog.mockRestore();
    }
    const principal = principalContext({ account_id: "acme", plan: "pro", admin: true, key_id: null });
    expect(principal).toEqual({ account_id: "acme", plan: "pro", admin: true, key_id: "" });
  });
});

describe("lazy handlers", () => {
  it("build deps on the first request, answer a failed build as internal_error, and try again next time", async () => {
    let builds = 0;
    const handler = lazyRoute(listApiKeys, () => {
      builds += 1;
      throw new Error("Invalid Lambda environment: BROWSERFN_TABLE_PREFIX missing");
    });
    expect(builds).toBe(0);
    const errorLog = jest.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const first = await handler(apiEvent("GET", "/api-keys"), lambdaContext("listApiKeys", "req-1"));
      expect([first.statusCode, body(first).error?.code]).toEqual([500, "internal_error"]);
      await handler(apiEvent("GET", "/api-keys"), lambdaContext("listApiKeys", "req-2"));
      expect(builds).toBe(2);
      expect(errorLog).toHaveBeenCalledWith(expect.stringContaining("BROWSERFN_TABLE_PREFIX"));
    } finally {
      errorLog.mockRestore();
    }
  });

  it("share one build between concurrent first calls", async () => {
    let builds = 0;
    const get = once(async () => ++builds);
    expect(await Promise.all([get(), get(), get()])).toEqual([1, 1, 1]);
  });
});

describe("the $default route", () => {
  const notFound = makeRouteNotFound();

  it("answers 404 route_not_found and 405 method_not_allowed like the local server", async () => {
    const missing = await notFound(apiEvent("GET", "/nope"));
    expect([missing.statusCode, body(missing).error?.code]).toEqual([404, "route_not_found"]);
    const wrongMethod = await notFound(apiEvent("PUT", "/v1/functions/x", { stage: "v1" }));
    expect([wrongMethod.statusCode, body(wrongMethod).error?.code]).toEqual([405, "method_not_allowed"]);
    expect(wrongMethod.headers?.allow).toContain("PATCH");
  });
});

describe("bin/create-admin-key.ts", () => {
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    promisify(execFile)(path.join(__dirname, "..", "..", "node_modules", ".bin", "tsx"), ["bin/create-admin-key.ts", ...args], {
      cwd: path.join(__dirname, "..", ".."),
      env: { ...process.env, ...env },
    });

  it("stores an admin key in the deployment's table and prints it once", async () => {
    const dynamo = await startDynalite(null);
    // The script's client is configured by its environment, as on AWS: the proxy adds the store's secret.
    const proxy = await startStoreProxy(dynamo);
    const { client, doc } = createDocumentClient({ endpoint: proxy.endpoint, region: "eu-west-1", credentials: { accessKeyId: "x", secretAccessKey: "y" } });
    try {
      await createTablesIfMissing(client, "bfn");
      const env = { AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint, AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y" };
      const { stdout, stderr } = await run(["--table-prefix", "bfn", "--region", "eu-west-1", "--account", "ops"], env);
      const key = stdout.trim();
      expect(key).toMatch(/^bfn_/);
      expect(stderr).not.toContain(key);
      const principal = await createIdentity(createStore(doc, "bfn").accounts).authenticate(`Bearer ${key}`);
      expect(principal).toMatchObject({ account_id: "ops", plan: "pro", admin: true });
      await expect(run(["--region", "eu-west-1"], env)).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("--table-prefix is required") });
    } finally {
      client.destroy();
      await proxy.close();
      await dynamo.close();
    }
  });
});
