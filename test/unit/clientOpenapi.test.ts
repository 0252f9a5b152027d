import { BrowserfnClient } from "../../client";
import { openapiDocument } from "../../lambdas/schemas/openapiDocument";

/**
 * browserfn/client against the OpenAPI document, at run time: every method is called once on a
 * fetch that records the request, and each request must be an operation of the document, with
 * only the query parameters, headers and body that operation declares. The other way round,
 * every operation is one the client calls or one it leaves out on purpose (NOT_IN_CLIENT).
 * test/integration/openapiClient.test.ts checks the types (clientCheck.ts).
 */

interface Parameter {
  name: string;
  in: string;
  style?: string;
  explode?: boolean;
}
interface Operation {
  operationId: string;
  parameters: Parameter[];
  requestBody?: unknown;
}
interface Sent {
  method: string;
  path: string;
  query: string[];
  headers: string[];
  hasBody: boolean;
}

const doc = openapiDocument("http://api.test") as { paths: Record<string, Record<string, Operation>> };

/** Operations the client has no method for, and why. */
const NOT_IN_CLIENT: Record<string, string> = {
  listDeliveries: "webhook deliveries: the dashboard and the CLI read them; a client method can come when a user asks",
  rotateWebhookSecret: "the CLI rotates it; rare, and answered once",
  mcp: "MCP clients speak it (JSON-RPC), not this client",
  getRunLive: "a text/event-stream of JPEG frames for a person to watch: the dashboard shows it; a program reads the run (getRun, or its events stream) instead",
  oauthProtectedResource: "read by MCP clients",
};

/** Headers every request of the client may carry, not parameters of an operation. */
const GENERAL_HEADERS = new Set(["accept", "authorization", "content-type", "x-service-sdk-version", "x-service-request-origin"]);

/** Every public method of the client, called once with arguments that exercise its options. */
const CALLS: Record<string, (client: BrowserfnClient) => Promise<unknown>> = {
  health: (c) => c.health(),
  openapi: (c) => c.openapi(),
  createFunction: (c) => c.createFunction({ name: "f", code: "export default async () => 1" }),
  listFunctions: (c) => c.listFunctions({ limit: 5, cursor: "abc" }),
  allFunctions: async (c) => {
    for await (const item of c.allFunctions(10)) void item;
  },
  getFunction: (c) => c.getFunction("f"),
  getFunctionOpenapi: (c) => c.getFunctionOpenapi("f"),
  updateFunction: (c) => c.updateFunction("f", { description: "d" }),
  waitUntilDeployed: (c) => c.waitUntilDeployed("f"),
  deleteFunction: (c) => c.deleteFunction("f"),
  listVersions: (c) => c.listVersions("f"),
  getVersion: (c) => c.getVersion("f", 2),
  forkFunction: (c) => c.forkFunction("fn_01m82cr6c0qp478pexwcgkn967", { name: "copy" }),
  invoke: async (c) => {
    await c.invoke("f", { a: 1 }, { version: 2 });
    await c.invoke("f", { a: 1 }, { method: "GET" });
  },
  startInvocation: async (c) => {
    await c.startInvocation("f", { a: 1 }, { version: 1 });
    await c.startInvocation("f", { a: 1 }, { method: "GET" });
  },
  startBatch: async (c) => {
    await c.startBatch("f", [{ a: 1 }, { a: 2 }], { version: 1 });
    await c.startBatch("f", [{ a: 1 }], { idempotencyKey: "nightly" });
  },
  getBatch: (c) => c.getBatch("batch_1"),
  listBatchRuns: (c) => c.listBatchRuns("batch_1", { limit: 10, cursor: "abc" }),
  allBatchRuns: async (c) => {
    for await (const run of c.allBatchRuns("batch_1", 10)) void run;
  },
  waitForBatch: (c) => c.waitForBatch("batch_1"),
  getRun: (c) => c.getRun("run_1"),
  listRuns: async (c) => {
    await c.listRuns();
    await c.listRuns({ function: "f", status: "failed", trigger: "batch", limit: 10, cursor: "abc" });
  },
  cancelRun: (c) => c.cancelRun("run_1"),
  runEvents: async (c) => {
    for await (const event of c.runEvents("run_1", { lastEventId: "status:queued" })) void event;
  },
  listArtifacts: (c) => c.listArtifacts("run_1"),
  downloadArtifact: (c) => c.downloadArtifact("run_1", "shot.png"),
  waitForRun: (c) => c.waitForRun("run_1"),
  setSecret: (c) => c.setSecret("f", "API_TOKEN", "v"),
  listSecrets: (c) => c.listSecrets("f"),
  deleteSecret: (c) => c.deleteSecret("f", "API_TOKEN"),
  getLogs: (c) => c.getLogs("f", { limit: 3 }),
  getMetrics: (c) => c.getMetrics("f"),
  getUsage: (c) => c.getUsage({ month: "2026-01" }),
  createApiKey: (c) => c.createApiKey({ name: "k" }),
  listApiKeys: (c) => c.listApiKeys(),
  deleteApiKey: (c) => c.deleteApiKey("key_1"),
  setAccountPlan: (c) => c.setAccountPlan("acme", "pro"),
  listProfiles: (c) => c.listProfiles(),
  getProfile: (c) => c.getProfile("shop-login"),
  deleteProfile: (c) => c.deleteProfile("shop-login"),
};

