import { inputSchema, type JsonSchema } from "../../lambdas/code/jsonSchema";
import { functionOpenapiDocument } from "../../lambdas/schemas/functionOpenapiDocument";
import { openapiDocument } from "../../lambdas/schemas/openapiDocument";
import { documentChecker } from "../helpers/openapiSchemas";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const service = openapiDocument("http://api.test") as Json;
const invoke = service.paths["/functions/{ref}"].post as Json;

const closed = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });
const declared: JsonSchema = {
  type: "object",
  properties: { title: { type: "string" }, links: { type: "array", items: closed({ href: { type: "string" } }) } },
  required: ["title"],
  additionalProperties: false,
};
const fn = { name: "page-title", description: null, latest_version: 3, input_schema: inputSchema({ url: { type: "string" } }, ["url"]), output_schema: declared };
const doc = functionOpenapiDocument(fn, "http://api.test") as Json;
const post = doc.paths["/functions/page-title"].post as Json;

/** A header or parameter of the service's document, its `$ref` resolved. */
function resolved(object: Json): Json {
  if (typeof object.$ref !== "string") return object;
  return object.$ref
    .slice(2)
    .split("/")
    .reduce((node: Json, part: string) => node[part], service);
}

describe("the per-function OpenAPI document", () => {
  it("is what the service's document says GET /functions/{ref}/openapi.json answers", () => {
    const schema = service.paths["/functions/{ref}/openapi.json"].get.responses["200"].content["application/json"].schema;
    expect(documentChecker(service)(schema, doc)).toEqual([]);
  });

  it("answers 200 with the declared return type, every object open: a result with more members still fits it", () => {
    expect(post.responses["200"].content["application/json"].schema).toEqual({
      type: "object",
      properties: { title: { type: "string" }, links: { type: "array", items: { type: "object", properties: { href: { type: "string" } }, required: ["href"] } } },
      required: ["title"],
    });
    const check = documentChecker(doc);
    expect(check(post.responses["200"].content["application/json"].schema, { title: "t", links: [{ href: "/", rel: "home" }], fetched_at: "now" })).toEqual([]);
    // The function's own schema is left as it was.
    expect(declared.additionalProperties).toBe(false);
  });

  it("takes the request headers of the service's invoke operation", () => {
    const headers = (invoke.parameters as Json[]).filter((parameter) => parameter.in === "header");
    expect(post.parameters).toEqual(headers);
    expect(post.parameters.map((parameter: Json) => parameter.name)).toEqual(expect.arrayContaining(["Idempotency-Key", "Prefer", "X-Function-Version"]));
  });

  it("answers 200 and 202 with the headers of the service's invoke operation, typed alike", () => {
    for (const status of ["200", "202"]) {
      const expected = Object.fromEntries(Object.entries(invoke.responses[status].headers as Record<string, Json>).map(([name, header]) => [name, resolved(header)]));
      expect([status, post.responses[status].headers]).toEqual([status, expected]);
    }
    expect(post.responses["200"].headers["X-Duration-Ms"].schema).toMatchObject({ type: "integer", minimum: 0 });
    expect(post.responses["202"].headers).toHaveProperty("Location");
    expect(post.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AcceptedRun" });
    expect(doc.components.schemas.AcceptedRun).toEqual(service.components.schemas.AcceptedRun);
  });
});
