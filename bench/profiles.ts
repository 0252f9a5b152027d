/**
 * `npx tsx bench/profiles.ts`: what profiles cost a warm invoke (issue #24, docs/benchmarks.md
 * "Profiles and proxies"). Side by side in one run, spaced calls (each worker warm):
 *   - `plain`: a session, one page, a local page's title;
 *   - `profiled`: the same with `Session.start({ profile, persist: true })` on a ~100 KB profile
 *     (a cookie and 100 KB of localStorage), opened and saved on every call; the page changes
 *     nothing, so the save finds the state as opened and writes nothing;
 *   - `changed`: the same, the page writing one localStorage item, so that each save is written
 *     (sent, sealed, put in place, the record updated);
 *   - `plain-pw`, `profiled-pw`, `changed-pw`: the same three with `driver: "playwright"`;
 *   - `cookied`: `profiled` on a ~100 KB profile of cookies only (25 cookies of 4 KB, on a path
 *     the page does not request), so that the profile's own cost (its lease, its fetch, its
 *     cookies, its save's read) shows apart from the site storage a page writes and reads back;
 *   - per kind of call against `plain`, beside the two p50s: the median of the differences
 *     within each round (both calls a few seconds apart, on one service), which the machine's
 *     slower and faster minutes move less than two p50s taken apart;
 *   - with BENCH_COMPARE_ROOT (another checkout with profiles, e.g. the code before a change):
 *     its `plain` and `profiled` too, so that a change to profiles is measured side by side;
 *   - per kind of call, beside its time: the CPU time of the service's whole process tree (the
 *     service, dynalite, the workers and their browsers) from the call's start to the next
 *     call's start (what the run does after its answer included), a figure the machine's load
 *     hardly moves;
 *   - `baseline`: `plain` on another checkout (BENCH_BASELINE_ROOT, default /work/main; for "a
 *     function using neither pays nothing", a checkout of the code before profiles and proxies,
 *     e.g. `git archive f9bf481 | tar -x -C /tmp/base` with node_modules linked), so that it is measured.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../lambdas/identity/apiKeys";
import { startChildService } from "../test/helpers/childService";
import { startLoginSite } from "../test/helpers/loginSite";
import { readTreeCpu } from "./processCpu";
import { percentile, round, summary, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 2500);
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT ?? "/work/main";
const COMPARE_ROOT = process.env.BENCH_COMPARE_ROOT;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** BENCH_STEPS=1: each function times its own steps (Session.start, newPage, goto, title, the close and its save) and the bench prints their p50s. */
const STEPS = process.env.BENCH_STEPS === "1";
/** BENCH_RECORDING=off|failures|all: every function deployed with that recording setting (default: the service's, "failures"). */
const RECORDING = process.env.BENCH_RECORDING;
const STEP_NAMES = ["start", "newPage", "goto", "title", "close", "run (X-Duration-Ms)", "outside the run"] as const;

const session = (options: string, change = false) =>
  STEPS
    ? `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  const at = [performance.now()];
  const session = await Session.start(${options});
  at.push(performance.now());
  const page = await session.newPage();
  at.push(performance.now());
  await page.goto(url);${change ? "\n  await page.evaluate(() => localStorage.setItem(\"visit\", String(Date.now())));" : ""}
  at.push(performance.now());
  const title = await page.title();
  at.push(performance.now());
  await session.close();
  at.push(performance.now());
  return { title, steps: at.slice(1).map((t, i) => t - at[i]) };
}`
    : `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start(${options});
  const page = await session.newPage();
  await page.goto(url);${change ? "\n  await page.evaluate(() => localStorage.setItem(\"visit\", String(Date.now())));" : ""}
  return { title: await page.title() };
}`;
/** 25 cookies of ~4 KB (~100 KB), on a path the bench's page never requests (the site would refuse a 100 KB Cookie header). */
const SEED_COOKIES = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start({ profile: "bench-cookies", persist: true });
  const page = await session.newPage();
  await page.goto(url + "/login");
  await page.evaluate(() => { for (let i = 0; i < 25; i++) document.cookie = "c" + i + "=" + "x".repeat(4000) + "; path=/unrequested; max-age=86400"; });
  return { ok: true };
}`;
const SEED = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start({ profile: "bench", persist: true });
  const page = await session.newPage();
  await page.goto(url + "/login");
  await page.waitForFunction(() => document.title === "logged-in");
  await page.evaluate(() => { for (let i = 0; i < 100; i++) localStorage.setItem("k" + i, "x".repeat(1000)); });
  return { ok: true };
}`;

