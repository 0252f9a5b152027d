import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { SECRETS_KEY_FILE } from "../../lambdas/secrets/localSecretBox";
import { openEventStream } from "../helpers/eventStream";
import { scanTable } from "../helpers/fuzzStore";
import { startTestService, type TestService } from "../helpers/localService";

// Function secrets (shared/API.md): set through the API, read only by the function's own runs
// with secrets.get, sealed at rest, and never shown: `[secret]` wherever the value would appear.

const PASSWORD = "hunter2-Pa$$w0rd-\"quoted\"-ünï";
const TOKEN = "tok_0123456789abcdef";

const USES_SECRETS = `import { secrets } from "browserfn/runtime";
export default async function run({ echo = "", mode = "ok" }: { echo?: string; mode?: string }) {
  const password = secrets.get("PASSWORD");
  console.log("logging in with", password, "and", secrets.get("TOKEN"));
  if (mode === "throw") throw new Error("login failed for password " + password);
  if (mode === "hang") { await new Promise((resolve) => setTimeout(resolve, 60_000)); }
  if (mode === "pieces") {
    // The start of a value, then the whole value a moment later: each as the run wrote it, the value redacted.
    console.log("half " + String(password).slice(0, 6));
    await new Promise((resolve) => setTimeout(resolve, 300));
    console.log("whole " + password + " then more");
  }
  return {
    password,
    nested: [{ token: secrets.get("TOKEN") }],
    missing: secrets.get("NOPE") ?? null,
    length: password?.length ?? 0,
    echoed_is_password: echo === password,
    [String(password)]: "as a key",
  };
}`;

const secretFree = (text: string) => !text.includes(PASSWORD) && !text.includes(JSON.stringify(PASSWORD).slice(1, -1)) && !text.includes(TOKEN);