/** An answer that ends every method at once: a finished run, an empty page, an empty stream. */
function answer(path: string): Response {
  if (path.endsWith("/events")) return new Response(null, { status: 204 });
  if (path.includes("/artifacts/")) return new Response(new Uint8Array([1, 2]), { status: 200, headers: { "content-type": "image/png" } });
  return Response.json({ status: "succeeded", items: [], next_cursor: null });
}

/** The document's operation of a request: its path matched against the templates, segment by segment. */
function operationOf(method: string, path: string): Operation | undefined {
  const segments = path.split("/");
  for (const [template, operations] of Object.entries(doc.paths)) {
    const parts = template.split("/");
    if (parts.length === segments.length && parts.every((part, i) => /^\{\w+\}$/.test(part) || part === segments[i])) {
      const operation = operations[method.toLowerCase()];
      if (operation) return operation;
    }
  }
  return undefined;
}

/** What is wrong with a request, by the document (nothing: []). */
function problems(sent: Sent): string[] {
  const what = `${sent.method} ${sent.path}`;
  const operation = operationOf(sent.method, sent.path);
  if (!operation) return [`${what}: no such operation in the document`];
  const declared = (where: string) => operation.parameters.filter((p) => p.in === where);
  // A free-form query parameter (an invocation's) takes any name.
  const anyQuery = declared("query").some((p) => p.style === "form" && p.explode === true);
  const names = new Set(declared("query").map((p) => p.name));
  const headers = new Set(declared("header").map((p) => p.name.toLowerCase()));
  return [
    ...sent.query.filter((name) => !anyQuery && !names.has(name)).map((name) => `${what}: query parameter ${name} is not declared`),
    ...sent.headers.filter((name) => !GENERAL_HEADERS.has(name) && !headers.has(name)).map((name) => `${what}: header ${name} is not declared`),
    ...(sent.hasBody && !operation.requestBody ? [`${what}: sends a body the operation does not take`] : []),
  ];
}

describe("browserfn/client and the OpenAPI document", () => {
  it("has a call here for every public method of the client", () => {
    const methods = Object.getOwnPropertyNames(BrowserfnClient.prototype).filter((name) => name !== "constructor" && name !== "body");
    expect(Object.keys(CALLS).sort()).toEqual(methods.sort());
  });

  it("sends only requests the document describes, and covers every operation but those left out on purpose", async () => {
    const sent: Sent[] = [];
    const fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
      const url = new URL(String(input));
      sent.push({
        method: init.method ?? "GET",
        path: url.pathname,
        query: [...url.searchParams.keys()],
        headers: Object.keys((init.headers ?? {}) as Record<string, string>).map((name) => name.toLowerCase()),
        hasBody: init.body !== undefined,
      });
      return answer(url.pathname);
    };
    const client = new BrowserfnClient({ baseUrl: "http://api.test", apiKey: "bfn_test", fetch, maxRetries: 0 });
    for (const call of Object.values(CALLS)) await call(client);

    expect(sent.flatMap(problems)).toEqual([]);
    const used = new Set(sent.map((request) => operationOf(request.method, request.path)?.operationId));
    const documented = Object.values(doc.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));
    expect(documented.filter((id) => !used.has(id) && !(id in NOT_IN_CLIENT))).toEqual([]);
    expect(Object.keys(NOT_IN_CLIENT).filter((id) => used.has(id) || !documented.includes(id))).toEqual([]);
  });
});
