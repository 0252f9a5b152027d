import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startLocalService } from "../../lambdas/local/localService";
import { ECHO_FN } from "../helpers/code";
import { requestJson } from "../helpers/http";
import { expectNoProcessesWith } from "../helpers/processes";
import { startTestService, testConfig } from "../helpers/localService";

const ROOT = path.resolve(__dirname, "../..");

describe("the local service", () => {
  it("keeps records across a stop and a start on the same data dir", async () => {
    const first = await startTestService();
    const created = await first.call("POST", "/functions", { body: { name: "keeper", code: ECHO_FN, shared: true } });
    await first.call("PATCH", "/functions/keeper", { body: { code: `${ECHO_FN}//v2\n` } });
    const before = (await first.call("GET", "/functions/keeper/info")).body;
    await first.stop();

    const second = await startTestService({ dataDir: first.dataDir, adminKey: first.adminKey });
    try {
      const after = await second.call("GET", `/functions/${created.body.function_id}/info`);
      expect(after.status).toBe(200);
      expect({ ...after.body, url: null }).toEqual({ ...before, url: null });
      expect((await second.call("GET", "/functions/keeper/versions/1")).body.code).toBe(ECHO_FN);
    } finally {
      await second.destroy();
    }
  });

  it("creates one admin key on the first start, saves it 0600, and does not replace it later", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-boot-"));
    try {
      const first = await startLocalService(testConfig(dataDir));
      const key = first.bootstrap.newKey;
      expect(key).toMatch(/^bfn_/);
      expect(first.bootstrap.keyFile).toBe(path.join(dataDir, "bootstrap-key"));
      expect((await stat(path.join(dataDir, "bootstrap-key"))).mode & 0o777).toBe(0o600);
      expect((await readFile(path.join(dataDir, "bootstrap-key"), "utf8")).trim()).toBe(key);
      const keys = await requestJson(first.url, "GET", "/api-keys", { token: key });
      expect(keys.body.items).toEqual([expect.objectContaining({ account: "local", admin: true })]);
      await first.close();

      const second = await startLocalService(testConfig(dataDir));
      expect(second.bootstrap.newKey).toBeNull();
      expect((await requestJson(second.url, "GET", "/api-keys", { token: key })).body.items).toHaveLength(1);
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("registers BROWSERFN_BOOTSTRAP_KEY idempotently as an admin key of 'local' on plan pro", async () => {
    const t = await startTestService();
    await t.stop();
    const again = await startTestService({ dataDir: t.dataDir, adminKey: t.adminKey });
    try {
      const keys = await again.call("GET", "/api-keys");
      expect(keys.body.items).toEqual([expect.objectContaining({ account: "local", admin: true, name: "bootstrap" })]);
      const long = await again.call("POST", "/functions", { body: { name: "long", code: ECHO_FN, timeout_seconds: 900 } });
      expect(long.status).toBe(201);
    } finally {
      await again.destroy();
    }
  });

  it("runs as `npm start` does: prints the URL and the key file, serves, logs requests without secrets, stops on SIGTERM", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-proc-"));
    // npm itself, so that its script is what is tested: npm hands SIGTERM on to the service (`exec node …`).
    const child = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: undefined },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // a group of its own: a failed test kills npm and the service together
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    try {
      const url = await waitFor(() => /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1], 20_000);
      const key = (await readFile(path.join(dataDir, "bootstrap-key"), "utf8")).trim();
      expect(output).toContain(path.join(dataDir, "bootstrap-key"));
      expect(output).toContain(key); // shown once, at the first start
      const health = await requestJson(url, "GET", "/health");
      expect(health.status).toBe(200);
      const list = await requestJson(url, "GET", "/functions", { token: key });
      expect(list.status).toBe(200);
      await waitFor(() => (output.includes("GET /functions 200") ? true : undefined), 5_000);
      expect(output.split(key).length - 1).toBe(1); // the request log never repeats it
      const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM"); // npm alone, as a process manager would
      expect(await exit).toBe(0);
      await expectNoProcessesWith(dataDir); // the service and its dynalite child ended too
    } finally {
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses to start with a malformed setting and names it", async () => {
    const child = spawn(process.execPath, ["bin/start.cjs"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "not-a-port", BROWSERFN_BOOTSTRAP_KEY: "secret" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stderr.on("data", (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(output).toContain("PORT");
    expect(output).toContain("BROWSERFN_BOOTSTRAP_KEY");
    expect(output).not.toContain("secret");
  });
});

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
