import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { LocalConfig } from "../../lambdas/config/localConfig";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type LocalService, startLocalService } from "../../lambdas/local/localService";
import { type ApiResponse, requestJson } from "./http";
import { testConfig } from "./localService";
import { expectNoProcessesWith } from "./processes";

export interface CapturingService {
  service: LocalService;
  url: string;
  adminKey: string;
  /** Request log lines (the request log is on). */
  requestLog: string[];
  /** Diagnostics the service wrote (its errorLog). */
  errorLog: string[];
  call(method: string, path: string, options?: { body?: unknown; token?: string | null; headers?: Record<string, string> }): Promise<ApiResponse>;
  /** Stops the service, checks nothing is left running and nothing failed inside it, removes its data. */
  destroy(): Promise<void>;
}

/**
 * The local service as `startTestService` starts it, with the request log on and both logs
 * kept in memory, so a test can read every line the service wrote.
 */
export async function startCapturingService(config: Partial<LocalConfig> = {}): Promise<CapturingService> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-fuzz-"));
  const adminKey = generateApiKey();
  const requestLog: string[] = [];
  const errorLog: string[] = [];
  const service = await startLocalService(testConfig(dataDir, { bootstrapKey: adminKey, requestLog: true, ...config }), {
    log: (line) => requestLog.push(line),
    errorLog: (line) => errorLog.push(line),
  });
  return {
    service,
    url: service.url,
    adminKey,
    requestLog,
    errorLog,
    call: (method, urlPath, { body, token, headers } = {}) =>
      requestJson(service.url, method, urlPath, { body, token: token === undefined ? adminKey : token, headers }),
    async destroy() {
      await service.close();
      await expectNoProcessesWith(service.runtimeDir);
      await rm(dataDir, { recursive: true, force: true });
      // Besides internal errors: a run whose start or end could not be recorded is half-written.
      const failures = ["internal error", "failed inside the service", "recording its start failed", "recording its end failed", "failed for good"];
      if (errorLog.some((line) => failures.some((failure) => line.includes(failure)))) {
        throw new Error(`The service logged internal errors:\n${errorLog.join("\n")}`);
      }
    },
  };
}
