/**
 * Bad input through the API, property-based (fast-check): bodies, names, code, settings,
 * parameters, paths, query strings and headers, against a real local service. Every answer
 * is the one JSON error shape with the right status and a stable code (or a success), never
 * a 5xx; afterwards the table holds exactly what the successful requests made.
 */
import fc from "fast-check";
import { checkAnswer, fetchAnswer, fromFetch, fuzzSettings, fuzzTimeout, writeTallies } from "../helpers/fuzzChecks";
import {
  ANY_PARAMS_FN,
  nameField,
  settingsFields,
  TARGET_FN,
  TARGET_PARAMS,
} from "../helpers/fuzzFunctionInputs";
import { bodyText, headerText, mostly, objectText, oddJson, oddString, PROTO_KEYS, segment } from "../helpers/fuzzInputs";
import { type Expected, expectStoreHolds } from "../helpers/fuzzStore";
import { NO_PARAMS_FN } from "../helpers/code";
import { startTestService, type TestService } from "../helpers/localService";

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

let t: TestService;
/** A request with the admin key unless `token` says otherwise (null: none). */
const call = (method: string, path: string, options: { body?: string; token?: string | null; headers?: Record<string, string> } = {}) =>
  fetchAnswer(t.url, method, path, { ...options, token: options.token === undefined ? t.adminKey : options.token });
const expected: Expected = { accounts: new Set(["local"]), keys: 1, everCreated: new Set(), functions: new Set() };

beforeAll(async () => {
  t = await startTestService();
  const fn = await t.deploy("plain", NO_PARAMS_FN);
  expected.everCreated.add(fn.function_id);
  expected.functions.add("local/plain");
  const target = await t.deploy("target", TARGET_FN);
  expected.everCreated.add(target.function_id);
  expected.functions.add("local/target");
  fuzzerKey = await t.newAccount("fuzzer", "free");
  expected.accounts.add("fuzzer");
  expected.keys++;
});
let fuzzerKey = "";
afterAll(async () => {
  writeTallies();
  await t.destroy();
});

describe("regressions", () => {
  it("answers 404 for refs and account names too long to be keys (they answered 500)", async () => {
    for (const ref of ["a".repeat(2000), "é".repeat(1500), `${"x".repeat(1100)}-y`]) {
      for (const [method, path] of [
        ["GET", `/functions/${ref}/info`],
        ["GET", `/functions/${ref}/versions`],
        ["GET", `/functions/${ref}/versions/1`],
        ["GET", `/functions/${ref}/logs`],
        ["GET", `/functions/${ref}/metrics`],
        ["PATCH", `/functions/${ref}`],
        ["DELETE", `/functions/${ref}`],
        ["POST", `/functions/${ref}`],
        ["GET", `/functions/${ref}`],
      ] as const) {
        const answer = await t.call(method, encodeURI(path), { body: method === "PATCH" ? {} : undefined });
        checkAnswer(`${method} ${path.slice(0, 40)}…`, fromFetch(answer), ["function_not_found"]);
      }
      const plan = await t.call("PUT", `/accounts/${encodeURIComponent(ref)}/plan`, { body: { plan: "free" } });
      checkAnswer("PUT /accounts/<long>/plan", fromFetch(plan), ["account_not_found"]);
    }
  });

  it("refuses schedule_params the store cannot keep exactly, and invocation parameters nested too deep, with 400 (they answered 500; found by the update property)", async () => {
    const fn = await t.deploy("anyp", ANY_PARAMS_FN);
    expected.everCreated.add(fn.function_id);
    expected.functions.add("local/anyp");
    const deepObject = (levels: number) => `${'{"x":'.repeat(levels)}1${"}".repeat(levels)}`;
    // Kept as JSON text with the run, these are taken as they are; in a function record (an item) they are not.
    const itemOnly = [
      '{"a": 1e300}',
      '{"a": 1, "b": 5e-324}',
      '{"a": 123456789012345678901234567890}',
      '{"a": {"__proto__": {"polluted": true}}}',
      '{"a": {"constructor": []}}',
      '{"a": [{"x": {"constructor": 1}}]}',
    ];
    const bad = [
      `{"a": ${deepObject(40)}}`,
      `{"a": ${"[".repeat(40)}${"]".repeat(40)}}`,
      `{"a": "${"x".repeat(300_000)}"}`,
      `{"a": ${"[".repeat(200_000)}${"]".repeat(200_000)}}`, // measuring its size overflowed the stack
    ];
    for (const body of [...itemOnly, ...bad]) {
      const patch = await t.call("PATCH", "/functions/anyp", { body: `{"schedule_params": ${body}}` });
      checkAnswer(`schedule_params ${body.slice(0, 40)}`, fromFetch(patch), ["invalid_request"]);
    }
    for (const body of bad) {
      const answer = await t.call("POST", "/functions/anyp", { body });
      checkAnswer(`invoke ${body.slice(0, 40)}`, fromFetch(answer), ["invalid_parameters"]);
    }
    for (const body of itemOnly) {
      const answer = await t.call("POST", "/functions/anyp", { body });
      expect({ body, status: answer.status }).toEqual({ body, status: 200 });
      const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
      expect(run.body.params).toEqual(JSON.parse(body)); // own keys compared: a `__proto__` key is kept as one
    }
    const query = await t.call("GET", `/functions/anyp?a=${encodeURIComponent(deepObject(40))}&b=1e300`);
    expect(checkAnswer("GET invoke", fromFetch(query), ["invalid_parameters"])).toBe("invalid_parameters");
    expect(query.body.error.details.parameters.map((p: { name: string; problem: string }) => `${p.name} ${p.problem}`)).toEqual(["a unsupported_value"]);
    // 28 levels of nesting still pass.
    const fine = await t.call("POST", "/functions/anyp", { body: `{"a": {"": [9007199254740992, 1e-200, ${deepObject(26)}]}, "b": -0.5}` });
    expect(fine.status).toBe(200);
    const run = await t.call("GET", `/runs/${fine.headers.get("x-run-id")}`);
    expect(run.body.params).toEqual({ a: { "": [9007199254740992, 1e-200, JSON.parse(deepObject(26))] }, b: -0.5 });
  });
});


