import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { LocalConfig } from "../config/localConfig";
import { DEFAULT_PLAN, storageCapBytes } from "../config/plans";
import { MAX_BODY_BYTES } from "../config/serviceConfig";
import { type Clock, type Deps, systemClock } from "../deps";
import { createRateLimiter } from "../http/rateLimiter";
import { createIdentity } from "../identity/identity";
import { createJwtVerifier } from "../identity/jwtVerifier";
import { ROUTES } from "../routes/routeTable";
import { createLocalRuntime } from "../runtime/local/localRuntime";
import { ResultParser } from "../runtime/local/resultParsing/resultParser";
import { createCpuShares } from "../runtime/local/cpuShares/chooseCpuShares";
import { confirmSandbox } from "../runtime/local/sandbox/confirmSandbox";
import { type Sandbox, chooseSandbox } from "../runtime/local/sandbox/sandbox";
import { prepareRuntimeFiles } from "../runtime/local/sandbox/runtimeFiles";
import { replacePreviousRuntime } from "./previousRuntime";
import { lockDataDir } from "./dataDirLock";
import { drainRuns } from "./drainRuns";
import { LocalScheduler } from "../schedule/localScheduler";
import { runScheduled } from "../schedule/runScheduled";
import { resumeBatches } from "../batches/resumeBatches";
import { settleInterruptedRuns } from "./settleInterruptedRuns";
import { repairInterruptedChanges } from "../functions/repairInterruptedChanges";
import { createTablesIfMissing } from "../store/createTables";
import { createStore } from "../store/store";
import { removeExpiredItems } from "../store/expiredItems";
import { type BootstrapResult, bootstrapAdminKey } from "./bootstrap";
import { type DynaliteClients, createDynaliteClients } from "./dynaliteClient";
import { tablesReady } from "./tablesReady";
import type { DocumentSender } from "../store/dynamo";
import { startDynalite } from "./dynaliteServer";
import { DEFAULT_STREAMS_PER_ACCOUNT, createHttpServer } from "./httpServer";
import { OpenStreams } from "./openStreams";
import { DEFAULT_CONNECTION_GUARDS, REQUEST_TIMEOUTS } from "./requestGuards/connectionGuards";
import { createLocalArtifacts } from "../runtime/local/localArtifacts";
import { LeaseReleases } from "../profiles/leaseReleases";
import { createLocalProfileBlobs } from "../profiles/localProfileBlobs";
import { createLocalSecretBox } from "../secrets/localSecretBox";
import { LocalWebhookDispatcher } from "../webhooks/localDispatcher";
import { DEFAULT_RETRY_BASE_MS } from "../webhooks/retrySchedule";
import { createWebhookOutbox } from "../webhooks/webhookOutbox";
import { RunQueueState } from "../queue/queueState";
import { QueueSweep } from "../queue/sweepQueues";
import { AnalysisPool } from "../code/analysis/analysisPool";
import { sourceWorkerScript } from "../code/analysis/analysisWorkerScript";
import { DEFAULT_ANALYSIS_BUDGET, DEFAULT_ANALYSIS_WORKERS } from "../code/analysis/codeAnalysis";

/** Verified API keys are remembered this long; revocations through the API apply at once. */
const IDENTITY_CACHE_MS = 5_000;

export interface LocalService {
  url: string;
  port: number;
  /** The dynalite endpoint (tests read the table directly). */
  dynamoEndpoint: string;
  /** What every request to it must carry (header STORE_SECRET_HEADER; see DynaliteServer.secret). */
  storeSecret: string;
  /** Event streams (GET /runs/{id}/events) open now, and the live-log listeners they hold on runs. */
  streams(): { open: number; logWatchers: number };
  /** Worker processes now: all of them, and the idle (warm) ones. */
  workers(): { processes: number; idle: number };
  /** Workers' big frames parsed, results gzipped for the store and webhook bodies built on the result-parsing thread so far, and that thread's id (-1 before the first). */
  resultParsing(): { parsed: number; gzipped: number; bodies: number; recordings: number; threadId: number; cpuGroup?: string };
  /** Deploy analysis now: its worker threads, and the deploys they read or that wait for one. */
  analyses(): { workers: number; running: number; waiting: number };
  /** Holds the worker bundle and browser profiles; every worker and browser names it in its command line. */
  runtimeDir: string;
  bootstrap: BootstrapResult;
  /** How runs are isolated here (the start-up line describes it). */
  sandbox: Sandbox;
  deps: Deps;
  /** Stops serving, then closes the store; safe to call more than once. */
  close(): Promise<void>;
  /**
   * A graceful stop (SIGTERM, SIGINT): no new requests or scheduled firings; runs in progress
   * may finish (and their callers get their answers) for up to the shutdown grace; then close().
   */
  shutdown(): Promise<void>;
}

