import { createRouteMatcher } from "../../lambdas/local/routeMatcher";
import { ROUTES } from "../../lambdas/routes/routeTable";
import { openapiDocument } from "../../lambdas/schemas/openapiDocument";

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
    expect(invoke.parameters.filter((p) => p.in === "header").map((p) => p.name)).toEqual(["Idempotency-Key", "Prefer", "X-Function-Version"]);
    const events = doc.paths["/runs/{run_id}/events"]?.get as unknown as { parameters: { name: string; in: string }[]; responses: Record<string, { content?: Record<string, unknown> }> };
    expect(events.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(["path:run_id", "query:last_event_id", "header:Last-Event-ID"]);
    expect(Object.keys(events.responses["200"]?.content ?? {})).toEqual(["text/event-stream"]);
    const text = JSON.stringify(doc);
    for (const ref of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      expect(doc.components.schemas[ref[1] as string]).toBeDefined();
    }
  });
});