describe("function secrets", () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
    await t.deploy("login", USES_SECRETS, { timeout_seconds: 3, shared: true });
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  it("sets, lists and removes secrets by name; no answer ever holds a value", async () => {
    expect((await t.call("PUT", "/functions/login/secrets/PASSWORD", { body: { value: PASSWORD } })).status).toBe(204);
    expect((await t.call("PUT", "/functions/login/secrets/TOKEN", { body: { value: "old-token" } })).status).toBe(204);
    expect((await t.call("PUT", "/functions/login/secrets/TOKEN", { body: { value: TOKEN } })).status).toBe(204); // replaced
    expect((await t.call("PUT", "/functions/login/secrets/SPARE", { body: { value: "spare" } })).status).toBe(204);
    const listed = await t.call("GET", "/functions/login/secrets");
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      { name: "PASSWORD", updated_at: expect.any(String) },
      { name: "SPARE", updated_at: expect.any(String) },
      { name: "TOKEN", updated_at: expect.any(String) },
    ]);
    expect((await t.call("DELETE", "/functions/login/secrets/SPARE")).status).toBe(204);
    const gone = await t.call("DELETE", "/functions/login/secrets/SPARE");
    expect([gone.status, gone.body.error.code]).toEqual([404, "secret_not_found"]);
    expect((await t.call("GET", "/functions/login/secrets")).body.items.map((item: { name: string }) => item.name)).toEqual(["PASSWORD", "TOKEN"]);
    const info = await t.call("GET", "/functions/login/info");
    expect(secretFree(info.text)).toBe(true);
  });

  it("refuses bad names and values, and a 51st secret", async () => {
    for (const name of ["lower", "1ABC", "A-B", "A".repeat(65)]) {
      const bad = await t.call("PUT", `/functions/login/secrets/${name}`, { body: { value: "xxxx" } });
      expect([name, bad.status, bad.body.error.code]).toEqual([name, 400, "invalid_name"]);
    }
    for (const body of [{}, { value: "" }, { value: 12 }, { value: "x".repeat(4097) }, { value: "xxxx", extra: 1 }, { value: "a[secret]b" }, { value: "abc" }]) {
      const bad = await t.call("PUT", "/functions/login/secrets/OK", { body });
      expect(bad.status).toBe(400);
    }
    // Shorter than 4 bytes: it would be redacted inside ordinary words, numbers and keys of every result.
    const short = await t.call("PUT", "/functions/login/secrets/OK", { body: { value: "abc" } });
    expect([short.status, short.body.error.code]).toEqual([400, "invalid_request"]);
    expect(short.body.error.message).toContain("at least 4 bytes");
    await t.deploy("many", "export default async () => 1;");
    for (let i = 0; i < 50; i++) expect((await t.call("PUT", `/functions/many/secrets/S${i}`, { body: { value: `value-${i}` } })).status).toBe(204);
    const over = await t.call("PUT", "/functions/many/secrets/S50", { body: { value: "value" } });
    expect([over.status, over.body.error.code]).toEqual([400, "invalid_request"]);
    expect((await t.call("PUT", "/functions/many/secrets/S7", { body: { value: "new-value" } })).status).toBe(204); // replacing is not one more
    expect((await t.call("GET", "/functions/many/secrets")).body.items).toHaveLength(50);
  }, 60_000);

  it("hands the values to the run and redacts them from its result, logs and parameters", async () => {
    const answer = await t.call("POST", "/functions/login", { body: { echo: PASSWORD } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      password: "[secret]",
      nested: [{ token: "[secret]" }],
      missing: null,
      length: PASSWORD.length,
      echoed_is_password: true, // the run got the caller's parameter as sent
      "[secret]": "as a key",
    });
    const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
    expect(run.body.params).toEqual({ echo: "[secret]" });
    expect(run.body.logs).toBe("LOG logging in with [secret] and [secret]\n");
    expect(secretFree(run.text)).toBe(true);
    // By GET, the parameter is in the query string: the stored run still shows no value.
    const byGet = await t.call("GET", `/functions/login?echo=${encodeURIComponent(PASSWORD)}`);
    expect(byGet.body.echoed_is_password).toBe(true);
    expect((await t.call("GET", `/runs/${byGet.headers.get("x-run-id")}`)).body.params).toEqual({ echo: "[secret]" });
    const logs = await t.call("GET", "/functions/login/logs");
    expect(secretFree(logs.text)).toBe(true);
  });

  it("redacts them from an error, and from the output a timed-out run kept", async () => {
    const failed = await t.call("POST", "/functions/login", { body: { mode: "throw" } });
    expect(failed.status).toBe(500);
    expect(failed.body.error.message).toContain("login failed for password [secret]");
    expect(secretFree(failed.text)).toBe(true);
    const run = await t.call("GET", `/runs/${failed.body.error.run_id ?? failed.headers.get("x-run-id")}`);
    expect(secretFree(run.text)).toBe(true);

    const hung = await t.call("POST", "/functions/login", { body: { mode: "hang" } });
    expect(hung.status).toBe(504);
    const timedOut = await t.call("GET", `/runs/${hung.headers.get("x-run-id") ?? hung.body.error.run_id}`);
    expect(timedOut.body.status).toBe("timed_out");
    expect(timedOut.body.logs).toContain("logging in with [secret] and [secret]");
    expect(secretFree(timedOut.text)).toBe(true);
  }, 30_000);

  it("redacts them from the live event stream as it is written", async () => {
    const accepted = await t.call("POST", "/functions/login", { body: { mode: "pieces" }, headers: { prefer: "respond-async" } });
    const stream = await openEventStream(t.url, `/runs/${accepted.body.run_id}/events`, { token: t.adminKey });
    await stream.ended;
    const live = stream.events.filter((event) => event.event === "log").map((event) => String(event.json.text)).join("");
    expect(live).toBe(`LOG logging in with [secret] and [secret]\nLOG half ${PASSWORD.slice(0, 6)}\nLOG whole [secret] then more\n`);
    expect(secretFree(JSON.stringify(stream.events))).toBe(true);
  }, 30_000);

  it("keeps them sealed at rest: the table never holds a value, and the key file is the service's alone", async () => {
    const items = await scanTable(t.service);
    const text = JSON.stringify(items);
    expect(items.some((item) => item.sk === "SECRETS")).toBe(true);
    expect(secretFree(text)).toBe(true);
    const key = await stat(path.join(t.dataDir, SECRETS_KEY_FILE));
    expect([key.size, key.mode & 0o777]).toEqual([32, 0o600]);
    // An automation cannot read the key file (nor anything else of the data dir).
    await t.deploy("thief", `import { readFileSync } from "node:fs";
export default async (file: string) => { try { return readFileSync(file).toString("base64"); } catch (error) { return "refused: " + (error as Error).message; } };`);
    const stolen = await t.call("POST", "/functions/thief", { body: { file: path.join(t.dataDir, SECRETS_KEY_FILE) } });
    expect(String(stolen.body)).toMatch(/^refused: /);
    expect(String(stolen.body)).not.toContain((await readFile(path.join(t.dataDir, SECRETS_KEY_FILE))).toString("base64"));
  }, 30_000);

  it("belongs to its function: another account sees 404, and a fork has none", async () => {
    const other = await t.newAccount("mallory", "pro");
    const { function_id } = (await t.call("GET", "/functions/login/info")).body;
    for (const [method, route] of [
      ["GET", `/functions/${function_id}/secrets`],
      ["PUT", `/functions/${function_id}/secrets/PASSWORD`],
      ["DELETE", `/functions/${function_id}/secrets/PASSWORD`],
    ] as const) {
      const refused = await t.call(method, route, { token: other, body: method === "PUT" ? { value: "mine now" } : undefined });
      expect([method, refused.status, refused.body.error.code]).toEqual([method, 404, "function_not_found"]);
    }
    const fork = await t.call("POST", `/functions/${function_id}/fork`, { token: other });
    expect(fork.status).toBe(201);
    expect((await t.call("GET", `/functions/${fork.body.name}/secrets`, { token: other })).body.items).toEqual([]);
    const forked = await t.call("POST", `/functions/${fork.body.name}`, { token: other, body: {} });
    expect(forked.body).toEqual({ nested: [{}], missing: null, length: 0, echoed_is_password: false, undefined: "as a key" }); // no password, no token
    // The original still has its own.
    expect((await t.call("POST", "/functions/login", { body: {} })).body.password).toBe("[secret]");
  }, 30_000);

  it("go with their function when it is deleted", async () => {
    await t.deploy("brief", "export default async () => 1;");
    const { function_id } = (await t.call("GET", "/functions/brief/info")).body;
    await t.call("PUT", "/functions/brief/secrets/GONE", { body: { value: "soon gone" } });
    expect((await t.call("DELETE", "/functions/brief")).status).toBe(204);
    const items = await scanTable(t.service);
    expect(items.filter((item) => item.pk === `FNID#${function_id}`)).toEqual([]);
  });
});

