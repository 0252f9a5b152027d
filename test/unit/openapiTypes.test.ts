import { NAME_PATTERN } from "../../lambdas/schemas/functionSchemas";
import { openapiDocument } from "../../lambdas/schemas/openapiDocument";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const doc = openapiDocument("http://api.test") as Json;
const schemas = doc.components.schemas as Record<string, Json>;

/** A property's schema without its `null` member (`anyOf: [T, {type: null}]` → T). */
function nonNull(schema: Json): Json {
  const members = (schema.anyOf as Json[] | undefined)?.filter((member) => member.type !== "null");
  return members?.length === 1 && members[0] ? members[0] : schema;
}

/** Every `component.property` whose name says it is a point in time: `…_at` or `timestamp`. */
function timestampProperties(): [string, Json][] {
  const found: [string, Json][] = [];
  const walk = (where: string, schema: Json) => {
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
      if (/_at$|^timestamp$/.test(name)) found.push([`${where}.${name}`, property]);
      walk(`${where}.${name}`, nonNull(property));
      if (property.items) walk(`${where}.${name}[]`, property.items as Json);
    }
  };
  for (const [id, schema] of Object.entries(schemas)) walk(id, schema);
  return found;
}

describe("the types of the OpenAPI document", () => {
  it("gives every point in time format date-time (ISO 8601 UTC, as the service writes them)", () => {
    const found = timestampProperties();
    expect(found.map(([where]) => where)).toEqual(
      expect.arrayContaining([
        "FunctionRecord.created_at",
        "FunctionRecord.updated_at",
        "FunctionRecord.next_run_at",
        "FunctionListItem.updated_at",
        "VersionInfo.created_at",
        "Run.queued_at",
        "Run.started_at",
        "Run.finished_at",
        "LogEntry.timestamp",
        "Artifact.created_at",
        "ApiKeyInfo.created_at",
        "SecretInfo.updated_at",
        "Delivery.next_attempt_at",
        "Delivery.created_at",
        "FunctionMetrics.last_called_at",
      ]),
    );
    expect(found.filter(([, property]) => nonNull(property).format !== "date-time").map(([where]) => where)).toEqual([]);
    expect(schemas.Run?.properties.started_at.anyOf).toEqual([expect.objectContaining({ type: "string", format: "date-time" }), { type: "null" }]);
  });

  it("bounds a record's timeout_seconds and memory_mb as create and update do, and gives its name the pattern names are checked with", () => {
    const record = schemas.FunctionRecord?.properties as Record<string, Json>;
    const create = schemas.CreateFunctionBody?.properties as Record<string, Json>;
    expect(record.timeout_seconds).toMatchObject({ type: "integer", minimum: 1, maximum: 900 });
    expect(record.memory_mb).toMatchObject({ type: "integer", minimum: 128, maximum: 10240 });
    for (const field of ["timeout_seconds", "memory_mb"]) {
      expect([field, record[field]?.minimum, record[field]?.maximum]).toEqual([field, create[field]?.minimum, create[field]?.maximum]);
    }
    expect(record.name?.pattern).toBe(NAME_PATTERN.source);
    expect(schemas.FunctionListItem?.properties.name.pattern).toBe(NAME_PATTERN.source);
    expect(create.name?.pattern).toBe(NAME_PATTERN.source);
  });

  it("declares x-service-request-origin and x-service-sdk-version, optional strings, on the operations whose runs keep them", () => {
    const headersOf = (path: string, method: string) =>
      ((doc.paths[path]?.[method]?.parameters ?? []) as Json[]).filter((parameter) => parameter.in === "header" && parameter.name.startsWith("x-service-"));
    for (const [path, method] of [
      ["/functions/{ref}", "post"],
      ["/functions/{ref}", "get"],
      ["/mcp", "post"],
    ] as const) {
      expect([path, method, headersOf(path, method)]).toEqual([
        path,
        method,
        [
          expect.objectContaining({ name: "x-service-request-origin", in: "header", required: false, schema: { type: "string" } }),
          expect.objectContaining({ name: "x-service-sdk-version", in: "header", required: false, schema: { type: "string" } }),
        ],
      ]);
    }
  });

  it("says a run's params are as the caller sent them (defaults are not filled in)", () => {
    const params = schemas.Run?.properties.params as Json;
    expect(params.description).not.toMatch(/defaults filled in/);
    expect(params.description).toMatch(/not filled in/);
  });
});
