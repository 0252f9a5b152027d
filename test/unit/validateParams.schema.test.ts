import { compileCode } from "../../lambdas/code/compileCode";
import { validateParams, type ParameterProblem } from "../../lambdas/invoke/validateParams";
import { schemaFromVariables } from "../../lambdas/invoke/schemaFromTypeText";
import { thrownApiError } from "../helpers/apiErrors";

const SOURCE = `
type Mode = "fast" | "full";
interface Filter {
  field: string;
  /** @integer */
  limit?: number;
  tags?: string[];
}
export default async function run(url: string, mode: Mode = "fast", filters: Filter[] = [], opts?: { headless: boolean; viewport?: { width: number } }) {}
`;
const compiled = compileCode(SOURCE);

function check(input: unknown, source: "json" | "query" = "json") {
  return validateParams(compiled.variables, input, source, compiled.input_schema);
}

function problems(input: unknown, source: "json" | "query" = "json"): { message: string; parameters: ParameterProblem[] } {
  const error = thrownApiError(() => check(input, source), "expected validateParams to throw");
  expect(error.code).toBe("invalid_parameters");
  expect(error.status).toBe(400);
  return { message: error.message, parameters: error.details.parameters as ParameterProblem[] };
}

describe("validateParams with a derived input schema", () => {
  it("accepts values that fit, returning them as sent", () => {
    const input = { url: "u", mode: "full", filters: [{ field: "a", limit: 3, tags: ["x"] }], opts: { headless: true, viewport: { width: 800 } } };
    expect(check(input)).toEqual(input);
  });

  it("refuses a value outside an enum of a named alias, showing the value", () => {
    expect(problems({ url: "u", mode: "slow" }).parameters).toEqual([
      { name: "mode", problem: "wrong_type", expected: "Mode", received: '"slow"' },
    ]);
  });

  it("refuses a wrong type inside nested objects and arrays, with its path and the schema's type", () => {
    const { message, parameters } = problems({ url: "u", filters: [{ field: "a" }, { field: 1 }], opts: { headless: true, viewport: { width: "800" } } });
    expect(parameters).toEqual([
      { name: "filters", problem: "wrong_type", path: "filters[1].field", expected: "string", received: "number" },
      { name: "opts", problem: "wrong_type", path: "opts.viewport.width", expected: "number", received: "string" },
    ]);
    expect(message).toBe(
      "Invalid parameters: filters[1].field must be string (got number); opts.viewport.width must be number (got string)",
    );
  });

  it("refuses a missing required property and an unknown one inside a closed object", () => {
    const { message, parameters } = problems({ url: "u", filters: [{ limit: 1 }], opts: { headless: false, extra: 1 } });
    expect(parameters).toEqual([
      { name: "filters", problem: "required", path: "filters[0].field", expected: "string" },
      { name: "opts", problem: "unknown", path: "opts.extra" },
    ]);
    expect(message).toContain("filters[0].field is required");
    expect(message).toContain("opts.extra is not a property of its object");
  });

  it("checks @integer numbers", () => {
    expect(problems({ url: "u", filters: [{ field: "a", limit: 1.5 }] }).parameters).toEqual([
      { name: "filters", problem: "wrong_type", path: "filters[0].limit", expected: "integer", received: "number" },
    ]);
  });

  it("keeps the top-level problems as they were: required, unknown, wrong type with the declared type", () => {
    expect(problems({ mode: 1, other: true }).parameters).toEqual([
      { name: "url", problem: "required", expected: "string" },
      { name: "mode", problem: "wrong_type", expected: "Mode", received: "1" },
      { name: "other", problem: "unknown" },
    ]);
  });

  it("coerces query values by the schema: enums, JSON text of objects and arrays", () => {
    expect(check({ url: "u", mode: "full", filters: '[{"field":"a","limit":2}]', opts: '{"headless":true}' }, "query")).toEqual({
      url: "u",
      mode: "full",
      filters: [{ field: "a", limit: 2 }],
      opts: { headless: true },
    });
    expect(problems({ url: "u", filters: '[{"field":2}]' }, "query").parameters).toEqual([
      { name: "filters", problem: "wrong_type", path: "filters[0].field", expected: "string", received: "number" },
    ]);
    expect(problems({ url: "u", opts: "{headless" }, "query").parameters).toEqual([
      { name: "opts", problem: "invalid_json", expected: "{ headless: boolean; viewport?: { width: number } }", received: '"{headless"' },
    ]);
  });

  it("coerces integers and booleans from query text", () => {
    const c = compileCode(`export default async (/** @integer */ n: number, flag: boolean, x: number | null) => {}`);
    expect(validateParams(c.variables, { n: "3", flag: "false", x: "null" }, "query", c.input_schema)).toEqual({ n: 3, flag: false, x: null });
    const error = thrownApiError(() => validateParams(c.variables, { n: "2.5", flag: "true", x: "1" }, "query", c.input_schema), "expected a rejection");
    expect(error.details.parameters).toEqual([{ name: "n", problem: "wrong_type", expected: "integer", received: "number" }]);
  });

  it("expects an integer wherever an @integer parameter is refused: text that is no number, a missing value", () => {
    const c = compileCode(`export default async (/** @integer */ n: number, /** @integer */ list: number[] = []) => {}`);
    const refused = (input: Record<string, string>) =>
      (thrownApiError(() => validateParams(c.variables, input, "query", c.input_schema), "expected a rejection").details.parameters as ParameterProblem[])[0];
    expect(refused({ n: "3.5" })).toEqual({ name: "n", problem: "wrong_type", expected: "integer", received: "number" });
    expect(refused({ n: "" })).toEqual({ name: "n", problem: "wrong_type", expected: "integer", received: '""' });
    expect(refused({ n: " 1" })).toEqual({ name: "n", problem: "wrong_type", expected: "integer", received: '" 1"' });
    expect(refused({})).toEqual({ name: "n", problem: "required", expected: "integer" });
    expect(refused({ n: "1", list: "[1," })).toEqual({ name: "list", problem: "invalid_json", expected: "integer[]", received: '"[1,"' });
  });
});

describe("schemaFromVariables (versions deployed before schemas)", () => {
  it("builds the schema from the type text: named and object types unchecked, literals as enums", () => {
    expect(
      schemaFromVariables([
        { name: "url", type: "string", required: true },
        { name: "mode", type: '"a" | "b" | null', required: false, default: '"a"' },
        { name: "opts", type: "Options", required: false },
        { name: "box", type: "{ a: number }", required: true },
        { name: "tags", type: "string[] | undefined", required: false },
      ]),
    ).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        url: { type: "string" },
        mode: { enum: ["a", "b", null], default: "a" },
        opts: {},
        box: { type: "object" },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["url", "box"],
      additionalProperties: false,
    });
  });
});
