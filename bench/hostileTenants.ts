/**
 * `npm run bench:hostile`: another tenant's invocation latency while hostile accounts deploy
 * code made to stall the service (issue #26), against the same on the idle service, side by
 * side in the same run (docs/benchmarks.md, "Hostile tenants (issue #26)"). The service runs in
 * its own process, as `npm start` runs it.
 *
 * Three conditions, each ROUNDS sequential no-browser invocations of the other account's
 * function (and a GET /health after each), measured in interleaved blocks: idle; while one
 * hostile account deploys without pause a module the parser needs a minute for (stopped at the
 * 5 s budget each time); while a second one also deploys, in turn, 3,000 `[]` parameters, 256 KB
 * of `string` parameters, nested Records and code nested too deeply to parse. Each hostile
 * account deploys from a process of its own (hostileDeployers.ts), a remote peer (remotePeer.ts):
 * until session 16 they shared the event loop that times the other tenant's calls, and building
 * and reading their bodies, 20 deploys a second, was in the figure (docs/benchmarks.md).
 */
import { startBenchService } from "./benchService";
import { startRemotePeer } from "./remotePeer";
import { ratioInterval, round, summary, TENANT_GAP_MS, tenantGap, timed } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
/** Each condition is measured in this many blocks of ROUNDS / BLOCKS calls, interleaved. */
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4);
const WARM_UP = 100;

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  const service = await startBenchService("process", "defaults");
  const request = async (method: string, urlPath: string, key: string | null, body?: unknown) => {
    const response = await fetch(service.url + urlPath, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  };
  const account = async (name: string) => {
    const { status, text } = await request("POST", "/api-keys", service.key, { account: name, plan: "pro" });
    if (status !== 201) throw new Error(`account ${name}: ${status} ${text}`);
    return (JSON.parse(text) as { key: string }).key;
  };
  try {
    const [other, parserBomb, schemaBomb] = [await account("other"), await account("hostile-a"), await account("hostile-b")];
    const created = await request("POST", "/functions", other, { name: "noop", code: "export default async (n: number = 1) => ({ n });" });
    if (created.status !== 201) throw new Error(`deploy: ${created.status} ${created.text}`);
    let n = 0;
    const invoke = async () => {
      const { status, text } = await request("POST", "/functions/noop", other, { n: n++ });
      if (status !== 200) throw new Error(`invoke: ${status} ${text}`);
    };
    const health = () => request("GET", "/health", null);
    for (let i = 0; i < WARM_UP; i++) await invoke();
    /** `rounds` sequential invocations, each followed by a GET /health, timed into `into`. */
    const measure = async (rounds: number, into: { invoke: number[]; health: number[] }) => {
      for (let i = 0; i < rounds; i++) {
        await tenantGap();
        into.invoke.push(await timed(invoke));
        into.health.push(await timed(health));
      }
    };

    const answers: Record<string, Record<string, number>> = { one: {}, two: {} };
    /** Measures while hostile accounts deploy without pause, each stream in a process of its own (hostileDeployers.ts). */
    const underAttack = async (rounds: number, into: { invoke: number[]; health: number[] }, streams: { key: string; kind: "bomb" | "mixed" }[], tally: Record<string, number>) => {
      const deploying = streams.map(({ key, kind }) => {
        const { child, placed } = startRemotePeer("hostileDeployers.ts", ["--deploy", service.url, key, kind]);
        let output = "";
        child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
        const started = new Promise<void>((resolve, reject) => {
          child.once("message", () => resolve());
          child.once("exit", (code) => reject(new Error(`a hostile deployer exited (${code}) before its first answer`)));
        });
        const ended = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        return { child, started: Promise.all([started, placed]), ended, answers: () => JSON.parse(/answers=(.*)/.exec(output)?.[1] ?? "{}") as Record<string, number> };
      });
      await Promise.all(deploying.map(({ started }) => started));
      // The first deploys are under way before the measured calls start.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await measure(rounds, into);
      for (const { child } of deploying) child.kill("SIGTERM");
      for (const { ended, answers } of deploying) {
        await ended;
        for (const [status, count] of Object.entries(answers())) tally[status] = (tally[status] ?? 0) + count;
      }
    };
    const one = [{ key: parserBomb, kind: "bomb" as const }];
    const two = [...one, { key: schemaBomb, kind: "mixed" as const }];
    const times = { idle: { invoke: [] as number[], health: [] as number[] }, one: { invoke: [] as number[], health: [] as number[] }, two: { invoke: [] as number[], health: [] as number[] } };
    // Interleaved blocks (idle, one hostile account, two), so that the machine's own load drifts alike over all three.
    for (let block = 0; block < BLOCKS; block++) {
      await measure(ROUNDS / BLOCKS, times.idle);
      await underAttack(ROUNDS / BLOCKS, times.one, one, answers.one as Record<string, number>);
      await underAttack(ROUNDS / BLOCKS, times.two, two, answers.two as Record<string, number>);
    }
    const figures = (t: { invoke: number[]; health: number[] }) => ({ invoke_ms: summary(t.invoke), health_ms: summary(t.health) });
    const [idle, oneHostile, twoHostile] = [figures(times.idle), figures(times.one), figures(times.two)];
    console.log(
      JSON.stringify(
        {
          rounds: ROUNDS,
          blocks: BLOCKS,
          tenant_gap_ms: TENANT_GAP_MS,
          idle,
          one_hostile_deploy: { ...oneHostile, hostile_deploy_answers_by_status: answers.one },
          two_hostile_accounts: { ...twoHostile, hostile_deploy_answers_by_status: answers.two },
          one_hostile_over_idle_invoke_p50_ratio: round(oneHostile.invoke_ms.p50 / idle.invoke_ms.p50),
          two_hostile_over_idle_invoke_p50_ratio: round(twoHostile.invoke_ms.p50 / idle.invoke_ms.p50),
          two_hostile_over_idle_invoke_p50_ratio_90pct: ratioInterval(times.two.invoke, times.idle.invoke),
          one_hostile_over_idle_health_p50_ratio: round(oneHostile.health_ms.p50 / idle.health_ms.p50),
        },
        null,
        2,
      ),
    );
  } finally {
    await service.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
