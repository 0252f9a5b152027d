import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type TestService, startTestService } from "../helpers/localService";
import { type CliResult, cliEnv, runCli } from "../fixtures/cli/runCli";

const PIPED = "piped-Pa$$w0rd ünï";
const ARGUED = "argued-tok_0123456789";
const READS_SECRETS = `import { secrets } from "browserfn/runtime";
export default async function run() {
  return {
    piped: secrets.get("PIPED") === ${JSON.stringify(PIPED)},
    argued: secrets.get("ARGUED") === ${JSON.stringify(ARGUED)},
    lengths: [secrets.get("PIPED")?.length ?? null, secrets.get("ARGUED")?.length ?? null],
  };
}`;

describe("browserfn secrets against a real local service", () => {
  let svc: TestService;
  let configHome: string;
  let env: NodeJS.ProcessEnv;
  const outputs: CliResult[] = [];
  const cli = async (args: string[], input = "") => {
    const result = await runCli(args, env, input);
    outputs.push(result);
    return result;
  };

  beforeAll(async () => {
    svc = await startTestService();
    configHome = await mkdtemp(path.join(tmpdir(), "browserfn-cli-secrets-"));
    env = cliEnv(configHome, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
    await svc.deploy("reader", READS_SECRETS);
  });
  afterAll(async () => {
    // No command ever printed a value.
    for (const { stdout, stderr } of outputs) {
      for (const value of [PIPED, ARGUED]) expect(stdout + stderr).not.toContain(value);
    }
    await svc?.destroy();
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  it("sets a secret from stdin (one final newline dropped) without a warning, and from an argument with one", async () => {
    const piped = await cli(["secrets", "set", "reader", "PIPED"], `${PIPED}\n`);
    expect(piped).toEqual({ code: 0, stdout: "", stderr: "Set secret PIPED of reader\n" });

    const argued = await cli(["secrets", "set", "reader", "ARGUED", ARGUED, "--json"]);
    expect(argued.code).toBe(0);
    expect(JSON.parse(argued.stdout)).toEqual({ function: "reader", set: "ARGUED" });
    expect(argued.stderr).toMatch(/^browserfn: warning: a value on the command line is kept in your shell's history and shown by ps; pipe it in instead/);

    // The function's runs read exactly what was given.
    const run = await svc.call("POST", "/functions/reader", { body: {} });
    expect(run.body).toEqual({ piped: true, argued: true, lengths: [PIPED.length, ARGUED.length] });
  });

  it("lists the names and when each was set, in a table and as --json", async () => {
    const list = await cli(["secrets", "list", "reader"]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+UPDATED$/);
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^ARGUED\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/), expect.stringMatching(/^PIPED\s+\d{4}-/)]);
    const json = JSON.parse((await cli(["secrets", "list", "reader", "--json"])).stdout);
    expect(json).toEqual({ items: [{ name: "ARGUED", updated_at: expect.any(String) }, { name: "PIPED", updated_at: expect.any(String) }] });
  });

  it("removes a secret; removing a missing one exits 3 with the API's message", async () => {
    const removed = await cli(["secrets", "rm", "reader", "ARGUED"]);
    expect(removed).toEqual({ code: 0, stdout: "", stderr: "Removed secret ARGUED of reader\n" });
    expect((await cli(["secrets", "list", "reader"])).stdout).not.toContain("ARGUED");

    const missing = await cli(["secrets", "rm", "reader", "ARGUED"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toBe("browserfn: The function 'reader' has no secret named 'ARGUED' [secret_not_found, HTTP 404]\n");
    const missingJson = await cli(["secrets", "rm", "reader", "ARGUED", "--json"]);
    expect(missingJson.code).toBe(3);
    expect(JSON.parse(missingJson.stderr).error).toMatchObject({ code: "secret_not_found" });
    const noFunction = await cli(["secrets", "list", "nowhere"]);
    expect(noFunction.code).toBe(3);
    expect(noFunction.stderr).toContain("[function_not_found, HTTP 404]");
  });

  it("refuses, with exit 2 and before any request, an empty stdin, a bad name, a value over 4096 bytes and a bad action", async () => {
    const cases: [string[], string, string][] = [
      [["secrets", "set", "reader", "EMPTY"], "", "no value on stdin: pipe it in"],
      [["secrets", "set", "reader", "EMPTY"], "\n", "no value on stdin"],
      [["secrets", "set", "reader", "lower"], "x", "'lower' is not a secret name (^[A-Z][A-Z0-9_]{0,63}$, e.g. API_TOKEN)"],
      [["secrets", "rm", "reader", "A-B"], "", "'A-B' is not a secret name"],
      [["secrets", "set", "reader", "BIG"], "x".repeat(4097), "a secret's value is at most 4096 bytes of UTF-8"],
      [["secrets", "set", "reader", "SHORT"], "abc", "the value is 3 bytes; a secret's value is at least 4"],
      // Under a pipe's buffer, so that the write is done before the CLI stops reading.
      [["secrets", "set", "reader", "BIG"], "x".repeat(50_000), "the value is over 4096 bytes"],
      [["secrets", "set", "reader"], "", "missing argument <NAME>"],
      [["secrets", "set", "reader", "A", "b", "c"], "", "unexpected argument 'c'"],
      [["secrets"], "", "missing action: secrets set, list or rm"],
      [["secrets", "show", "reader"], "", "unknown secrets action 'show' (set, list, rm)"],
    ];
    for (const [args, input, message] of cases) {
      const result = await cli(args, input);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain(message);
    }
    expect((await svc.call("GET", "/functions/reader/secrets")).body.items.map((s: { name: string }) => s.name)).toEqual(["PIPED"]);
  });
});
