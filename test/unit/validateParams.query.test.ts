import { validateParams } from "../../lambdas/invoke/validateParams";
import { param, rejection, problems, fromQuery, queryProblem } from "../helpers/params";

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
