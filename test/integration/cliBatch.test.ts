import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { BrowserfnClient, ValidationError } from "../../client";
import { ECHO_FN } from "../helpers/code";
import { type TestService, startTestService } from "../helpers/localService";
import { cliEnv, runCli } from "../fixtures/cli/runCli";

// `browserfn invoke NAME --batch items.jsonl` and the client's batch methods, against a real service.

describe("batches from the CLI and the client", () => {
  let svc: TestService;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let client: BrowserfnClient;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    svc = await startTestService();
    dir = await mkdtemp(path.join(tmpdir(), "browserfn-cli-batch-"));
    env = cliEnv(dir, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
    client = new BrowserfnClient({ baseUrl: svc.url, apiKey: svc.adminKey });
    await svc.deploy("echo", ECHO_FN);
  }, 60_000);
  afterAll(async () => {
    await svc?.destroy();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const runsOfEcho = async () => (await client.getLogs("echo", { limit: 1000 })).items.length;

  it("reports bad lines by number and sends nothing", async () => {
    const file = path.join(dir, "bad.jsonl");
    await writeFile(file, '{"message": "a"}\n\n{"message": \n[1, 2]\n{"message": "ok"}\n"text"\n');
    const before = await runsOfEcho();
    const result = await cli("invoke", "echo", "--batch", file);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("3 bad line(s); nothing was sent");
    expect(result.stderr).toMatch(/line 3: not valid JSON/);
    expect(result.stderr).toContain("line 4: not a JSON object of parameters (got an array)");
    expect(result.stderr).toContain("line 6: not a JSON object of parameters (got string)");
    expect(result.stderr).not.toMatch(/line [125]:/);
    expect(result.stdout).toBe("");
    const empty = path.join(dir, "empty.jsonl");
    await writeFile(empty, "\n\n");
    expect((await cli("invoke", "echo", "--batch", empty)).code).toBe(2);
    expect(await runsOfEcho()).toBe(before);
  }, 30_000);

  it("starts a batch from a JSONL file and prints its id and run ids; the service's refusal exits 3", async () => {
    const file = path.join(dir, "items.jsonl");
    await writeFile(file, '{"message": "a"}\n{"message": "b", "times": 2}\n');
    const printed = await cli("invoke", "echo", "--batch", file);
    expect(printed.code).toBe(0);
    const [batchId, ...runIds] = printed.stdout.trim().split("\n");
    expect(batchId).toMatch(/^batch_[0-9a-z]{26}$/);
    expect(runIds).toHaveLength(2);
    expect(printed.stderr).toContain(`batch ${batchId} · 2 run(s)`);
    const batch = await client.waitForBatch(batchId!, { pollIntervalMs: 200, timeoutMs: 30_000 });
    expect(batch.counts.succeeded).toBe(2);
    const runs = [];
    for await (const run of client.allBatchRuns(batchId!, 1)) runs.push(run);
    expect(runs.map((run) => [run.index, run.run_id, run.status])).toEqual([
      [0, runIds[0], "succeeded"],
      [1, runIds[1], "succeeded"],
    ]);
    expect(await client.getRun(runIds[1]!)).toMatchObject({ trigger: "batch", batch_id: batchId, result: { echo: ["b", "b"] } });

    const json = await cli("invoke", "echo", "--batch", file, "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ batch_id: expect.stringMatching(/^batch_/), run_ids: [expect.any(String), expect.any(String)], status_url: expect.any(String) });

    const wrongTypes = path.join(dir, "wrong.jsonl");
    await writeFile(wrongTypes, '{"message": "a"}\n{"message": 5}\n');
    const refused = await cli("invoke", "echo", "--batch", wrongTypes);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("invalid_parameters");
  }, 60_000);

  it("the client's startBatch throws ValidationError naming the bad items' indexes", async () => {
    const error = await client.startBatch("echo", [{ message: "ok" }, { message: 1 }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toMatchObject({ items: [{ index: 1 }] });
  }, 30_000);
});
