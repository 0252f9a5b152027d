import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type TestService, startTestService } from "../helpers/localService";
import { offlineEnv } from "../helpers/offlineEnv";
import { typecheck } from "../helpers/typecheck";

const ROOT = path.resolve(__dirname, "../..");
const FIXTURE = path.join(ROOT, "test/fixtures/openapi-client");
const run = promisify(execFile);

/** What program.ts prints (its Report, typed there by the generated types). */
interface Report {
  created: { status: number; name: string; location: string | null };
  invoked: { status: number; result: unknown; runId: string | null; version: string | null; durationMs: string | null };
  accepted: { status: number; run: { run_id: string; status: string; status_url: string }; location: string | null; final: string; result: unknown };
  logs: { status: number; statuses: string[]; runIds: string[] };
  forked: { status: number; name: string; reference: string | null };
  missing: { status: number; error?: { code: string; message: string; request_id: string; details: Record<string, unknown> } };
  badParameter: { status: number; code?: string };
}

/**
 * The document the running service serves is enough to write a typed client: types generated
 * by openapi-typescript, a program using openapi-fetch (test/fixtures/openapi-client/program.ts)
 * type-checked against them and then run against the service. Our own client is type-checked
 * against the same types (clientCheck.ts there).
 */
describe("a client generated from GET /openapi.json", () => {
  let t: TestService;
  let dir: string;

  beforeAll(async () => {
    t = await startTestService();
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-openapi-client-"));
  });
  afterAll(async () => {
    await t?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("type-checks, with browserfn/client beside it, and runs create, invoke (200, 202), logs, fork and a 404", async () => {
    const served = await fetch(`${t.url}/openapi.json`);
    expect(served.status).toBe(200);
    await writeFile(path.join(dir, "openapi.json"), await served.text());
    await run(process.execPath, [path.join(ROOT, "node_modules/openapi-typescript/bin/cli.js"), "openapi.json", "--output", "schema.d.ts"], {
      cwd: dir,
      env: offlineEnv(),
      timeout: 30_000,
    });
    for (const file of ["program.ts", "clientCheck.ts"]) await copyFile(path.join(FIXTURE, file), path.join(dir, file));
    await writeFile(path.join(dir, "project.ts"), `export type * from ${JSON.stringify(path.join(ROOT, "client/index"))};\n`);
    await symlink(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");

    expect(typecheck([path.join(dir, "program.ts"), path.join(dir, "clientCheck.ts")])).toEqual([]);

    const { stdout } = await run(process.execPath, ["--import", "tsx", path.join(dir, "program.ts")], {
      cwd: ROOT,
      env: { ...offlineEnv(), NO_PROXY: "127.0.0.1", no_proxy: "127.0.0.1", BROWSERFN_URL: t.url, BROWSERFN_API_KEY: t.adminKey },
      timeout: 40_000,
    });
    const report = JSON.parse(stdout) as Report;

    expect(report.created).toEqual({ status: 201, name: "greet", location: `${t.url}/functions/greet/info` });
    expect(report.invoked).toMatchObject({ status: 200, result: { greeting: "hello openapi", times: 2 }, version: "1" });
    expect(report.invoked.runId).toMatch(/^run_[0-9a-z]{26}$/);
    const kept = await t.service.deps.store.runs.get(report.invoked.runId ?? "");
    expect([kept?.request_origin, kept?.sdk_version]).toEqual(["openapi-fetch", "generated/1"]);
    expect(Number(report.invoked.durationMs)).toBeGreaterThanOrEqual(0);
    expect(report.accepted).toMatchObject({ status: 202, final: "succeeded", result: { greeting: "hello later", times: 1 } });
    expect(report.accepted.location).toBe(report.accepted.run.status_url);
    expect(report.logs.status).toBe(200);
    expect(report.logs.runIds).toEqual(expect.arrayContaining([report.invoked.runId, report.accepted.run.run_id]));
    expect(report.forked).toMatchObject({ status: 201, name: "greet-copy" });
    expect(report.forked.reference).toMatch(/^fn_/);
    expect(report.missing).toMatchObject({ status: 404, error: { code: "function_not_found", details: { ref: "no-such-function" } } });
    expect(report.missing.error?.request_id).toEqual(expect.any(String));
    expect(report.badParameter).toEqual({ status: 400, code: "invalid_parameters" });
  }, 60_000);
});
