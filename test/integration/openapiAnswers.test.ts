import { startTestService, type TestService } from "../helpers/localService";
import { answerSchema, documentChecker } from "../helpers/openapiSchemas";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * What the running service answers fits the document it serves: each answer body is checked
 * against its operation's schema in GET /openapi.json (formats too: every date-time is one),
 * and an invocation's result against the 200 schema of the function's own document.
 */

// Declares an object return type and returns more members than it declares, as TypeScript's
// structural types allow; keeps an artifact and reads a secret.
const PAGE_FN = `import { artifacts } from "browserfn/runtime";
interface Page { title: string; meta: { lang: string } }
export default async function run(title: string = "Hello"): Promise<Page> {
  await artifacts.save("note.txt", "kept");
  const page: any = { title, meta: { lang: "en", charset: "utf-8" }, fetched_at: new Date().toISOString() };
  return page;
}
`;

let t: TestService;
let doc: Json;
let check: (schema: Json, value: unknown) => string[];

beforeAll(async () => {
  t = await startTestService();
  doc = (await t.call("GET", "/openapi.json", { token: null })).body;
  check = documentChecker(doc);
});
afterAll(() => t.destroy());

/** The answer's problems against the document (none: []), named by the request. */
async function fits(method: string, path: string, template: string, options: { body?: unknown; status?: number } = {}): Promise<{ problems: string[]; body: Json }> {
  const answer = await t.call(method, path, { body: options.body });
  const status = options.status ?? 200;
  if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return { problems: check(answerSchema(doc, template, method, status), answer.body).map((problem) => `${method} ${path}: ${problem}`), body: answer.body };
}

describe("the service's answers and the document it serves", () => {
  it("fit their operations' schemas: records, runs, logs, versions, artifacts, secrets, keys, usage", async () => {
    const problems: string[] = [];
    const created = await fits("POST", "/functions", "/functions", { body: { name: "page", code: PAGE_FN, schedule: "@daily" }, status: 201 });
    problems.push(...created.problems);
    expect(created.body.next_run_at).toEqual(expect.any(String));
    expect((await t.call("PUT", "/functions/page/secrets/API_TOKEN", { body: { value: "s3cret-value" } })).status).toBe(204);

    const invoked = await t.call("POST", "/functions/page", { body: {} });
    expect(invoked.status).toBe(200);
    const runId = invoked.headers.get("x-run-id") ?? "";

    for (const [path, template] of [
      ["/functions", "/functions"],
      ["/functions/page/info", "/functions/{ref}/info"],
      ["/functions/page/versions", "/functions/{ref}/versions"],
      ["/functions/page/versions/1", "/functions/{ref}/versions/{version}"],
      [`/runs/${runId}`, "/runs/{run_id}"],
      ["/functions/page/logs", "/functions/{ref}/logs"],
      ["/functions/page/metrics", "/functions/{ref}/metrics"],
      [`/runs/${runId}/artifacts`, "/runs/{run_id}/artifacts"],
      ["/functions/page/secrets", "/functions/{ref}/secrets"],
      ["/api-keys", "/api-keys"],
      ["/usage", "/usage"],
      ["/functions/page/openapi.json", "/functions/{ref}/openapi.json"],
    ] as const) {
      problems.push(...(await fits("GET", path, template)).problems);
    }
    expect(problems).toEqual([]);
  });

  it("has a function's result fit the 200 schema of the function's own document, though it has more members than declared", async () => {
    const own = (await t.call("GET", "/functions/page/openapi.json")).body;
    const invoked = await t.call("POST", "/functions/page", { body: { title: "More" } });
    expect(invoked.status).toBe(200);
    expect(invoked.body).toMatchObject({ title: "More", meta: { lang: "en", charset: "utf-8" } });
    expect(documentChecker(own)(answerSchema(own, "/functions/page", "post", 200), invoked.body)).toEqual([]);
    expect(invoked.headers.get("x-duration-ms")).toMatch(/^\d+$/);
  });

  it("fit for batches: the 202, the batch, its runs, a batch run and the 400 of bad items", async () => {
    const accepted = await fits("POST", "/functions/page/batch", "/functions/{ref}/batch", { body: { items: [{ title: "A" }, {}] }, status: 202 });
    const batchId = accepted.body.batch_id as string;
    const problems = [...accepted.problems];
    for (let i = 0; i < 100; i++) {
      if ((await t.call("GET", `/batches/${batchId}`)).body.finished_at !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    problems.push(...(await fits("GET", `/batches/${batchId}`, "/batches/{batch_id}")).problems);
    problems.push(...(await fits("GET", `/batches/${batchId}/runs?limit=1`, "/batches/{batch_id}/runs")).problems);
    problems.push(...(await fits("GET", `/runs/${accepted.body.run_ids[0]}`, "/runs/{run_id}")).problems);
    problems.push(...(await fits("POST", "/functions/page/batch", "/functions/{ref}/batch", { body: { items: [{ title: 1 }] }, status: 400 })).problems);
    problems.push(...(await fits("GET", "/batches/batch_01m8ffsprh0jy619vt4jnnc0k2", "/batches/{batch_id}", { status: 404 })).problems);
    expect(problems).toEqual([]);
  });

  it("keeps a run's params as sent, defaults not filled in, as the document says", async () => {
    const invoked = await t.call("POST", "/functions/page", { body: {} });
    const run = (await t.call("GET", `/runs/${invoked.headers.get("x-run-id")}`)).body;
    expect(run.params).toEqual({});
    expect(doc.components.schemas.Run.properties.params.description).toMatch(/not filled in/);
  });
});
