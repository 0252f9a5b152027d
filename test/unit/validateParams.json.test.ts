import type { ParameterInfo } from "../../lambdas/code/extractParameters";
import { MAX_CHECK_DEPTH, validateParams } from "../../lambdas/invoke/validateParams";
import { param, rejection, problems, acceptsJson } from "../helpers/params";

describe("validateParams: JSON bodies", () => {
  const variables = [param("url", "string"), param("max_items", "number", false), param("tags", "string[]", false)];

  it("returns only the provided parameters, without injecting defaults", () => {
    const withDefault: ParameterInfo = { name: "max_items", type: "number", default: "10", required: false };
    expect(validateParams([param("url", "string"), withDefault], { url: "https://a.test" }, "json")).toEqual({
      url: "https://a.test",
    });
  });

  it("accepts absent optional parameters", () => {
    expect(validateParams(variables, { url: "u" }, "json")).toEqual({ url: "u" });
    expect(validateParams([param("x", "string | undefined", false)], {}, "json")).toEqual({});
  });

  it("lists every missing, unknown and wrongly typed parameter at once", () => {
    const error = rejection(variables, { max_items: "5", tags: ["a", 1], extra: true });
    expect(error.details.parameters).toEqual([
      { name: "url", problem: "required", expected: "string" },
      { name: "max_items", problem: "wrong_type", expected: "number", received: "string" },
      { name: "tags", problem: "wrong_type", path: "tags[1]", expected: "string", received: "number" },
      { name: "extra", problem: "unknown" },
    ]);
    expect(error.message).toBe(
      "Invalid parameters: url is required; max_items must be number (got string); " +
        "tags[1] must be string (got number); extra is not a parameter of this function",
    );
  });

  it.each([
    ["an array", [1, 2], "array"],
    ["null", null, "null"],
    ["a string", "url", "string"],
    ["a number", 5, "number"],
    ["a boolean", true, "boolean"],
  ])("rejects %s as the body", (_label, body, received) => {
    const error = rejection(variables, body);
    expect(error.message).toBe(`Parameters must be a JSON object (got ${received})`);
    expect(error.details).toEqual({ parameters: [], received });
  });

  it("checks primitive types", () => {
    expect(acceptsJson("string", "")).toBe(true);
    expect(acceptsJson("string", 1)).toBe(false);
    expect(acceptsJson("number", -1.5)).toBe(true);
    expect(acceptsJson("number", JSON.parse("1e999"))).toBe(false); // Infinity
    expect(acceptsJson("number", "1")).toBe(false);
    expect(acceptsJson("boolean", false)).toBe(true);
    expect(acceptsJson("boolean", 0)).toBe(false);
    expect(acceptsJson("null", null)).toBe(true);
    expect(acceptsJson("null", 0)).toBe(false);
    expect(acceptsJson("undefined", null)).toBe(false);
    expect(acceptsJson("string", null)).toBe(false);
    expect(acceptsJson("string | undefined", null)).toBe(false);
  });

  it("checks arrays of numbers element by element", () => {
    for (const type of ["number[]", "Array<number>", "readonly number[]", "ReadonlyArray<number>"]) {
      expect(acceptsJson(type, [1, 2.5, -3])).toBe(true);
      expect(acceptsJson(type, [])).toBe(true);
      expect(acceptsJson(type, [1, "2"])).toBe(false);
      expect(acceptsJson(type, { 0: 1 })).toBe(false);
    }
    expect(problems([param("nums", "number[]")], { nums: [1, 2, null] })).toEqual([
      { name: "nums", problem: "wrong_type", path: "nums[2]", expected: "number", received: "null" },
    ]);
    expect(acceptsJson("number[][]", [[1], [2, 3]])).toBe(true);
    expect(problems([param("m", "number[][]")], { m: [[1], [2, "x"]] })[0]).toMatchObject({ path: "m[1][1]" });
    expect(acceptsJson("(string | number)[]", ["a", 1])).toBe(true);
    expect(acceptsJson("(string | number)[]", ["a", true])).toBe(false);
  });

  it("accepts any non-null, non-array object for object types without checking members", () => {
    for (const type of ["object", "Record<string, number>", "{ a: number }", "Readonly<{ a: number }>"]) {
      expect(acceptsJson(type, { a: "not a number" })).toBe(true);
      expect(acceptsJson(type, {})).toBe(true);
      expect(acceptsJson(type, [])).toBe(false);
      expect(acceptsJson(type, null)).toBe(false);
      expect(acceptsJson(type, "x")).toBe(false);
    }
    expect(acceptsJson("{}", "x")).toBe(true);
    expect(acceptsJson("{}", null)).toBe(false);
  });

  it("checks unions and literal types", () => {
    expect(acceptsJson("string | null", null)).toBe(true);
    expect(acceptsJson("string | null", "a")).toBe(true);
    expect(acceptsJson("string | null", 1)).toBe(false);
    expect(acceptsJson('"a" | "b"', "b")).toBe(true);
    expect(acceptsJson('"a" | "b"', "c")).toBe(false);
    expect(acceptsJson('| "a" | "b"', "a")).toBe(true);
    expect(acceptsJson("'it\\'s' | 'x|y'", "it's")).toBe(true);
    expect(acceptsJson("'it\\'s' | 'x|y'", "x|y")).toBe(true);
    expect(acceptsJson("'it\\'s' | 'x|y'", "x")).toBe(false);
    expect(acceptsJson("1 | 2 | -3", -3)).toBe(true);
    expect(acceptsJson("1 | 2 | -3", 3)).toBe(false);
    expect(acceptsJson("true", true)).toBe(true);
    expect(acceptsJson("true", false)).toBe(false);
    expect(acceptsJson("`id-${string}`", "id-1")).toBe(true);
    expect(acceptsJson("`id-${string}`", 1)).toBe(false);
    expect(acceptsJson("[string, number]", ["a", 1])).toBe(true);
    expect(acceptsJson("[string, number]", "a")).toBe(false);
    expect(problems([param("mode", '"a" | "b"')], { mode: "c" })).toEqual([
      { name: "mode", problem: "wrong_type", expected: '"a" | "b"', received: '"c"' },
    ]);
  });

  it("accepts anything for unknown and any", () => {
    for (const value of [null, 0, "", false, [1, "a"], { a: { b: [] } }]) {
      expect(acceptsJson("unknown", value)).toBe(true);
      expect(acceptsJson("any", value)).toBe(true);
    }
  });

  it("accepts anything for types it does not model (it rejects only what is certainly wrong)", () => {
    const types = ["Options", "Promise<string>", "Map<string, number>", "ns.Options", "A & B", "() => void", "keyof T", "T extends string ? 1 : 2", "never"];
    for (const type of types) {
      for (const value of [null, 1, "a", [1], { a: 1 }]) expect(acceptsJson(type, value)).toBe(true);
    }
    expect(acceptsJson("Options[]", [1, "a", null])).toBe(true);
    expect(acceptsJson("Options[]", { a: 1 })).toBe(false);
  });

  it("rejects arrays nested deeper than the limit", () => {
    const nested = (levels: number): unknown => (levels === 0 ? 1 : [nested(levels - 1)]);
    const type = (levels: number) => `number${"[]".repeat(levels)}`;
    expect(acceptsJson(type(MAX_CHECK_DEPTH), nested(MAX_CHECK_DEPTH))).toBe(true);
    const [problem] = problems([param("deep", type(MAX_CHECK_DEPTH + 1))], { deep: nested(MAX_CHECK_DEPTH + 1) });
    expect(problem).toMatchObject({ name: "deep", problem: "too_deeply_nested" });
    expect(problem?.path).toBe(`deep${"[0]".repeat(MAX_CHECK_DEPTH)}`);
  });
});

describe("validateParams: prototype keys", () => {
  it("treats __proto__, constructor and prototype in the body as unknown parameters", () => {
    const body = JSON.parse('{"url": "u", "__proto__": {"polluted": true}, "constructor": 1, "prototype": 2}') as unknown;
    expect(problems([param("url", "string")], body).map((p) => [p.name, p.problem])).toEqual([
      ["__proto__", "unknown"],
      ["constructor", "unknown"],
      ["prototype", "unknown"],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("does not take inherited properties as provided", () => {
    const input = Object.create({ url: "inherited" }) as Record<string, unknown>;
    expect(problems([param("url", "string")], input)).toEqual([{ name: "url", problem: "required", expected: "string" }]);
    expect(problems([param("constructor", "string")], {})).toEqual([
      { name: "constructor", problem: "required", expected: "string" },
    ]);
  });

  it("returns a declared __proto__ parameter as an own property, without touching prototypes", () => {
    const body = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const result = validateParams([param("__proto__", "object")], body, "json");
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.hasOwn(result, "__proto__")).toBe(true);
    expect((result as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(result, "__proto__")?.value).toEqual({ polluted: true });
  });
});
