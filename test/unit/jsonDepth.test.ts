import fc from "fast-check";
import { FrameReader, type FrameProblem } from "../../lambdas/runner/frames";
import { jsonTextDeeperThan, valueDeeperThan } from "../../lambdas/runner/jsonDepth";
import { MAX_JSON_DEPTH, parseRunOutcome } from "../../lambdas/runner/outcomeSchema";
import { outcomeEnding, outcomeEndingOf } from "../../lambdas/runtime/aws/invokeOutcome";
import { Redactor } from "../../lambdas/secrets/redactor";

/** JSON text of `depth` arrays inside each other (`[[...]]`), the innermost holding `inner`. */
const nested = (depth: number, inner = "") => "[".repeat(depth) + inner + "]".repeat(depth);
/** A value of `depth` arrays inside each other, built without recursion. */
function nestedValue(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** The depth of a value, recursively (the test's own measure; only for values a few hundred deep). */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe("jsonTextDeeperThan", () => {
  it("counts arrays and objects inside each other, not brackets inside strings", () => {
    expect(jsonTextDeeperThan("1", 0)).toBe(false);
    expect(jsonTextDeeperThan("[]", 0)).toBe(true);
    expect(jsonTextDeeperThan("[]", 1)).toBe(false);
    expect(jsonTextDeeperThan('{"a":[1]}', 1)).toBe(true);
    expect(jsonTextDeeperThan('{"a":[1]}', 2)).toBe(false);
    expect(jsonTextDeeperThan('["[[[[", "\\"[[[", {"k]]}": "{{"}]', 2)).toBe(false);
    expect(jsonTextDeeperThan('["\\\\", [[1]]]', 2)).toBe(true);
    expect(jsonTextDeeperThan("[[],[],[[]]]", 2)).toBe(true);
    expect(jsonTextDeeperThan("[[],[],[]]", 2)).toBe(false);
  });

  it("agrees with the depth of any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, limit) => {
        expect(jsonTextDeeperThan(JSON.stringify(value), limit)).toBe(depthOf(value) > limit);
      }),
    );
  });

  it("skips strings whole, escaped quotes and runs of backslashes included, and stops at an unterminated one", () => {
    expect(jsonTextDeeperThan(JSON.stringify(["\\\"[[[", "\\", '\\\\"]]', [["x"]]]), 3)).toBe(false);
    expect(jsonTextDeeperThan(JSON.stringify(["\\\"[[[", "\\", '\\\\"]]', [["x"]]]), 2)).toBe(true);
    expect(jsonTextDeeperThan(JSON.stringify({ [`k${"\\".repeat(1000)}"`]: ["x".repeat(1_000_000)] }), 1)).toBe(true);
    expect(jsonTextDeeperThan('["unterminated [[[[', 1)).toBe(false);
    expect(jsonTextDeeperThan('[["a\\\\"], [[]]]', 2)).toBe(true);
    expect(jsonTextDeeperThan('[["a\\"], [[]]]', 2)).toBe(false);
  });

  it("measures 1,000,000 levels without recursion, stopping past the limit", () => {
    expect(jsonTextDeeperThan(nested(1_000_000), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonTextDeeperThan(nested(MAX_JSON_DEPTH, '"x"'), MAX_JSON_DEPTH)).toBe(false);
  });
});

