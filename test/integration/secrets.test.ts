/**
 * Secrets hygiene: bearer tokens (API keys, JWTs) never reach the logs, error bodies or the
 * table, wherever a request puts them; only the SHA-256 of a key is stored, in its key item.
 * A secret the caller deliberately passes as a function parameter is user data: it is kept
 * with that run (params and result) like any parameter, and nowhere else.
 */
import { createHash } from "node:crypto";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { ECHO_FN } from "../helpers/code";
import type { ApiResponse } from "../helpers/http";
import { type CapturingService, startCapturingService } from "../helpers/fuzzService";
import { scanTable } from "../helpers/fuzzStore";

let t: CapturingService;
beforeAll(async () => {
  t = await startCapturingService();
});
afterAll(() => t.destroy());

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Every 16-character window of a secret: finding any of them means part of it leaked. */
function windows(secret: string): string[] {
  return Array.from({ length: secret.length - 15 }, (_, i) => secret.slice(i, i + 16));
}

function leaks(texts: string[], secret: string): string[] {
  const parts = windows(secret);
  return texts.filter((text) => parts.some((part) => text.includes(part)));
}

/** An item as searchable text (binary code parts as latin-1). */
function itemText(item: Record<string, unknown>): string {
  return JSON.stringify(item, (_key, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : value));
}

