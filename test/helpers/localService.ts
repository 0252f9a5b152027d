import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import type { LocalConfig } from "../../lambdas/config/localConfig";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type LocalService, type LocalServiceOptions, startLocalService } from "../../lambdas/local/localService";
import { type ApiResponse, requestJson } from "./http";
import { expectNoProcessesWith } from "./processes";

export interface TestService {
  service: LocalService;
  url: string;
  dataDir: string;
  adminKey: string;
  /** A request to the service; `token` defaults to the admin key (null sends none). */
  call(method: string, path: string, options?: { body?: unknown; token?: string | null; headers?: Record<string, string> }): Promise<ApiResponse>;
  /** Creates a function (201 or it throws) and returns its record. */
  deploy(name: string, code: string, settings?: Record<string, unknown>, token?: string): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Creates an account with its own (non-admin) key and returns the key. */
  newAccount(account: string, plan?: string): Promise<string>;
  /**
   * A run's record once it has ended (not queued or running), polled every 100 ms for up to
   * `timeoutMs`; the last record seen if it has not.
   */
  ended(runId: string, options?: { token?: string | null; timeoutMs?: number }): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * How a sync call ended, whether it answered within the sync window or with a 202 (a heavy run
   * on a busy machine can outlast it): its run's status and, for a failed run, the error.
   */
  outcome(response: ApiResponse, token?: string | null): Promise<{ runId: string; status: string; error?: { code: string; message: string } }>;
  /**
   * Waits (up to `timeoutMs`) until every worker of the service is idle, and throws if one is
   * still busy: a run's worker stays busy until its fresh process is up, which on a busy machine
   * alone can outlast a short sync window.
   */
  workersIdle(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** Stops the service and removes its data dir. */
  destroy(): Promise<void>;
}

export function testConfig(dataDir: string, overrides: Partial<LocalConfig> = {}): LocalConfig {
  return {
    host: "127.0.0.1",
    port: 0,
    dataDir,
    bootstrapKey: null,
    syncWaitSeconds: 25,
    tablePrefix: "browserfn",
    plans: DEFAULT_PLANS,
    requestLog: false,
    workers: { perFunction: 2, total: 4, idleSeconds: 60 },
    rateLimit: { perSecond: 0, burst: 1 },
    // Tests serve their pages on 127.0.0.1; the network policy has tests of its own.
    allowLocalNetwork: true,
    ...overrides,
  };
}

/** Starts the local service on an ephemeral port with a fresh data dir (or the given one). */
export async function startTestService(
  options: { dataDir?: string; adminKey?: string; config?: Partial<LocalConfig>; serviceOptions?: LocalServiceOptions } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), "browserfn-test-")));
  const adminKey = options.adminKey ?? generateApiKey();
  const errors: string[] = [];
  const service = await startLocalService(testConfig(dataDir, { bootstrapKey: adminKey, ...options.config }), {
    errorLog: (line) => errors.push(line),
    ...options.serviceOptions,
  });
  const call: TestService["call"] = (method, urlPath, { body, token, headers } = {}) =>
    requestJson(service.url, method, urlPath, { body, token: token === undefined ? adminKey : token, headers });
  const ended: TestService["ended"] = async (runId, { token, timeoutMs = 120_000 } = {}) => {
    const deadline = Date.now() + timeoutMs;
    let run = (await call("GET", `/runs/${runId}`, { token })).body as { status?: string };
    while ((run.status === "queued" || run.status === "running") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = (await call("GET", `/runs/${runId}`, { token })).body as { status?: string };
    }
    return run;
  };
  return {
    service,
    url: service.url,
    dataDir,
    adminKey,
    call,
    async deploy(name, code, settings = {}, token) {
      const response = await call("POST", "/functions", { token, body: { name, code, ...settings } });
      if (response.status !== 201) throw new Error(`deploy ${name}: ${response.status} ${response.text}`);
      return response.body;
    },
    async newAccount(account, plan = "free") {
      const response = await call("POST", "/api-keys", { body: { account, plan } });
      if (response.status !== 201) throw new Error(`creating account ${account}: ${response.status} ${response.text}`);
      return String((response.body as { key: string }).key);
    },
    ended,
    async outcome(response, token) {
      const runId = String(response.headers.get("x-run-id") ?? (response.body as { run_id?: string } | null)?.run_id);
      const run = (await ended(runId, { token })) as { status: string; error?: { code: string; message: string } };
      if (response.status !== 202) {
        const body = response.body as { error?: { code: string; message: string } } | null;
        return { runId, status: response.status === 200 ? "succeeded" : run.status, ...(body?.error ? { error: body.error } : {}) };
      }
      return { runId, status: run.status, ...(run.error ? { error: { code: run.error.code, message: run.error.message } } : {}) };
    },
    async workersIdle(timeoutMs = 15_000) {
      const busy = () => service.workers().processes - service.workers().idle;
      for (const deadline = Date.now() + timeoutMs; busy() > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
      if (busy() > 0) throw new Error(`${busy()} worker(s) still busy after ${timeoutMs} ms`);
    },
    stop: () => service.close(),
    async destroy() {
      await service.close();
      await expectNoProcessesWith(service.runtimeDir);
      await rm(dataDir, { recursive: true, force: true });
      // A request that failed inside the service, a run that did (startRun logs its stack), or a
      // run whose end could not be recorded (it would be left active in the store).
      const failures = ["internal error", "failed inside the service", "recording its end failed"];
      if (errors.some((line) => failures.some((failure) => line.includes(failure)))) {
        throw new Error(`The service logged internal errors:\n${errors.join("\n")}`);
      }
    },
  };
}
