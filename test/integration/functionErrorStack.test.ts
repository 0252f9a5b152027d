import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
}, 60_000);

afterAll(async () => {
  await t?.destroy();
});

const THROWS = `interface Item { name: string }

function check(items: Item[]): void {
  if (items.length < 2) {
    throw new Error(\`only \${items.length} item\`);
  }
}

export default async function run(name: string = "a") {
  check([{ name }]);
  return name;
}
`;

it("a function_error answers with the user-code stack, which GET /runs/{id} keeps too", async () => {
  await t.deploy("thrower", THROWS);
  const response = await t.call("POST", "/functions/thrower", { body: {} });
  expect(response.status).toBe(500);
  const body = response.body as { error: { code: string; message: string; details: { run_id: string; stack: string } } };
  expect(body.error.code).toBe("function_error");
  expect(body.error.message).toBe("only 1 item");
  expect(body.error.details.stack).toMatch(/^Error: only 1 item\n {4}at check \(automation\.ts:5:11\)\n {4}at run \(automation\.ts:10:3\)\n/);
  const run = await t.call("GET", `/runs/${body.error.details.run_id}`);
  expect((run.body as { error: { stack: string } }).error.stack).toBe(body.error.details.stack);
  const logs = await t.call("GET", "/functions/thrower/logs");
  expect((logs.body as { items: { error: unknown }[] }).items[0]?.error).toEqual({ code: "function_error", message: "only 1 item" });
}, 60_000);

it("create and update answer with the code's warnings, [] when none", async () => {
  const trap = `import { Session } from "browserfn/runtime";
export default async function run() {
  await using session = await Session.start();
  const page = await session.newPage();
  return page.title();
}`;
  const created = await t.deploy("trap", trap);
  expect(created.warnings).toEqual([expect.objectContaining({ code: "unawaited_return_in_session", line: 5 })]);
  const fixed = await t.call("PATCH", "/functions/trap", { body: { code: trap.replace("return page.title()", "return await page.title()") } });
  expect((fixed.body as { warnings: unknown[] }).warnings).toEqual([]);
  const settings = await t.call("PATCH", "/functions/trap", { body: { description: "x" } });
  expect((settings.body as { warnings: unknown[] }).warnings).toEqual([]);
  const info = await t.call("GET", "/functions/trap/info");
  expect(info.body).not.toHaveProperty("warnings");
}, 60_000);