it("keeps API keys and tokens out of logs, error bodies and the table, wherever a request puts them", async () => {
  const created = await t.call("POST", "/api-keys", { body: { account: "alice", plan: "free", name: "alice laptop" } });
  expect(created.status).toBe(201);
  const user: string = created.body.key;
  const wrong = generateApiKey(); // never registered
  const jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJtYWxsb3J5IiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2lnbmF0dXJlLXRoYXQtaXMtbm90LXJlYWw";
  const deliberate = generateApiKey(); // a secret the user chooses to pass to their automation
  const bearerSecrets = { admin: t.adminKey, user, wrong, jwt };

  const answers: ApiResponse[] = [];
  const as = (token: string | null) => async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const answer = await t.call(method, path, { token, body, headers });
    answers.push(answer);
    return answer;
  };
  const alice = as(user);
  expect((await alice("POST", "/functions", { name: "echo", code: ECHO_FN })).status).toBe(201);

  // Wrong and odd credentials.
  for (const authorization of [`Bearer ${wrong}`, `Bearer ${jwt}`, `Basic ${Buffer.from(`x:${user}`).toString("base64")}`, `Bearer ${user} ${user}`, user, `Token ${jwt}`]) {
    expect((await as(null)("GET", "/functions", undefined, { authorization })).status).toBe(401);
  }
  // Keys in the query string, where they do not belong.
  expect((await alice("GET", `/functions?token=${user}&api_key=${user}&access_token=${jwt}`)).status).toBe(200);
  expect((await alice("GET", `/functions/echo?message=hi&api_key=${user}&token=${jwt}`)).status).toBe(400);
  expect((await alice("GET", `/functions?limit=${user}`)).status).toBe(400);
  expect((await alice("GET", `/functions?cursor=${user}`)).status).toBe(400);
  expect((await alice("GET", `/usage?month=${user}`)).status).toBe(400);
  // Keys in paths: a key for a key id, a ref, a run id, an account.
  expect((await alice("DELETE", `/api-keys/${user}`)).status).toBe(404);
  expect((await alice("GET", `/functions/${user}/info`)).status).toBe(404);
  expect((await alice("GET", `/functions/${jwt}/versions`)).status).toBe(404);
  expect((await alice("GET", `/runs/${user}`)).status).toBe(404);
  expect((await as(t.adminKey)("PUT", `/accounts/${user}/plan`, { plan: "pro" })).status).toBe(404);
  // Keys in headers and bodies that provoke errors.
  expect((await alice("POST", "/functions/echo", { message: "x" }, { "x-function-version": user })).status).toBe(404);
  expect((await alice("POST", "/functions/echo", { message: "x", times: user })).status).toBe(400);
  expect((await alice("POST", "/functions/echo", { message: "x", [user]: 1 })).status).toBe(400);
  expect((await alice("POST", "/functions", { name: user, code: ECHO_FN })).status).toBe(400);
  expect((await alice("POST", "/functions", { name: "leaky", code: user })).status).toBe(400);
  expect((await alice("POST", "/functions", { name: "leaky", code: `export default async () => 1;\n${user} ${jwt} (` })).status).toBe(400);
  expect((await alice("POST", "/functions", `{"name": "leaky", "code": ${user}}`)).status).toBe(400);
  expect((await alice("POST", "/functions", { name: "leaky", code: ECHO_FN, schedule: user, schedule_timezone: jwt })).status).toBe(400);
  expect((await alice("POST", "/api-keys", { account: user })).status).toBe(403);
  expect((await alice("POST", "/api-keys", { name: "x", plan: user })).status).toBe(403);
  expect((await alice("PATCH", "/functions/echo", { code: `export default async (${user}) => 1;`, extra: user })).status).toBe(400);
  // Runs made with a bearer key, sync and async; one of them passes a secret on purpose.
  const deliberateRun = await alice("POST", "/functions/echo", { message: deliberate });
  expect(deliberateRun.status).toBe(200);
  expect(deliberateRun.body).toEqual({ echo: [deliberate] });
  const asyncRun = await alice("POST", "/functions/echo", { message: "later" }, { prefer: "respond-async" });
  expect(asyncRun.status).toBe(202);
  const queryRun = await alice("GET", "/functions/echo?message=plain", undefined, { "x-service-request-origin": `cli ${user}`, "x-service-sdk-version": jwt });
  expect(queryRun.status).toBe(200);
  for (const run of [deliberateRun, asyncRun, queryRun]) {
    let view: ApiResponse;
    do view = await alice("GET", `/runs/${run.headers.get("x-run-id")}`);
    while (view.body.status === "queued" || view.body.status === "running");
    expect(view.body.status).toBe("succeeded");
  }
  expect((await alice("GET", "/functions/echo/logs")).status).toBe(200);
  expect((await alice("GET", "/api-keys")).status).toBe(200);

  const items = await scanTable(t.service);
  const itemTexts = items.map(itemText);
  const errorBodies = answers.filter((a) => a.status >= 400).map((a) => a.text);
  const logLines = [...t.requestLog, ...t.errorLog];
  expect(t.requestLog.length).toBeGreaterThanOrEqual(answers.length);

  for (const [which, secret] of Object.entries(bearerSecrets)) {
    expect({ which, inLogs: leaks(logLines, secret) }).toEqual({ which, inLogs: [] });
    expect({ which, inErrors: leaks(errorBodies, secret) }).toEqual({ which, inErrors: [] });
    expect({ which, inTable: leaks(itemTexts, secret) }).toEqual({ which, inTable: [] });
  }
  // Of the two registered keys, only the hash is kept, in its own key item and nowhere else.
  for (const key of [t.adminKey, user]) {
    const holders = items.filter((item) => itemText(item).includes(sha256(key)));
    expect(holders.map((item) => [item.pk, item.sk])).toEqual([[`KEY#${sha256(key)}`, "KEY"]]);
  }
  // The key list shows a 10-character prefix, never more.
  const listed = answers.at(-1)?.text ?? "";
  expect(leaks([listed], user)).toEqual([]);
  expect(listed).toContain(user.slice(0, 10));

  // The secret passed on purpose: in that run's params and result, in no other item, no log line.
  const holders = items.filter((item) => itemText(item).includes(deliberate));
  expect(holders.map((item) => [item.pk, item.sk])).toEqual([[`RUN#${deliberateRun.headers.get("x-run-id")}`, "RUN"]]);
  expect(leaks(logLines, deliberate)).toEqual([]);
  // The free-text headers a run keeps hold no secret either.
  const kept = items.find((item) => item.run_id === queryRun.headers.get("x-run-id"));
  expect([kept?.request_origin, kept?.sdk_version]).toEqual(["cli [redacted]", "[redacted]"]);
  // The paths that carried a key are logged, redacted.
  expect(t.requestLog.filter((line) => line.includes("/api-keys/[redacted]") || line.includes("/functions/[redacted]/info"))).toHaveLength(2);
});