describe("valueDeeperThan", () => {
  it("walks a 1,000,000-deep value with its own stack, and a cycle once", () => {
    expect(valueDeeperThan(nestedValue(1_000_000), MAX_JSON_DEPTH)).toBe(true);
    expect(valueDeeperThan(nestedValue(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(valueDeeperThan({ a: { b: [1, { c: null }] }, d: "x" }, 4)).toBe(false);
    expect(valueDeeperThan({ a: { b: [1, { c: {} }] } }, 4)).toBe(true);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(valueDeeperThan(cycle, 5)).toBe(false);
  });
});

describe("the depth cap where a run's output comes in", () => {
  const succeeded = (result_json: string) => ({ status: "succeeded", result_json, logs: "", browser_ms: 1 });

  it("parseRunOutcome: a result nested past MAX_JSON_DEPTH fails the run as result_too_deep; one at the cap is kept", () => {
    expect(parseRunOutcome(succeeded(nested(100_000)), 1000)).toEqual({
      ok: true,
      outcome: { status: "failed", error: { code: "result_too_deep", message: expect.stringContaining(`${MAX_JSON_DEPTH} levels`) }, logs: "", browser_ms: 1 },
    });
    expect(parseRunOutcome(succeeded(nested(MAX_JSON_DEPTH + 1)), 1000)).toMatchObject({ ok: true, outcome: { status: "failed", error: { code: "result_too_deep" } } });
    expect(parseRunOutcome(succeeded(nested(MAX_JSON_DEPTH, "1")), 1000)).toMatchObject({ ok: true, outcome: { status: "succeeded", result_json: nested(MAX_JSON_DEPTH, "1") } });
    // A run may say so itself (the runner does).
    const said = { status: "failed", error: { code: "result_too_deep", message: "too deep" }, logs: "", browser_ms: 1 };
    expect(parseRunOutcome(said, 1000)).toMatchObject({ ok: true, outcome: { status: "failed", error: { code: "result_too_deep" } } });
  });

  it("FrameReader: a frame nested past its cap is refused before it is parsed", () => {
    const problems: [string, FrameProblem][] = [];
    const frames: unknown[] = [];
    const reader = new FrameReader(
      1024 * 1024,
      (message) => frames.push(message),
      (problem, kind) => problems.push([problem, kind]),
      MAX_JSON_DEPTH,
    );
    const body = Buffer.from(`{"type":"done","outcome":${nested(100_000)}}`);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    reader.push(Buffer.concat([header, body]));
    expect(frames).toEqual([]);
    expect(problems).toEqual([[`a message is nested more than ${MAX_JSON_DEPTH} levels deep`, "too_deep"]]);
  });

  it("a Lambda's answer (text, or a value from the workflow) nested past the cap ends the run as result_too_deep", () => {
    const bounds = { maxBrowserMs: 1000, memoryMb: 1024 };
    const tooDeep = { status: "failed", result_json: null, error: { code: "result_too_deep", message: expect.any(String) } };
    expect(outcomeEnding(`{"status":"succeeded","extra":${nested(100_000)}}`, bounds)).toMatchObject(tooDeep);
    expect(outcomeEnding(JSON.stringify(succeeded(nested(100_000))), bounds)).toMatchObject(tooDeep);
    expect(outcomeEndingOf({ status: "succeeded", result_json: "1", logs: "", browser_ms: 1, extra: nestedValue(100_000) }, bounds)).toMatchObject(tooDeep);
    expect(outcomeEndingOf(succeeded("[[1]]"), bounds)).toMatchObject({ status: "succeeded", result_json: "[[1]]" });
  });
});

describe("Redactor on deep values", () => {
  const redactor = new Redactor(["s3cret"]);

  it("redacts a value 100,000 deep without recursion, and deep JSON text as text", () => {
    let value: unknown = "the s3cret";
    for (let i = 0; i < 100_000; i++) value = { k: value };
    let copy = redactor.value(value) as unknown;
    for (let i = 0; i < 100_000; i++) copy = (copy as { k: unknown }).k;
    expect(copy).toBe("the [secret]");
    const text = `${nested(100_000, '"s3cret"')}`;
    expect(redactor.json(text)).toBe(nested(100_000, '"[secret]"'));
  });

  it("copies keys in order, a later value winning where two keys redact alike, and keeps __proto__ an own key", () => {
    const parsed = JSON.parse('{"a":1,"s3cret":{"x":"s3cret"},"[secret]":2,"__proto__":{"polluted":true},"n":[1,"s3cret"]}') as unknown;
    const copy = redactor.value(parsed) as Record<string, unknown>;
    expect(Object.keys(copy)).toEqual(["a", "[secret]", "__proto__", "n"]);
    expect(copy["[secret]"]).toBe(2);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe('{"a":1,"[secret]":2,"__proto__":{"polluted":true},"n":[1,"[secret]"]}');
  });
});
