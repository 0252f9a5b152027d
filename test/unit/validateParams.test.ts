import type { ParameterInfo } from "../../lambdas/code/extractParameters";
import { ApiError } from "../../lambdas/http/errors";
import { MAX_CHECK_DEPTH, validateParams, type ParameterProblem } from "../../lambdas/invoke/validateParams";

function param(name: string, type: string, required = true): ParameterInfo {
  return { name, type, required };
}

/** Runs validateParams expecting an invalid_parameters rejection; returns the error. */
function rejection(variables: ParameterInfo[], input: unknown, source: "json" | "query" = "json"): ApiError {
  try {
    validateParams(variables, input, source);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe("invalid_parameters");
    expect(apiError.status).toBe(400);
    return apiError;
  }
  throw new Error("expected validateParams to throw");
}

function problems(variables: ParameterInfo[], input: unknown, source: "json" | "query" = "json"): ParameterProblem[] {
  return rejection(variables, input, source).details.parameters as ParameterProblem[];
}

/** The value a single query parameter of `type` is coerced to. */
function fromQuery(type: string, raw: string): unknown {
  return validateParams([param("x", type)], { x: raw }, "query").x;
}

/** The problem a single query parameter of `type` is rejected with. */
function queryProblem(type: string, raw: string): ParameterProblem | undefined {
  return problems([param("x", type)], { x: raw }, "query")[0];
}

function acceptsJson(type: string, value: unknown): boolean {
  try {
    validateParams([param("x", type)], { x: value }, "json");
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "invalid_parameters") return false;
    throw error;
  }
}

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

describe("validateParams: query values", () => {
  it.each([
    ["5", 5],
    ["-3", -3],
    ["2.5", 2.5],
    ["-0.25", -0.25],
    ["1.", 1],
    [".5", 0.5],
    ["1e3", 1000],
    ["-1.5E-2", -0.015],
    ["007", 7],
  ])("coerces number %p", (raw, value) => {
    expect(fromQuery("number", raw)).toBe(value);
  });

  it.each(["", "abc", "0x10", "1,000", " 5", "5 ", "+5", "Infinity", "NaN", "1e", "--1", "1_000"])(
    "rejects %p as a number",
    (raw) => {
      expect(queryProblem("number", raw)).toEqual({
        name: "x",
        problem: "wrong_type",
        expected: "number",
        received: JSON.stringify(raw),
      });
    },
  );

  it("rejects a decimal that overflows to Infinity", () => {
    expect(queryProblem("number", "1e999")).toMatchObject({ problem: "wrong_type", received: "Infinity" });
  });

  it("coerces booleans from exactly true and false", () => {
    expect(fromQuery("boolean", "true")).toBe(true);
    expect(fromQuery("boolean", "false")).toBe(false);
    for (const raw of ["1", "0", "yes", "TRUE", "True", ""]) {
      expect(queryProblem("boolean", raw)).toMatchObject({ problem: "wrong_type", expected: "boolean" });
    }
  });

  it("keeps strings as they are", () => {
    expect(fromQuery("string", "123")).toBe("123");
    expect(fromQuery("string", "")).toBe("");
    expect(fromQuery("string", '["a"]')).toBe('["a"]');
  });

  it("reads arrays from JSON text", () => {
    expect(fromQuery("string[]", '["a","b"]')).toEqual(["a", "b"]);
    expect(fromQuery("number[]", "[1, -2.5]")).toEqual([1, -2.5]);
    expect(queryProblem("string[]", '["a", 1]')).toEqual({
      name: "x",
      problem: "wrong_type",
      path: "x[1]",
      expected: "string",
      received: "number",
    });
    expect(queryProblem("string[]", "5")).toMatchObject({ problem: "wrong_type" });
    expect(queryProblem("string[]", "a,b")).toMatchObject({ problem: "invalid_json" });
  });

  it("names the parameter whose JSON text is malformed", () => {
    const error = rejection([param("tags", "string[]")], { tags: '["a",' }, "query");
    expect(error.details.parameters).toEqual([
      { name: "tags", problem: "invalid_json", expected: "string[]", received: '"[\\"a\\","' },
    ]);
    expect(error.message).toContain("tags must be JSON text of string[]");
  });

  it("reads objects from JSON text", () => {
    expect(fromQuery("{ a: number }", '{"a":1}')).toEqual({ a: 1 });
    expect(fromQuery("Record<string, string>", "{}")).toEqual({});
    expect(queryProblem("object", "[1]")).toMatchObject({ problem: "wrong_type", received: "array" });
    expect(queryProblem("object", "{a:1}")).toMatchObject({ problem: "invalid_json" });
  });

  it("coerces unions in the order number, boolean, null, JSON, string", () => {
    expect(fromQuery("number | string", "5")).toBe(5);
    expect(fromQuery("string | number", "5")).toBe(5);
    expect(fromQuery("number | string", "abc")).toBe("abc");
    expect(fromQuery("boolean | string", "true")).toBe(true);
    expect(fromQuery("string | null", "null")).toBeNull();
    expect(fromQuery("string | null", "x")).toBe("x");
    expect(fromQuery("string | string[]", '["a"]')).toEqual(["a"]);
    expect(fromQuery("string | string[]", "a")).toBe("a");
    expect(fromQuery("number | boolean", "false")).toBe(false);
    expect(fromQuery("(number | null)", "null")).toBeNull();
    expect(queryProblem("number | boolean", "abc")).toMatchObject({ problem: "wrong_type", expected: "number | boolean" });
    expect(queryProblem("number[] | null", "[1,")).toMatchObject({ problem: "invalid_json" });
  });

  it("coerces literal types", () => {
    expect(fromQuery('"fast" | "slow"', "fast")).toBe("fast");
    expect(queryProblem('"fast" | "slow"', "medium")).toMatchObject({ problem: "wrong_type", received: '"medium"' });
    expect(fromQuery("1 | 2", "2")).toBe(2);
    expect(queryProblem("1 | 2", "3")).toMatchObject({ problem: "wrong_type", received: "3" });
    expect(fromQuery('1 | "auto"', "1")).toBe(1);
    expect(fromQuery('1 | "auto"', "auto")).toBe("auto");
    expect(fromQuery("true", "true")).toBe(true);
    expect(queryProblem("true", "false")).toMatchObject({ problem: "wrong_type" });
  });

  it("reads unknown and unmodelled types as JSON text, falling back to the raw string", () => {
    expect(fromQuery("unknown", "5")).toBe(5);
    expect(fromQuery("unknown", '{"a":[1]}')).toEqual({ a: [1] });
    expect(fromQuery("unknown", "null")).toBeNull();
    expect(fromQuery("unknown", "hello")).toBe("hello");
    expect(fromQuery("unknown", "")).toBe("");
    expect(fromQuery("Options", '{"a":1}')).toEqual({ a: 1 });
    expect(fromQuery("Options", "plain")).toBe("plain");
  });

  it("collects every problem and leaves absent optional parameters out", () => {
    const variables = [param("url", "string"), param("n", "number", false), param("flag", "boolean", false)];
    expect(validateParams(variables, { url: "u" }, "query")).toEqual({ url: "u" });
    expect(problems(variables, { n: "x", flag: "1", other: "y" }, "query").map((p) => [p.name, p.problem])).toEqual([
      ["url", "required"],
      ["n", "wrong_type"],
      ["flag", "wrong_type"],
      ["other", "unknown"],
    ]);
  });
});