describe("properties", () => {
  it("create: any body answers 201 or a 4xx of the create codes, and a 201 is what was asked", async () => {
    await fc.assert(
      fc.asyncProperty(bodyText({ name: nameField, ...settingsFields }, ["name", "code"]), fc.boolean(), async (body, asFuzzer) => {
        const token = asFuzzer ? fuzzerKey : t.adminKey;
        const answer = await call("POST", "/functions", { body, token });
        const what = `POST /functions ${body.slice(0, 300)}`;
        const codes = ["invalid_request", "invalid_name", "invalid_code", "invalid_schedule", "invalid_timezone", "function_exists", "payload_too_large"];
        if (checkAnswer(what, answer, codes, [201], "create") !== null) return;
        const sent = parsed(body);
        expect(answer.body.name).toBe(sent?.name);
        expected.everCreated.add(answer.body.function_id);
        expected.functions.add(`${asFuzzer ? "fuzzer" : "local"}/${answer.body.name}`);
      }),
      fuzzSettings(120),
    );
  }, fuzzTimeout(120, 150));

  it("update: any body on any ref answers 200 or a 4xx of the update codes", async () => {
    const ref = fc.oneof(fc.constantFrom("plain", "anyp", "nope", "fn_00000000000000000000000000"), oddString.map(segment));
    // `name` cannot be updated: sent in one body of ten.
    const bodies = fc.oneof({ weight: 9, arbitrary: bodyText(settingsFields) }, { weight: 1, arbitrary: bodyText({ ...settingsFields, name: nameField }) });
    await fc.assert(
      fc.asyncProperty(ref, bodies, async (target, body) => {
        const answer = await call("PATCH", `/functions/${target}`, { body });
        const codes = ["invalid_request", "invalid_code", "invalid_schedule", "invalid_timezone", "function_not_found", "payload_too_large", "route_not_found", "method_not_allowed"];
        checkAnswer(`PATCH /functions/${target} ${body.slice(0, 300)}`, answer, codes, [200], "update");
      }),
      fuzzSettings(120),
    );
  }, fuzzTimeout(120, 150));

  it("invoke: any parameters, by POST body or query string, answer 200 or 400 before anything runs", async () => {
    // Each parameter mostly of its type, sometimes of a near type, now and then anything.
    const values: Record<string, fc.Arbitrary<unknown>> = {
      text: mostly(oddString, fc.constantFrom(1, null, true, ["a"])),
      count: mostly(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })), fc.constantFrom("1", 1e300, 5e-324, null, 2 ** 53 + 2)),
      flag: mostly(fc.boolean(), fc.constantFrom("true", 0, 1, null)),
      tags: mostly(fc.array(fc.string(), { maxLength: 4 }), fc.oneof(fc.constantFrom("a", [1], [null], [["a"]]), fc.array(oddJson, { maxLength: 3 }))),
      mode: mostly(fc.constantFrom("fast", "full"), fc.constantFrom("FAST", "slow", "", 1, null)),
      options: mostly(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer())), fc.constantFrom([], null, "{}", 1)),
      extra: oddJson,
      nums: mostly(fc.array(fc.oneof(fc.integer(), fc.constant(null)), { maxLength: 4 }), fc.constantFrom([1, "2"], [[1]], "1,2", [1e300])),
    };
    const post = fc.oneof({ weight: 6, arbitrary: objectText(values, ["text"]) }, { weight: 1, arbitrary: bodyText({}) });
    const key = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...TARGET_PARAMS) }, { weight: 1, arbitrary: oddString }, { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) });
    // Query values are text: the JSON of a value (strings as they are), or odd text.
    const queryText = (value: unknown) => (typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
    const query = fc
      .tuple(
        values.text!.map(queryText),
        fc.array(fc.tuple(key, fc.oneof({ weight: 3, arbitrary: fc.oneof(...Object.values(values)).map(queryText) }, { weight: 1, arbitrary: oddString })), { maxLength: 5 }),
      )
      .map(([text, pairs]) => [["text", text] as const, ...pairs].map(([k, v]) => `${segment(k)}=${segment(v)}`).join("&"));
    await fc.assert(
      fc.asyncProperty(fc.oneof(post.map((body) => ({ body })), query.map((q) => ({ q }))), async (input) => {
        const answer =
          "body" in input
            ? await call("POST", "/functions/target", { body: input.body })
            : await call("GET", `/functions/target?${input.q}`);
        const what = "body" in input ? `POST /functions/target ${input.body.slice(0, 300)}` : `GET /functions/target?${input.q.slice(0, 300)}`;
        // A query string is part of the request head: over 16 KB it is 431 headers_too_large.
        checkAnswer(what, answer, ["invalid_parameters", "invalid_request", "headers_too_large"], [200], "invoke parameters");
      }),
      fuzzSettings(150),
    );
  }, fuzzTimeout(150, 400)); // each run that runs gets a fresh worker process (issue #26): about 0.1-0.3 s between runs on this machine

  it("invoke: odd X-Function-Version, Prefer and Authorization headers answer in the error shape", async () => {
    const version = fc.oneof(fc.constantFrom("1", " 1 ", "2", "0", "-1", "01", "1e0", "1.0", "99999999999", "0x1", ""), headerText);
    const prefer = fc.oneof(fc.constantFrom("respond-async", "RESPOND-ASYNC", "wait=5", "respond-async, wait=1", "return=minimal"), headerText);
    const authorization = fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom("Bearer", "Bearer ", "bearer KEY", "BEARER KEY", "Basic dXNlcjpwYXNz", "Bearer KEY KEY", "Bearer  KEY  ", "Bearer eyJhbGciOiJub25lIn0.e30.", "Bearer bfn_") },
      { weight: 1, arbitrary: headerText.map((text) => `Bearer ${text}`) },
      { weight: 1, arbitrary: headerText },
    );
    await fc.assert(
      fc.asyncProperty(fc.option(version), fc.option(prefer), authorization, async (v, p, auth) => {
        const headers: Record<string, string> = {};
        if (v !== null) headers["x-function-version"] = v;
        if (p !== null) headers.prefer = p;
        if (auth !== null) headers.authorization = auth.replaceAll("KEY", t.adminKey);
        const answer = await call("POST", "/functions/target", { body: '{"text":"x"}', headers, token: auth === null ? undefined : null });
        const codes = ["version_not_found", "missing_token", "invalid_token"];
        checkAnswer(`POST /functions/target ${JSON.stringify(headers)}`, answer, codes, [200, 202], "invoke headers");
      }),
      fuzzSettings(100),
    );
  }, fuzzTimeout(100, 150));

  it("paths: any ref, run id, key id, account or version answers in the error shape", async () => {
    const part = fc.oneof(oddString.map(segment), fc.constantFrom("plain", "fn_00000000000000000000000000", "run_00000000000000000000000000", "key_00000000000000000000000000", "1", "0", "-1", "%", "%ZZ", "%E0%A4%A", ".", ".."));
    const route = fc.constantFrom(
      ["GET", "/functions/{a}/info"],
      ["GET", "/functions/{a}/versions"],
      ["GET", "/functions/{a}/versions/{b}"],
      ["GET", "/functions/{a}/logs"],
      ["GET", "/functions/{a}/metrics"],
      ["DELETE", "/functions/{a}"],
      ["POST", "/functions/{a}/fork"],
      ["GET", "/runs/{a}"],
      ["DELETE", "/api-keys/{a}"],
      ["PUT", "/accounts/{a}/plan"],
      ["POST", "/functions/{a}"],
      ["GET", "/{a}"],
      ["GET", "/functions/{a}/{b}/{c}"],
      ["PATCH", "/api-keys/{a}"],
    );
    const body = bodyText({ plan: fc.oneof(fc.constantFrom("free", "pro", "gold", ""), oddString), name: nameField });
    await fc.assert(
      fc.asyncProperty(route, part, part, part, fc.option(body), async ([method, template], a, b, c, sent) => {
        if (a === "plain" && method === "DELETE") return; // the other properties use it
        const path = template.replace("{a}", a).replace("{b}", b).replace("{c}", c);
        const answer = await call(method, path, { body: method === "GET" ? undefined : (sent ?? undefined) });
        const codes = [
          "function_not_found", "run_not_found", "version_not_found", "key_not_found", "account_not_found", "route_not_found",
          "method_not_allowed", "invalid_request", "invalid_name", "invalid_parameters", "function_exists",
        ];
        const code = checkAnswer(`${method} ${path} ${sent ?? ""}`, answer, codes, [200, 201, 204], "paths");
        if (code === null && method === "POST" && template.endsWith("/fork")) {
          expected.everCreated.add(answer.body.function_id);
          expected.functions.add(`local/${answer.body.name}`);
        }
        if (code === null && method === "DELETE" && template === "/functions/{a}") throw new Error(`deleted ${path}`);
      }),
      fuzzSettings(150),
    );
  }, fuzzTimeout(150, 150));

  it("query strings: limits, cursors and months answer 200 or 400 invalid_limit / invalid_request", async () => {
    const limit = fc.oneof(fc.integer({ min: -5, max: 1500 }).map(String), fc.constantFrom("1e2", " 5", "5 ", "+5", "0x10", "１０", "5.0", "", "00001", "1".repeat(30)), oddString);
    const cursor = fc.oneof(oddString, oddString.map((s) => Buffer.from(s, "utf8").toString("base64url")), fc.constantFrom(Buffer.from("plain").toString("base64url"), "====", "cGxhaW4"));
    const month = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: -1, max: 13 })).map(([y, m]) => `${y}-${String(m).padStart(2, "0")}`),
      fc.constantFrom("2026-11", "2026-1", "2026-011", "11-2026", "2026/11", "", "0000-00", "9999-12"),
      oddString,
    );
    const request = fc.oneof(
      fc.tuple(fc.option(limit), fc.option(cursor)).map(([l, c]) => `/functions?${l === null ? "" : `limit=${segment(l)}`}&${c === null ? "" : `cursor=${segment(c)}`}`),
      fc.option(limit).map((l) => `/functions/plain/logs${l === null ? "" : `?limit=${segment(l)}`}`),
      fc.option(month).map((m) => `/usage${m === null ? "" : `?month=${segment(m)}`}`),
    );
    await fc.assert(
      fc.asyncProperty(request, fc.boolean(), async (path, asFuzzer) => {
        const answer = await call("GET", path, { token: asFuzzer ? fuzzerKey : undefined });
        checkAnswer(`GET ${path}`, answer, ["invalid_limit", "invalid_request", "function_not_found"], [200], "query strings");
      }),
      fuzzSettings(150),
    );
  }, fuzzTimeout(150, 150));

  it("api keys and plans: any body answers 201/200 or a 4xx, and what a 201 made is counted", async () => {
    const account = mostly(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,20}$/), fc.oneof(oddString, fc.constantFrom("a".repeat(128), "a".repeat(129), "fuzzer", "local")));
    const body = bodyText({
      name: mostly(fc.oneof(fc.string({ maxLength: 30 }), fc.constant(null)), fc.oneof(oddString, fc.constant("n".repeat(201)))),
      admin: mostly(fc.boolean(), fc.constantFrom(0, "true", null)),
      account,
      plan: mostly(fc.constantFrom("free", "pro"), fc.oneof(fc.constantFrom("gold", "", "Free"), oddString)),
    });
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (sent, asFuzzer) => {
        const answer = await call("POST", "/api-keys", { body: sent, token: asFuzzer ? fuzzerKey : undefined });
        const code = checkAnswer(`POST /api-keys ${sent.slice(0, 300)}`, answer, ["invalid_request", "forbidden"], [201], "api keys");
        if (code !== null) return;
        expected.keys++;
        expected.accounts.add(answer.body.account);
        expect(answer.body.account).toBe(parsed(sent)?.account ?? (asFuzzer ? "fuzzer" : "local"));
      }),
      fuzzSettings(100),
    );
  }, fuzzTimeout(100, 150));
});

describe("the store afterwards", () => {
  it("holds exactly what the successful requests made, each function whole", async () => {
    await expectStoreHolds(t, expected, { local: t.adminKey, fuzzer: fuzzerKey });
  });
});
