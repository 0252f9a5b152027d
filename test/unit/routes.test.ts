import { createRouteMatcher } from "../../lambdas/local/routeMatcher";
import { ROUTES } from "../../lambdas/routes/routeTable";
import { ERROR_STATUS } from "../../lambdas/http/errors";
import { errorCodesOf } from "../../lambdas/schemas/openapiErrors";
import { openapiDocument } from "../../lambdas/schemas/openapiDocument";

interface Answer {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: { $ref?: string } }>;
  $ref?: string;
}
interface Operation {
  operationId: string;
  tags: string[];
  parameters: { name: string; in: string; schema: Record<string, unknown> }[];
  requestBody?: { required: boolean; content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, Answer>;
}

describe("the route table", () => {
  const match = createRouteMatcher(ROUTES);

  it("matches templates, decodes parameters and tells a wrong method from an unknown path", () => {
    const info = match("GET", "/functions/my-fn/info");
    expect(info.kind === "found" && [info.route.operationId, info.params]).toEqual(["getFunctionInfo", { ref: "my-fn" }]);
    const version = match("GET", "/functions/a/versions/2");
    expect(version.kind === "found" && version.params).toEqual({ ref: "a", version: "2" });
    const encoded = match("DELETE", "/api-keys/key%5Fx");
    expect(encoded.kind === "found" && encoded.params).toEqual({ id: "key_x" });
    expect(match("PUT", "/functions/x")).toEqual({ kind: "wrong_method", allowed: ["PATCH", "DELETE", "POST", "GET"] });
    expect(match("GET", "/functions/x/info/more")).toEqual({ kind: "not_found" });
    expect(match("GET", "/functions/")).toEqual({ kind: "not_found" });
  });

  it("has one handler per route and no two routes with the same method and path", () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const route of ROUTES) expect(typeof route.handler).toBe("function");
  });

  it("documents every route in the OpenAPI 3.1 document, with its schemas", () => {
    const doc = openapiDocument("http://example.test") as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string; security: unknown[]; requestBody?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe("3.1.0");
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()];
      if (route.openapi === false) {
        expect(operation).toBeUndefined();
        continue;
      }
      expect(operation?.operationId).toBe(route.operationId);
      expect(operation?.security).toEqual(route.auth ? [{ bearer: [] }] : []);
      expect(Boolean(operation?.requestBody)).toBe(Boolean(route.body));
    }
    expect(ROUTES.filter((route) => route.openapi === false).map((route) => route.path)).toEqual(["/", "/dashboard/{file}"]);
    for (const name of ["FunctionRecord", "CreateFunctionBody", "UpdateFunctionBody", "ParameterInfo", "Error", "CreatedApiKey"]) {
      expect(doc.components.schemas[name]).toBeDefined();
    }
    const invoke = doc.paths["/functions/{ref}"]?.post as unknown as { parameters: { name: string; in: string }[] };
    expect(invoke.parameters.filter((p) => p.in === "header").map((p) => p.name)).toEqual([
      "Idempotency-Key",
      "Prefer",
      "X-Function-Version",
      "x-service-request-origin",
      "x-service-sdk-version",
    ]);
    const events = doc.paths["/runs/{run_id}/events"]?.get as unknown as { parameters: { name: string; in: string }[]; responses: Record<string, { content?: Record<string, unknown> }> };
    expect(events.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(["path:run_id", "query:last_event_id", "header:Last-Event-ID"]);
    expect(Object.keys(events.responses["200"]?.content ?? {})).toEqual(["text/event-stream"]);
    const text = JSON.stringify(doc);
    for (const ref of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      expect(doc.components.schemas[ref[1] as string]).toBeDefined();
    }
  });

  it("answers every operation with its success, its other answers and each of its errors, in the one error shape", () => {
    const doc = openapiDocument("http://example.test") as { tags: { name: string }[]; paths: Record<string, Record<string, Operation>> };
    const tags = doc.tags.map((tag) => tag.name);
    for (const route of ROUTES.filter((r) => r.openapi !== false)) {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()] as Operation;
      expect(operation.tags).toEqual([route.tag]);
      expect(tags).toContain(route.tag);
      const success = operation.responses[String(route.status)];
      expect(success?.headers).toHaveProperty("X-Request-Id");
      expect(Boolean(success?.content)).toBe(route.status !== 204);
      expect(operation.responses["4XX"]).toEqual({ $ref: "#/components/responses/RequestRefused" });
      for (const code of errorCodesOf(route)) {
        const answer = operation.responses[String(ERROR_STATUS[code])];
        const own = route.otherResponses?.some((other) => other.status === ERROR_STATUS[code]);
        if (own) continue; // the MCP transport's JSON-RPC errors
        expect([route.operationId, answer?.description]).toEqual([route.operationId, expect.stringContaining(code)]);
        expect(answer?.content?.["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/Error" });
        if (ERROR_STATUS[code] === 429 || ERROR_STATUS[code] === 503) expect(answer?.headers).toHaveProperty("Retry-After");
      }
      expect(operation.responses["500"]).toBeDefined();
      if (route.auth) expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["401", "429", "503"]));
    }
    const op = (path: string, method: string) => doc.paths[path]?.[method] as Operation;
    for (const method of ["post", "get"]) {
      const invoke = op("/functions/{ref}", method);
      expect(Object.keys(invoke.responses["200"]?.headers ?? {})).toEqual(["X-Request-Id", "X-Run-Id", "X-Function-Version", "X-Duration-Ms", "Idempotent-Replayed"]);
      expect(invoke.responses["202"]?.content?.["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/AcceptedRun" });
      expect(invoke.responses["202"]?.headers).toHaveProperty("Location");
      for (const status of ["400", "404", "409", "422", "429", "500", "504"]) expect(invoke.responses[status]).toBeDefined();
      expect(invoke.responses["500"]?.headers).toHaveProperty("X-Run-Id");
    }
    expect(op("/functions/{ref}", "post").requestBody).toEqual({ required: false, content: { "application/json": { schema: { $ref: "#/components/schemas/InvokeParameters" } } } });
    expect(op("/functions", "post").requestBody?.required).toBe(true);
    expect(op("/functions", "post").responses["201"]?.headers).toHaveProperty("Location");
    expect(op("/runs/{run_id}/artifacts/{name}", "get").responses["302"]?.headers).toHaveProperty("Location");
    expect(op("/runs/{run_id}/events", "get").responses["204"]).toBeDefined();
    expect(op("/mcp", "post").responses["401"]?.headers).toHaveProperty("WWW-Authenticate");
    const query = (path: string) => Object.fromEntries(op(path, "get").parameters.filter((p) => p.in === "query").map((p) => [p.name, p.schema]));
    expect(query("/functions").limit).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 50 });
    expect(query("/functions/{ref}/logs").limit).toEqual({ type: "integer", minimum: 1, maximum: 1000, default: 50 });
    expect(query("/functions/{ref}/deliveries").limit).toEqual({ type: "integer", minimum: 1, maximum: 500, default: 50 });
    expect(query("/usage").month).toEqual({ type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$" });
    expect(op("/health", "get").responses["200"]?.content?.["application/json"]?.schema).toEqual({ $ref: "#/components/schemas/Health" });
  });
});