export interface LocalServiceOptions {
  clock?: Clock;
  /** Where request lines and diagnostics go (default: stdout / stderr). */
  log?: (line: string) => void;
  errorLog?: (line: string) => void;
  /** Wraps the stores' document client (a test sends every store call through two clients and compares them). */
  wrapStoreClient?: (doc: DocumentSender) => DocumentSender;
}

/**
 * How often the run queue's recovery sweep runs (sweepQueues.ts): releases wake the queue
 * directly, so this only recovers what a dispatcher that died left behind.
 */
const QUEUE_SWEEP_MS = 30_000;

/** How long runs in progress may go on after SIGTERM/SIGINT (BROWSERFN_SHUTDOWN_GRACE_SECONDS). */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 10;

/** How often what is past its retention is removed (artifacts' files, expired items: dynalite has no TTL). */
const ARTIFACT_SWEEP_MS = 60 * 60_000;

/** The whole service on one machine: dynalite, the route handlers over HTTP, the local runtime. */
export async function startLocalService(config: LocalConfig, options: LocalServiceOptions = {}): Promise<LocalService> {
  // Before anything in the data dir is touched: a second start on it stops here (DataDirInUse).
  const lock = await lockDataDir(config.dataDir);
  // The store's process starts while the sandbox's files are made and checked: neither needs the other.
  const dynamoStarting = startDynalite(path.join(config.dataDir, "dynamodb"), { log: options.errorLog });
  dynamoStarting.catch(() => undefined); // awaited below, and by stopParts
  let clients: DynaliteClients | undefined;
  // Worker bundle and browser profiles live outside the data dir: user code never sees the data.
  let runtimeDir: string | undefined;
  let runtime: ReturnType<typeof createLocalRuntime> | undefined;
  let scheduler: LocalScheduler | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let queueSweepTimer: NodeJS.Timeout | undefined;
  const queue = new RunQueueState();
  let dispatcher: LocalWebhookDispatcher | undefined;
  // The service's costly work on runs' results (big frames parsed, webhook bodies built): one thread, accounts in turn.
  const resultWork = new ResultParser();
  // No thread is started before the first deploy: the compiler loads then, in the worker.
  const { workers: analysisWorkers, ...budget } = config.deployAnalysis ?? { ...DEFAULT_ANALYSIS_BUDGET, workers: DEFAULT_ANALYSIS_WORKERS };
  const codeAnalysis = new AnalysisPool({
    script: sourceWorkerScript(),
    budget,
    maxWorkers: analysisWorkers,
    log: options.errorLog ?? ((line: string) => console.error(line)),
  });
  /** Aborted first when the service stops: a batch's runs not started yet stay queued for the next start. */
  const shutdown = new AbortController();
  /** Stops what has been started, in the order that lets runs end before the store goes. */
  const stopParts = async () => {
    shutdown.abort();
    clearInterval(sweepTimer);
    clearInterval(queueSweepTimer);
    // Queued runs stay queued in the store for the next start; none is started from here on.
    queue.close();
    // Attempts under way are aborted unrecorded; runs that end from here on keep their deliveries in the outbox.
    await dispatcher?.close();
    await scheduler?.close();
    await runtime?.close();
    await resultWork.close();
    await codeAnalysis.close();
    clients?.destroy();
    await (await dynamoStarting.catch(() => undefined))?.close();
    if (runtimeDir) await rm(runtimeDir, { recursive: true, force: true });
    await lock.release();
  };
  try {
    const ownRuntimeDir = await mkdtemp(path.join(tmpdir(), "browserfn-runtime-"));
    runtimeDir = ownRuntimeDir;
    await chmod(ownRuntimeDir, 0o755);
    const allowLocalNetwork = config.allowLocalNetwork ?? false;
    const setting = config.sandbox ?? "auto";
    const [opened, prepared] = await bothSettled(
      (async () => {
        const dynamo = await dynamoStarting;
        clients = createDynaliteClients(dynamo.endpoint, dynamo.secret, config.storeTimeoutMs);
        // A start on an existing data dir asks dynalite directly; the SDK client does the rest (first start, upgrades).
        if (!(await tablesReady(dynamo.endpoint, dynamo.secret, config.tablePrefix))) await createTablesIfMissing(clients.client, config.tablePrefix);
        return { dynamo, doc: clients.doc };
      })(),
      (async () => {
        await replacePreviousRuntime(config.dataDir, ownRuntimeDir);
        const files = await prepareRuntimeFiles(ownRuntimeDir, allowLocalNetwork);
        const sandbox = await confirmSandbox(await chooseSandbox(setting, allowLocalNetwork), setting, files);
        return { files, sandbox };
      })(),
    );
    const { dynamo, doc } = opened;
    const { files, sandbox } = prepared;
    // Its dynalite data dir cannot be opened twice: this process is the only writer.
    const storeDoc = options.wrapStoreClient?.(doc) ?? doc;
    const store = createStore(storeDoc, config.tablePrefix, {
      soleWriter: true,
      ...(config.artifactRetentionDays ? { artifactRetentionDays: config.artifactRetentionDays } : {}),
      ...(config.runRetentionDays ? { runRetentionDays: config.runRetentionDays } : {}),
      compressor: resultWork,
    });
    const clock = options.clock ?? systemClock;
    const secretBox = await createLocalSecretBox(config.dataDir);
    const bootstrap = await bootstrapAdminKey(store.accounts, config.dataDir, config.bootstrapKey, clock.now());
    const log = options.errorLog ?? ((line: string) => console.error(line));
    dispatcher = new LocalWebhookDispatcher(
      { store, secretBox, clock, log, allowLocalNetwork, retryBaseMs: config.webhooks?.retryBaseMs ?? DEFAULT_RETRY_BASE_MS, bodies: resultWork },
      { pollMs: config.webhooks?.pollMs },
    );
    const webhooks = createWebhookOutbox({ store, queue: dispatcher, clock, log, bodies: resultWork });
    await settleInterruptedRuns(store, clock, webhooks);
    // Artifacts' files live in the data dir: only the service writes them, from what workers send.
    const storageCap = async (accountId: string) => storageCapBytes(config.plans[(await store.accounts.getAccount(accountId))?.plan ?? DEFAULT_PLAN]);
    const artifacts = createLocalArtifacts(path.join(config.dataDir, "artifacts"), store, log, clock, storageCap, resultWork);
    // What is past its retention goes: artifacts' files, then every expired item (runs and their parts too).
    const sweep = async () => {
      await artifacts.sweep(clock.now());
      await removeExpiredItems(storeDoc, config.tablePrefix, clock.now());
    };
    await sweep();
    sweepTimer = setInterval(() => void sweep().catch((error: unknown) => log(`retention sweep failed: ${(error as Error).message}`)), ARTIFACT_SWEEP_MS);
    sweepTimer.unref();
    // Accounts' CPU shares: their sandboxes, and the result thread while it works for one; deploys are read in the background.
    const cpuShares = await createCpuShares(sandbox.cpuShares);
    codeAnalysis.inBackground(cpuShares);
    // Profiles' states live in the data dir, sealed with its key: only the service reads them.
    const profileBlobs = await createLocalProfileBlobs(config.dataDir);
    runtime = createLocalRuntime({
      store,
      files,
      sandbox,
      cpuShares,
      artifacts,
      profiles: { store: store.profiles, blobs: profileBlobs, releases: new LeaseReleases() },
      log,
      limits: { perFunction: config.workers.perFunction, total: config.workers.total, idleMs: config.workers.idleSeconds * 1000 },
      parser: resultWork,
    });
    await repairInterruptedChanges({ store, runtime, log });
    scheduler = new LocalScheduler({ store, clock, log, fire: (functionId, at) => runScheduled(deps, functionId, at) });
    const deps: Deps = {
      store,
      identity: createIdentity(store.accounts, {
        tokens: config.oauth ? createJwtVerifier({ ...config.oauth, accounts: store.accounts, defaultPlan: DEFAULT_PLAN }) : undefined,
        cacheMs: IDENTITY_CACHE_MS,
      }),
      runtime,
      queue,
      scheduler,
      codeAnalysis,
      rateLimiter: createRateLimiter(config.rateLimit),
      ...(config.deployRate ? { deployLimiter: createRateLimiter(config.deployRate, Date.now, { what: "deploys", per: "account" }) } : {}),
      clock,
      secretBox,
      webhooks,
      profileBlobs,
      artifactContent: { open: async (item) => artifacts.read(item).then((bytes) => (bytes ? { bytes } : null)) },
      config: {
        plans: config.plans,
        publicUrl: null,
        syncWaitSeconds: config.syncWaitSeconds,
        maxBodyBytes: MAX_BODY_BYTES,
        allowLocalNetwork,
        oauthIssuer: config.oauth?.issuer ?? null,
      },
      shutdown: shutdown.signal,
      log,
    };
    const requestLog = config.requestLog ? (options.log ?? ((line: string) => console.log(line))) : null;
    const streams = new OpenStreams(DEFAULT_STREAMS_PER_ACCOUNT);
    const guards = config.connections
      ? { maxConnectionsPerClient: config.connections.maxPerClient, bodyIdleMs: config.connections.bodyIdleSeconds * 1000 }
      : DEFAULT_CONNECTION_GUARDS;
    const server = createHttpServer(ROUTES, deps, requestLog, REQUEST_TIMEOUTS, streams, guards);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
    deps.config.publicUrl = url;
    await lock.announce(url);
    await scheduler.start();
    dispatcher.start(webhooks);
    // Runs queued before this start (or by another service on the same store) start now.
    const queueSweep = new QueueSweep(deps);
    await queueSweep.sweep();
    queueSweepTimer = setInterval(() => void queueSweep.sweep().catch((error: unknown) => log(`sweeping the run queue failed: ${(error as Error).message}`)), QUEUE_SWEEP_MS);
    queueSweepTimer.unref();
    await resumeBatches(deps);
    let closing: Promise<void> | undefined;
    let serverClosed: Promise<void> | undefined;
    const stopServing = () => {
      serverClosed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Open event streams would hold the close up: they end now (clients resume elsewhere or later).
        streams.endAll();
      });
      return serverClosed;
    };
    const close = () => {
      closing ??= (async () => {
        await stopServing();
        await stopParts();
      })();
      return closing;
    };
    const graceMs = (config.shutdownGraceSeconds ?? DEFAULT_SHUTDOWN_GRACE_SECONDS) * 1000;
    return {
      url,
      port,
      dynamoEndpoint: dynamo.endpoint,
      storeSecret: dynamo.secret,
      runtimeDir: ownRuntimeDir,
      sandbox,
      workers: () => runtime?.pool.size ?? { processes: 0, idle: 0 },
      resultParsing: () => ({ ...resultWork.stats }),
      analyses: () => codeAnalysis.size,
      streams: () => ({ open: streams.count, logWatchers: runtime?.live.watchers ?? 0 }),
      bootstrap,
      deps,
      close,
      shutdown: async () => {
        if (!closing) {
          const deadline = Date.now() + graceMs;
          // Requests in progress (sync callers waiting for their runs) go on; no new ones are taken.
          const served = stopServing();
          // No new firings (a firing in progress is a run like any other: drained below).
          void scheduler?.close();
          if (runtime) await drainRuns(runtime.taken, store, graceMs);
          await Promise.race([served, new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())))]);
        }
        await close();
      },
    };
  } catch (error) {
    await stopParts();
    throw error;
  }
}

/** Both results, once both have settled (neither is left running when the other fails); the first failure is thrown. */
async function bothSettled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === "rejected") throw first.reason;
  if (second.status === "rejected") throw second.reason;
  return [first.value, second.value];
}
