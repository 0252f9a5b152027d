import { expectError } from "../helpers/http";
import { type TestService, startTestService } from "../helpers/localService";

// GET /runs: the account's runs across its functions, newest first, with the filters the
// dashboard needs, a cursor that pages on and belongs to the account, and precise errors.

const ECHO_FN = `export default async function run(n: number) { return n; }`;
const FAILING_FN = `export default async function run() { throw new Error("no"); }`;

let t: TestService;
let key: string;
let otherKey: string;
/** Run ids by function, oldest first. */
const ids: Record<string, string[]> = { echo: [], failing: [] };

beforeAll(async () => {
  t = await startTestService();
  key = await t.newAccount("lister", "pro");
  otherKey = await t.newAccount("someone-else", "pro");
  await t.deploy("echo", ECHO_FN, {}, key);
  await t.deploy("failing", FAILING_FN, {}, key);
  await t.deploy("echo", ECHO_FN, {}, otherKey);
  for (let n = 0; n < 5; n++) {
    const answer = await t.call("POST", "/functions/echo", { body: { n }, token: key });
    expect(answer.status).toBe(200);
    ids.echo?.push(String(answer.headers.get("x-run-id")));
    if (n % 2 === 0) {
      const failed = await t.call("POST", "/functions/failing", { token: key });
      expect(failed.status).toBe(500);
      ids.failing?.push(String(failed.headers.get("x-run-id")));
    }
  }
  expect((await t.call("POST", "/functions/echo", { body: { n: 9 }, token: otherKey })).status).toBe(200);
}, 60_000);

afterAll(() => t?.destroy());

const list = (query: string, token = key) => t.call("GET", `/runs${query}`, { token });
const runIds = (body: { items: { run_id: string }[] }) => body.items.map((item) => item.run_id);
const newestFirst = (runs: string[]) => [...runs].sort().reverse();

describe("GET /runs", () => {
  it("lists the account's runs of every function, newest first, and nothing of another account", async () => {
    const answer = await list("");
    expect(answer.status).toBe(200);
    expect(runIds(answer.body)).toEqual(newestFirst([...(ids.echo ?? []), ...(ids.failing ?? [])]));
    expect(answer.body.next_cursor).toBeNull();
    // The newest: the last failing run.
    expect(answer.body.items[0]).toEqual({
      run_id: ids.failing?.at(-1),
      function_id: expect.stringMatching(/^fn_/),
      function_name: "failing",
      version: "1",
      trigger: "http",
      status: "failed",
      error: { code: "function_error", message: "no" },
      queued_at: expect.any(String),
      started_at: expect.any(String),
      finished_at: expect.any(String),
      duration_ms: expect.any(Number),
    });
  });

  it("filters by function (name or id), status and trigger", async () => {
    expect(runIds((await list("?function=failing")).body)).toEqual(newestFirst(ids.failing ?? []));
    const fnId = (await t.call("GET", "/functions/echo/info", { token: key })).body.function_id;
    expect(runIds((await list(`?function=${fnId}`)).body)).toEqual(newestFirst(ids.echo ?? []));
    const failed = (await list("?status=failed")).body;
    expect(runIds(failed)).toEqual(newestFirst(ids.failing ?? []));
    expect(failed.items[0].error).toMatchObject({ code: "function_error" });
    expect(runIds((await list("?status=succeeded&function=echo")).body)).toEqual(newestFirst(ids.echo ?? []));
    expect(runIds((await list("?status=canceled")).body)).toEqual([]);
    expect(runIds((await list("?trigger=schedule")).body)).toEqual([]);
    expect((await list("?trigger=http")).body.items).toHaveLength(8);
    // Another account's function id lists nothing of theirs; its name is no function of ours.
    const theirs = (await t.call("GET", "/functions/echo/info", { token: otherKey })).body.function_id;
    expect(runIds((await list(`?function=${theirs}`)).body)).toEqual([]);
    expectError(await list("?function=nope"), 404, "function_not_found");
  });

  it("pages on with next_cursor until the end", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const answer: { status: number; body: { items: { run_id: string }[]; next_cursor: string | null } } = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(answer.status).toBe(200);
      seen.push(...runIds(answer.body));
      cursor = answer.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(newestFirst([...(ids.echo ?? []), ...(ids.failing ?? [])]));
    const filtered = await list("?status=succeeded&limit=2");
    const rest = await list(`?status=succeeded&limit=10&cursor=${filtered.body.next_cursor}`);
    expect([...runIds(filtered.body), ...runIds(rest.body)]).toEqual(newestFirst(ids.echo ?? []));
  });

  it("answers bad filters and cursors with precise errors", async () => {
    expect(expectError(await list("?status=done"), 400, "invalid_request").details.issues[0].field).toBe("status");
    expect(expectError(await list("?trigger=cron"), 400, "invalid_request").details.issues[0].field).toBe("trigger");
    expect(expectError(await list("?colour=red"), 400, "invalid_request").message).toContain("colour");
    expectError(await list("?limit=0"), 400, "invalid_limit");
    expectError(await list("?limit=101"), 400, "invalid_limit");
    expectError(await list("?limit=ten"), 400, "invalid_limit");
    expectError(await list("?cursor=abc"), 400, "invalid_cursor");
    expectError(await list("?cursor=%7B%7D"), 400, "invalid_cursor");
    const first = await list("?limit=2");
    const cursor = String(first.body.next_cursor);
    expect((await list(`?limit=2&cursor=${cursor}`)).status).toBe(200);
    // Another account's cursor, and one changed to point elsewhere, give nothing.
    expectError(await list(`?cursor=${cursor}`, otherKey), 400, "invalid_cursor");
    const decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...decoded, r: "run_zzzzzzzzzzzzzzzzzzzzzzzzzz" })).toString("base64url");
    expectError(await list(`?cursor=${forged}`), 400, "invalid_cursor");
    expectError(await list("", "bfn_not_a_key"), 401, "invalid_token");
  });
});
