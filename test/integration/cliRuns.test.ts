import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { LogEntry } from "../../client";
import { RunFollower } from "../../bin/cli/followRuns";
import { FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";
import { type TestService, startTestService } from "../helpers/localService";

describe("browserfn runs, against a real local service", () => {
  let svc: TestService;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    svc = await startTestService();
    home = await mkdtemp(path.join(tmpdir(), "browserfn-cli-runs-"));
    env = cliEnv(home, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
    expect((await cli("deploy", path.join(FIXTURES, "saves.ts"))).code).toBe(0);
    expect((await cli("deploy", path.join(FIXTURES, "fails.ts"))).code).toBe(0);
  });
  afterAll(async () => {
    await svc?.destroy();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("runs get: prints the run, and with --artifacts saves every artifact it kept into the directory", async () => {
    const invoked = await svc.call("POST", "/functions/saves", { body: { text: "hi" } });
    expect(invoked.status).toBe(200);
    const runId = invoked.headers.get("x-run-id") ?? "";

    const shown = await cli("runs", "get", runId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^run:\\s+${runId}\\n`));
    expect(shown.stdout).toMatch(/function:\s+saves \(fn_\w+\)\n/);
    expect(shown.stdout).toMatch(/status:\s+succeeded\n/);
    expect(shown.stdout).toMatch(/duration:\s+\d+/);
    expect(shown.stdout).toMatch(/\nparams:\s+\{"text":"hi"\}\n/);
    expect(shown.stdout).toContain('result:\n{\n  "saved": 3\n}\n');
    expect(shown.stdout).toMatch(/\nlogs:\n(LOG )?saved 3 artifacts for hi\n\nartifacts:\n/);
    // Without --artifacts: listed (name, type, bytes), not saved.
    const table = shown.stdout.slice(shown.stdout.indexOf("\nartifacts:\n") + "\nartifacts:\n".length).trimEnd().split("\n");
    expect(table[0]).toMatch(/^NAME\s+TYPE\s+BYTES\s+CREATED$/);
    expect(table.slice(1).map((row) => /^(\S+)\s+(.+?)\s+(\d+)\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/.exec(row)?.slice(1))).toEqual([
      ["bytes.bin", "application/octet-stream", "4"],
      ["data.json", expect.stringMatching(/^application\/json/), "13"],
      ["note.txt", expect.stringMatching(/^text\/plain/), "2"],
    ]);
    expect(shown.stderr).toContain(`Save them with: browserfn runs get ${runId} --artifacts DIR`);
    expect(await readdir(home)).not.toContain("artifacts");

    const dir = path.join(home, "artifacts", "of-run");
    const saved = await cli("runs", "get", runId, "--artifacts", dir);
    expect(saved.code).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(["bytes.bin", "data.json", "note.txt"]);
    expect(await readFile(path.join(dir, "note.txt"), "utf8")).toBe("hi");
    expect(JSON.parse(await readFile(path.join(dir, "data.json"), "utf8"))).toEqual({ text: "hi" });
    expect([...(await readFile(path.join(dir, "bytes.bin")))]).toEqual([0, 1, 2, 255]);
    expect(saved.stdout).toMatch(/artifacts \(saved to .*of-run\):\nNAME\s+TYPE\s+BYTES\s+CREATED\nbytes\.bin\s+application\/octet-stream\s+4\s/);
    expect(saved.stderr).toContain(`Saved ${path.join(dir, "note.txt")} (2 bytes, text/plain`);

    // Again, as JSON, into the same directory: the files are replaced.
    const asJson = await cli("runs", "get", runId, "--artifacts", dir, "--json");
    expect(asJson.code).toBe(0);
    const body = JSON.parse(asJson.stdout);
    expect(body.run).toMatchObject({ run_id: runId, status: "succeeded", result: { saved: 3 }, params: { text: "hi" } });
    expect(body.artifacts).toEqual(
      ["bytes.bin", "data.json", "note.txt"].map((name) => ({
        name,
        content_type: expect.any(String),
        bytes: { "bytes.bin": 4, "data.json": 13, "note.txt": 2 }[name],
        created_at: expect.any(String),
        attempt: 1,
        url: `${svc.url}/runs/${runId}/artifacts/${name}`,
        path: path.join(dir, name),
      })),
    );
    expect(JSON.parse((await cli("runs", "get", runId, "--json")).stdout)).toMatchObject({ run_id: runId, logs: expect.stringContaining("saved 3 artifacts for hi\n") });
  });

  it("runs get: a failed run's error with the stack the service kept (in the user's lines), and no artifacts; an unknown run exits 3", async () => {
    const failed = await svc.call("POST", "/functions/fails", { body: { reason: "on a Tuesday" } });
    const runId = String((failed.body as { error: { details: { run_id: string } } }).error.details.run_id);
    const shown = await cli("runs", "get", runId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/status:\s+failed\n/);
    expect(shown.stdout).toContain("\nerror: function_error: failed on a Tuesday\n");
    expect(shown.stdout).not.toContain("result:");
    const stack = ((await svc.call("GET", `/runs/${runId}`)).body as { error: { stack?: string } }).error.stack ?? "";
    expect(stack).toMatch(/^Error: failed on a Tuesday\n {4}at run \(automation\.ts:3:9\)\n/);
    expect(shown.stdout).toContain(`\nerror: function_error: failed on a Tuesday\n${stack.split("\n").map((line) => `  ${line}`).join("\n")}\n\nlogs:\n(none)\n\nartifacts:\n(none)\n`);

    const unknown = await cli("runs", "get", "run_00000000000000000000000000");
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("run_not_found");
  });

  it("runs list: a function's latest runs, newest first", async () => {
    const ids: string[] = [];
    for (const text of ["one", "two"]) ids.push((await svc.call("POST", "/functions/saves", { body: { text } })).headers.get("x-run-id") ?? "");
    const list = await cli("runs", "list", "saves", "--limit", "2");
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^RUN\s+FUNCTION\s+STATUS\s+STARTED\s+DURATION\s+VERSION\s+TRIGGER\s+ERROR$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([ids[1], ids[0]]);
    expect(lines[1]).toMatch(/^run_\w+\s+saves\s+succeeded\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\d+(\.\d)? m?s\s+1\s+http\s+-$/);
    const asJson = JSON.parse((await cli("runs", "list", "saves", "--json")).stdout);
    expect(asJson.items.slice(0, 2).map((e: LogEntry) => e.run_id)).toEqual([ids[1], ids[0]]);
    expect((await cli("runs", "list", "nope")).stderr).toContain("function_not_found");
  });

  it("runs list: the account's runs across functions, filtered; runs cancel: stops a run", async () => {
    const failed = (await svc.call("POST", "/functions/fails", { body: {} })).headers.get("x-run-id") ?? "";
    const all = JSON.parse((await cli("runs", "list", "--json")).stdout);
    expect(new Set(all.items.map((r: { function_name: string }) => r.function_name))).toEqual(new Set(["saves", "fails"]));
    expect(all.items[0]).toMatchObject({ run_id: failed });
    const onlyFailed = JSON.parse((await cli("runs", "list", "--status", "failed", "--function", "fails", "--json")).stdout);
    expect(onlyFailed.items[0]).toMatchObject({ run_id: failed, status: "failed", function_name: "fails" });
    const bad = await cli("runs", "list", "--status", "done");
    expect([bad.code, bad.stderr]).toEqual([3, expect.stringContaining("invalid_request")]);

    const finished = await cli("runs", "cancel", failed);
    expect([finished.code, finished.stderr]).toEqual([3, expect.stringContaining("run_finished")]);
    await svc.deploy("waits", "export default async function run(ms: number) { await new Promise((r) => setTimeout(r, ms)); return ms; }");
    const accepted = await svc.call("POST", "/functions/waits", { body: { ms: 60_000 }, headers: { prefer: "respond-async" } });
    const canceled = await cli("runs", "cancel", String(accepted.body.run_id), "--json");
    expect(canceled.code).toBe(0);
    expect(JSON.parse(canceled.stdout)).toMatchObject({ run_id: accepted.body.run_id, status: "canceled", error: { code: "run_canceled" } });
  });
});

describe("browserfn runs get --artifacts, when a service lists a name that is not a file name", () => {
  let server: Server;
  let home: string;
  const runId = "run_0123456789abcdefghjkmnpqrs";
  const listed: { name: string }[] = [];

  beforeAll(async () => {
    home = await mkdtemp(path.join(tmpdir(), "browserfn-cli-names-"));
    // A stand-in for a service gone wrong (the real one never lists such a name): what the CLI writes must stay in the directory.
    server = createServer((request, response) => {
      const json = (body: unknown) => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (request.url === `/runs/${runId}`) return json({ run_id: runId, function_id: "fn_x", function_name: "x", version: "1", trigger: "http", status: "succeeded", params: {}, result: null, error: null, logs: "" });
      if (request.url === `/runs/${runId}/artifacts`) return json({ items: listed.map(({ name }) => ({ name, content_type: "text/plain", bytes: 1, created_at: "2026-01-01T00:00:00.000Z", url: "" })) });
      response.writeHead(200, { "content-type": "text/plain" }).end("x");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (home) await rm(home, { recursive: true, force: true });
  });

  it.each(["../escape.txt", "..", "sub/file.txt", "ok.txt\u0000"])("refuses %j and writes nothing", async (name) => {
    listed.splice(0, listed.length, { name: "fine.txt" }, { name });
    const env = cliEnv(home, { BROWSERFN_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, BROWSERFN_API_KEY: "bfn_stand_in_stand_in" });
    const dir = path.join(home, "out", "inner");
    const result = await runCli(["runs", "get", runId, "--artifacts", dir], env);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`The service listed the artifact ${JSON.stringify(name)} as a name that is not a plain file name`);
    expect(result.stderr).toContain("nothing was saved");
    expect(await readdir(home)).toEqual([]);
  });
});

describe("RunFollower", () => {
  const entry = (n: number, status: LogEntry["status"] = "succeeded"): LogEntry =>
    ({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), status, duration: 1, run_id: `run_${n}`, version: "1", trigger: "http", error: null }) as LogEntry;
  const page = (...entries: LogEntry[]) => [...entries].reverse(); // the API lists newest first

  it("gives each run once, when it has ended, oldest first, and remembers one page of runs at most", () => {
    const follower = new RunFollower(page(entry(1), entry(2), entry(3, "running")));
    expect(follower.next(page(entry(1), entry(2), entry(3, "running"), entry(4, "queued")))).toEqual([]);
    expect(follower.next(page(entry(2), entry(3), entry(4), entry(5)))).toEqual([entry(3), entry(4), entry(5)]);
    expect(follower.next(page(entry(3), entry(4), entry(5), entry(6)))).toEqual([entry(6)]);
    for (let n = 7; n < 1000; n++) follower.next(page(entry(n - 3), entry(n - 2), entry(n - 1), entry(n)));
    expect(follower.remembered).toBeLessThanOrEqual(4);
  });
});
