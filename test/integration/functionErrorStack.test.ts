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

it("the latest version's warnings are kept: create, update, a settings-only update, /info and fork answer with them, [] when none", async () => {
  const trap = `import { Session } from "browserfn/runtime";
export default async function run() {
  await using session = await Session.start();
  const page = await session.newPage();
  return page.title();
}`;
  const created = await t.deploy("trap", trap);
  const expected = [expect.objectContaining({ code: "unawaited_return_in_session", line: 5 })];
  expect(created.warnings).toEqual(expected);
  const warningsOf = (body: unknown) => (body as { warnings: unknown[] }).warnings;
  // The code still has the trap: a change of settings alone answers its warnings, and so does /info.
  const settings = await t.call("PATCH", "/functions/trap", { body: { description: "x" } });
  expect(warningsOf(settings.body)).toEqual(expected);
  expect(warningsOf((await t.call("GET", "/functions/trap/info")).body)).toEqual(expected);
  const fork = await t.call("POST", `/functions/${created.function_id}/fork`, { body: { name: "trap-copy" } });
  expect(fork.status).toBe(201);
  expect(warningsOf(fork.body)).toEqual(expected);
  expect(warningsOf((await t.call("GET", "/functions/trap-copy/info")).body)).toEqual(expected);
  const fixed = await t.call("PATCH", "/functions/trap", { body: { code: trap.replace("return page.title()", "return await page.title()") } });
  expect(warningsOf(fixed.body)).toEqual([]);
  expect(warningsOf((await t.call("GET", "/functions/trap/info")).body)).toEqual([]);
  // Another settings change keeps the fixed version's (none).
  expect(warningsOf((await t.call("PATCH", "/functions/trap", { body: { description: "y" } })).body)).toEqual([]);
}, 60_000);