/** Per function and service, each call's step times (STEPS). */
const stepTimes = new Map<string, number[][]>();
const stepsOf = (key: string): number[][] => {
  if (!stepTimes.has(key)) stepTimes.set(key, []);
  return stepTimes.get(key) as number[][];
};

async function start(root: string) {
  const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-bench-"));
  const key = generateApiKey();
  const env = { BROWSERFN_RATE_LIMIT_PER_SECOND: "0", BROWSERFN_ALLOW_LOCAL_NETWORK: "true", BROWSERFN_MAX_WORKERS: "16", BROWSERFN_MAX_WORKERS_PER_FUNCTION: "2" };
  const child = await startChildService(dataDir, key, env, undefined, root);
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const pid = child.child.pid as number;
  return {
    /** CPU time (ms) the service's whole process tree (the service, dynalite, workers, their browsers) used so far. */
    cpuMs: () => Object.values(readTreeCpu(pid)).reduce((sum, ms) => sum + ms, 0),
    async deploy(name: string, code: string) {
      const response = await fetch(`${child.url}/functions`, { method: "POST", headers, body: JSON.stringify({ name, code, ...(RECORDING ? { recording: RECORDING } : {}) }) });
      if (response.status !== 201) throw new Error(`deploy ${name}: ${response.status} ${await response.text()}`);
    },
    async call(name: string, body: unknown): Promise<number> {
      let status = 0;
      let text = "";
      let runMs = 0;
      const ms = await timed(async () => {
        const response = await fetch(`${child.url}/functions/${name}`, { method: "POST", headers, body: JSON.stringify(body) });
        status = response.status;
        runMs = Number(response.headers.get("x-duration-ms"));
        text = await response.text();
      });
      if (status !== 200) throw new Error(`${name}: ${status} ${text}`);
      const steps = (JSON.parse(text) as { steps?: number[] }).steps;
      if (steps) stepsOf(`${name}@${root}`).push([...steps, runMs, ms - runMs]);
      return ms;
    },
    async profileBytes(name = "bench"): Promise<number> {
      const response = await fetch(`${child.url}/profiles/${name}`, { headers });
      return ((await response.json()) as { bytes: number }).bytes;
    },
    async close() {
      await child.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const site = await startLoginSite();
  const here = await start(path.resolve(__dirname, ".."));
  const before = await start(BASELINE_ROOT);
  const compare = COMPARE_ROOT ? await start(COMPARE_ROOT) : undefined;
  try {
    const url = `${site.url}/account`;
    await here.deploy("plain", session(""));
    await here.deploy("profiled", session(`{ profile: "bench", persist: true }`));
    await here.deploy("plain-pw", session(`{ driver: "playwright" }`));
    await here.deploy("profiled-pw", session(`{ driver: "playwright", profile: "bench", persist: true }`));
    await here.deploy("changed", session(`{ profile: "bench", persist: true }`, true));
    await here.deploy("changed-pw", session(`{ driver: "playwright", profile: "bench", persist: true }`, true));
    await here.deploy("seed", SEED);
    await here.deploy("cookied", session(`{ profile: "bench-cookies", persist: true }`));
    await here.deploy("seed-cookies", SEED_COOKIES);
    await before.deploy("plain", session(""));
    await here.call("seed", { url: site.url });
    await here.call("seed-cookies", { url: site.url });
    if (compare) {
      await compare.deploy("plain", session(""));
      await compare.deploy("profiled", session(`{ profile: "bench", persist: true }`));
      await compare.deploy("plain-pw", session(`{ driver: "playwright" }`));
      await compare.deploy("profiled-pw", session(`{ driver: "playwright", profile: "bench", persist: true }`));
      await compare.deploy("seed", SEED);
      await compare.call("seed", { url: site.url });
    }
    console.log(`profile: ${await here.profileBytes()} bytes; cookies-only profile: ${await here.profileBytes("bench-cookies")} bytes`);
    const times = { plain: [] as number[], profiled: [] as number[], plainPw: [] as number[], profiledPw: [] as number[], baseline: [] as number[], changed: [] as number[], changedPw: [] as number[], cookied: [] as number[], comparePlain: [] as number[], compareProfiled: [] as number[], comparePlainPw: [] as number[], compareProfiledPw: [] as number[] };
    // CPU of the service's process tree from the start of each call to the start of the next (its spaced gap included: the same idle for every kind).
    const cpu = new Map<number[], number[]>();
    type Service = Awaited<ReturnType<typeof start>>;
    const sequence: Array<[number[], Service, () => Promise<number>]> = [
      [times.plain, here, () => here.call("plain", { url })],
      [times.profiled, here, () => here.call("profiled", { url })],
      [times.baseline, before, () => before.call("plain", { url })],
      [times.plainPw, here, () => here.call("plain-pw", { url })],
      [times.profiledPw, here, () => here.call("profiled-pw", { url })],
      [times.changed, here, () => here.call("changed", { url })],
      [times.changedPw, here, () => here.call("changed-pw", { url })],
      [times.cookied, here, () => here.call("cookied", { url })],
      ...(compare
        ? ([
            [times.comparePlain, compare, () => compare.call("plain", { url })],
            [times.compareProfiled, compare, () => compare.call("profiled", { url })],
            [times.comparePlainPw, compare, () => compare.call("plain-pw", { url })],
            [times.compareProfiledPw, compare, () => compare.call("profiled-pw", { url })],
          ] as Array<[number[], Service, () => Promise<number>]>)
        : []),
    ];
    const PLAYWRIGHT_CALLS = new Set<number[]>([times.plainPw, times.profiledPw, times.changedPw, times.comparePlainPw, times.compareProfiledPw]);
    for (const [, , call] of sequence) await call();
    await sleep(GAP_MS);
    for (let i = 0; i < ROUNDS; i++) {
      for (const [list, service, call] of sequence) {
        const cpuBefore = service.cpuMs();
        list.push(await call());
        // Up to the next call's start: what the run did after its answer (the lease, the browser's reset) counts too.
        // A Playwright call's worker is replaced with about twice a puppeteer call's CPU: a longer
        // gap after it keeps that from running into the next call (whatever kind it is).
        await sleep(PLAYWRIGHT_CALLS.has(list) ? 2 * GAP_MS : GAP_MS);
        cpu.set(list, [...(cpu.get(list) ?? []), service.cpuMs() - cpuBefore]);
      }
    }
    const cpuMean = (list: number[]) => {
      const values = cpu.get(list) ?? [];
      return round(values.reduce((sum, ms) => sum + ms, 0) / Math.max(1, values.length));
    };
    const [p, q, b] = [summary(times.plain), summary(times.profiled), summary(times.baseline)];
    const [pw, qw] = [summary(times.plainPw), summary(times.profiledPw)];
    console.log(`service tree CPU per call (mean): plain ${cpuMean(times.plain)}, profiled ${cpuMean(times.profiled)}, changed ${cpuMean(times.changed)}, plain-pw ${cpuMean(times.plainPw)}, profiled-pw ${cpuMean(times.profiledPw)}, changed-pw ${cpuMean(times.changedPw)} ms`);
    if (compare) console.log(`compare ${COMPARE_ROOT} service tree CPU per call (mean): plain ${cpuMean(times.comparePlain)}, profiled ${cpuMean(times.compareProfiled)}, plain-pw ${cpuMean(times.comparePlainPw)}, profiled-pw ${cpuMean(times.compareProfiledPw)} ms`);
    console.log(`plain (this branch): p50 ${p.p50} p95 ${p.p95} ms`);
    console.log(`profiled (open + save a ~100 KB profile): p50 ${q.p50} p95 ${q.p95} ms; adds ${round(q.p50 - p.p50)} ms p50`);
    console.log(`plain, playwright driver: p50 ${pw.p50} p95 ${pw.p95} ms`);
    console.log(`profiled, playwright driver: p50 ${qw.p50} p95 ${qw.p95} ms; adds ${round(qw.p50 - pw.p50)} ms p50`);
    const [c, cw, k] = [summary(times.changed), summary(times.changedPw), summary(times.cookied)];
    console.log(`changed (open, change, save a ~100 KB profile): p50 ${c.p50} p95 ${c.p95} ms; adds ${round(c.p50 - p.p50)} ms p50`);
    console.log(`changed, playwright driver: p50 ${cw.p50} p95 ${cw.p95} ms; adds ${round(cw.p50 - pw.p50)} ms p50`);
    console.log(`cookied (open + save a ~100 KB profile of cookies only): p50 ${k.p50} p95 ${k.p95} ms; adds ${round(k.p50 - p.p50)} ms p50`);
    // Each round's calls run a few seconds apart on one service: their differences, round by round.
    const paired = (over: number[], under: number[]) => {
      const diffs = over.map((ms, i) => ms - (under[i] ?? Number.NaN)).filter((ms) => Number.isFinite(ms));
      return `median ${round(percentile(diffs, 0.5))} (p25 ${round(percentile(diffs, 0.25))}, p75 ${round(percentile(diffs, 0.75))})`;
    };
    console.log(
      `added, paired within each round (ms): profiled ${paired(times.profiled, times.plain)}; profiled-pw ${paired(times.profiledPw, times.plainPw)}; changed ${paired(times.changed, times.plain)}; cookied ${paired(times.cookied, times.plain)}`,
    );
    if (compare) console.log(`compare ${COMPARE_ROOT}, added, paired within each round (ms): profiled ${paired(times.compareProfiled, times.comparePlain)}; profiled-pw ${paired(times.compareProfiledPw, times.comparePlainPw)}`);
    console.log(`plain (baseline ${BASELINE_ROOT}): p50 ${b.p50} p95 ${b.p95} ms; this branch's plain minus it: ${round(p.p50 - b.p50)} ms p50`);
    if (compare) {
      const [cp, cq] = [summary(times.comparePlain), summary(times.compareProfiled)];
      console.log(`compare ${COMPARE_ROOT}: plain p50 ${cp.p50} p95 ${cp.p95} ms; profiled p50 ${cq.p50} p95 ${cq.p95} ms; adds ${round(cq.p50 - cp.p50)} ms p50`);
      const [cpw, cqw] = [summary(times.comparePlainPw), summary(times.compareProfiledPw)];
      console.log(`compare ${COMPARE_ROOT}, playwright driver: plain p50 ${cpw.p50} ms; profiled p50 ${cqw.p50} ms; adds ${round(cqw.p50 - cpw.p50)} ms p50`);
    }
    for (const [key, calls] of stepTimes) {
      // The first call of each (not spaced, cold) is left out.
      const spaced = calls.slice(1);
      console.log(`steps ${key}: ${STEP_NAMES.map((step, i) => `${step} ${summary(spaced.map((call) => call[i] ?? 0)).p50}`).join(", ")} (p50 ms)`);
    }
    console.log(`(${ROUNDS} spaced calls each, interleaved, ${GAP_MS} ms apart)`);
  } finally {
    await here.close();
    await before.close();
    await compare?.close();
    await site.close();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