describe("a function without secrets", () => {
  it("never reads the secrets item when it runs; one that has secrets does", async () => {
    const reads: string[] = [];
    const t = await startTestService({
      serviceOptions: {
        wrapStoreClient: (doc) => ({
          send: ((command: { input?: { Key?: { pk?: string; sk?: string } } }) => {
            if (command.input?.Key?.sk === "SECRETS") reads.push(String(command.input.Key.pk));
            return doc.send(command as never);
          }) as typeof doc.send,
        }),
      },
    });
    try {
      await t.deploy("plain", "export default async () => 1;");
      await t.deploy("keyed", "export default async () => 2;");
      await t.call("PUT", "/functions/keyed/secrets/TOKEN", { body: { value: "tok-123456" } });
      reads.length = 0;
      expect((await t.call("POST", "/functions/plain")).status).toBe(200);
      expect(reads).toEqual([]);
      expect((await t.call("POST", "/functions/keyed")).status).toBe(200);
      const keyed = (await t.call("GET", "/functions/keyed/info")).body.function_id;
      expect(reads).toEqual([`FNID#${keyed}`]);
      // The note stays after the last secret goes: a run still looks (and finds none).
      await t.call("DELETE", "/functions/keyed/secrets/TOKEN");
      reads.length = 0;
      expect((await t.call("POST", "/functions/keyed")).status).toBe(200);
      expect(reads).toEqual([`FNID#${keyed}`]);
      expect((await t.call("GET", "/functions/keyed/info")).body).not.toHaveProperty("has_secrets");
    } finally {
      await t.destroy();
    }
  }, 60_000);
});
