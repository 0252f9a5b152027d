import { readLocalConfig } from "../../lambdas/config/localConfig";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { forkNames } from "../../lambdas/functions/forkFunction";
import { nextRunAt } from "../../lambdas/functions/schedule";
import { generateApiKey, hashApiKey, keyPrefix } from "../../lambdas/identity/apiKeys";
import { ApiError } from "../../lambdas/http/errors";
import { parseLimit } from "../../lambdas/http/limit";

describe("forkNames", () => {
  it("keeps the name, then suffixes -fork, -fork-2, … within 63 characters", () => {
    expect(forkNames("scraper").slice(0, 4)).toEqual(["scraper", "scraper-fork", "scraper-fork-2", "scraper-fork-3"]);
    const long = "a".repeat(63);
    for (const name of forkNames(long)) {
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(/^[a-z][a-z0-9-]{0,62}$/);
    }
    // Cut to fit, never leaving a double dash: 58 + "-fork" = 63.
    expect(forkNames(`${"b".repeat(57)}-xyz`)[1]).toBe(`${"b".repeat(57)}-fork`);
    expect(forkNames(`${"b".repeat(57)}-xyz`)[2]).toBe(`${"b".repeat(56)}-fork-2`);
  });
});

describe("parseLimit", () => {
  it("takes integers in range and names the range otherwise", () => {
    expect(parseLimit(undefined, 50, 100)).toBe(50);
    expect(parseLimit("1", 50, 100)).toBe(1);
    expect(parseLimit("1000", 50, 1000)).toBe(1000);
    for (const bad of ["0", "1001", "1e3", " 5", "0x10", "-3"]) {
      expect(() => parseLimit(bad, 50, 1000)).toThrow(ApiError);
    }
  });
});

describe("API keys", () => {
  it("are bfn_ + 32 random bytes, hashed with SHA-256, shown by a short prefix", () => {
    const key = generateApiKey();
    expect(key).toMatch(/^bfn_[A-Za-z0-9_-]{43}$/);
    expect(generateApiKey()).not.toBe(key);
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(keyPrefix(key)).toBe(key.slice(0, 10));
  });
});

describe("nextRunAt", () => {
  it("gives the next firing in the schedule's zone", () => {
    const from = new Date("2026-03-01T10:15:00Z");
    expect(nextRunAt("*/15 * * * *", "UTC", from)).toBe("2026-03-01T10:30:00.000Z");
    expect(nextRunAt("@daily", "America/New_York", from)).toBe("2026-03-02T05:00:00.000Z");
    expect(nextRunAt("0 9 * * MON", "Europe/Berlin", from)).toBe("2026-03-02T08:00:00.000Z");
  });
});

describe("readLocalConfig", () => {
  it("has the defaults of API.md", () => {
    const config = readLocalConfig({}, "/srv");
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8787,
      dataDir: "/srv/.browserfn",
      bootstrapKey: null,
      syncWaitSeconds: 25,
      plans: DEFAULT_PLANS,
    });
  });

  it("reads every variable and rejects bad ones by name", () => {
    const config = readLocalConfig(
      {
        PORT: "0",
        HOST: "::1",
        BROWSERFN_DATA_DIR: "/data",
        BROWSERFN_BOOTSTRAP_KEY: "bfn_0123456789abcdef0123",
        BROWSERFN_SYNC_WAIT_SECONDS: "3",
        BROWSERFN_PLANS: JSON.stringify({ team: { concurrency: 5, invocations_per_month: 10, max_timeout_seconds: 60, max_memory_mb: 512 } }),
      },
      "/srv",
    );
    expect(config).toMatchObject({ port: 0, host: "::1", dataDir: "/data", bootstrapKey: "bfn_0123456789abcdef0123", syncWaitSeconds: 3 });
    expect(Object.keys(config.plans)).toEqual(["team"]);
    expect(() => readLocalConfig({ PORT: "70000" })).toThrow(/PORT/);
    expect(() => readLocalConfig({ BROWSERFN_BOOTSTRAP_KEY: "nope" })).toThrow(/BROWSERFN_BOOTSTRAP_KEY/);
    expect(() => readLocalConfig({ BROWSERFN_PLANS: "{" })).toThrow(/BROWSERFN_PLANS/);
    expect(() => readLocalConfig({ BROWSERFN_SYNC_WAIT_SECONDS: "0" })).toThrow(/BROWSERFN_SYNC_WAIT_SECONDS/);
  });

  it("reads the deploy analysis budget (default 5 s, 512 MB, 2 workers) and rejects bad values by name", () => {
    expect(readLocalConfig({}).deployAnalysis).toEqual({ timeoutMs: 5000, memoryMb: 512, workers: 2 });
    const env = { BROWSERFN_DEPLOY_ANALYSIS_TIMEOUT_MS: "2000", BROWSERFN_DEPLOY_ANALYSIS_MEMORY_MB: "256", BROWSERFN_DEPLOY_ANALYSIS_WORKERS: "1" };
    expect(readLocalConfig(env).deployAnalysis).toEqual({ timeoutMs: 2000, memoryMb: 256, workers: 1 });
    expect(() => readLocalConfig({ BROWSERFN_DEPLOY_ANALYSIS_TIMEOUT_MS: "0" })).toThrow(/BROWSERFN_DEPLOY_ANALYSIS_TIMEOUT_MS/);
    expect(() => readLocalConfig({ BROWSERFN_DEPLOY_ANALYSIS_MEMORY_MB: "64" })).toThrow(/BROWSERFN_DEPLOY_ANALYSIS_MEMORY_MB/);
    expect(() => readLocalConfig({ BROWSERFN_DEPLOY_ANALYSIS_WORKERS: "0" })).toThrow(/BROWSERFN_DEPLOY_ANALYSIS_WORKERS/);
  });
});
