/**
 * `browserfn/client`: a typed client of the browserfn HTTP API, over the global `fetch`.
 *
 * ```ts
 * import { BrowserfnClient } from "browserfn/client";
 * const client = new BrowserfnClient({ baseUrl: "http://127.0.0.1:8787", apiKey: process.env.BROWSERFN_API_KEY });
 * await client.createFunction({ name: "title", code });
 * const { result } = await client.invoke("title", { url: "https://example.com" });
 * ```
 *
 * Failures throw a BrowserfnError subclass chosen by the API's error `code`. Idempotent calls
 * (GET, DELETE) are retried after 429/5xx honouring `Retry-After`; creates and invocations never are.
 */
import { version } from "../package.json";
import { type InvocationResult, type InvokeOptions, type WaitOptions, invoke, stringParams, waitForRun } from "./invocation";
import { type RunEvent, type RunEventsOptions, runEvents } from "./runEvents";
import { type Send, type TransportOptions, createTransport } from "./transport";
import { type WaitBatchOptions, waitForBatch } from "./batches";
import type {
  AcceptedBatch,
  AcceptedRun,
  AccountPlan,
  ArtifactContent,
  ArtifactList,
  Batch,
  BatchRun,
  BatchRunList,
  ApiKeyList,
  CreateApiKeyInput,
  CreateFunctionInput,
  CreatedApiKey,
  ForkFunctionInput,
  FunctionList,
  FunctionListItem,
  FunctionMetrics,
  FunctionRecord,
  ListRunsQuery,
  LogList,
  ProfileInfo,
  ProfileList,
  Run,
  RunList,
  SecretList,
  UpdateFunctionInput,
  Usage,
  VersionCode,
  VersionList,
} from "./types";

export * from "./errors";
export type * from "./types";
export type { InvocationResult, InvokeOptions, WaitOptions } from "./invocation";
export type { WaitBatchOptions } from "./batches";
export type { RunEvent, RunEventsOptions } from "./runEvents";
export type { ApiResponse, RequestSpec, Send, TransportOptions } from "./transport";

/** The version of this client, sent as `x-service-sdk-version: browserfn-client/<version>`. */
export const CLIENT_VERSION: string = version;

/** Options of BrowserfnClient: where the service is, the key, retries, extra headers. */
export type ClientOptions = TransportOptions;

const enc = encodeURIComponent;

/** A client of one browserfn service, for one API key. Every method is one API call (invoke may poll). */
export class BrowserfnClient {
  /** Sends one request; exposed for calls this class does not cover. */
  readonly send: Send;
  private readonly transport: TransportOptions;

  /** @param options the service's base URL, the API key, and retry settings. */
  constructor(options: ClientOptions) {
    this.transport = { ...options, headers: { "x-service-sdk-version": `browserfn-client/${CLIENT_VERSION}`, ...options.headers } };
    this.send = createTransport(this.transport);
  }

  private async body<T>(spec: Parameters<Send>[0]): Promise<T> {
    return (await this.send(spec)).body as T;
  }

  /** `GET /health`: `{status: "ok"}` when the service is up (no key needed). */
  health(): Promise<{ status: string }> {
    return this.body({ method: "GET", path: "/health", idempotent: true });
  }

  /** `GET /openapi.json`: the service's OpenAPI 3.1 document. */
  openapi(): Promise<Record<string, unknown>> {
    return this.body({ method: "GET", path: "/openapi.json", idempotent: true });
  }

  /** `POST /functions`: deploys a new function (ConflictError `function_exists` when the name is taken). */
  createFunction(input: CreateFunctionInput): Promise<FunctionRecord> {
    return this.body({ method: "POST", path: "/functions", body: input, idempotent: false });
  }

  /** `GET /functions`: one page of the account's functions in name order (`limit` 1..100). */
  listFunctions(options: { limit?: number; cursor?: string } = {}): Promise<FunctionList> {
    return this.body({ method: "GET", path: "/functions", query: options, idempotent: true });
  }

  /** Every function of the account, page after page. */
  async *allFunctions(pageSize = 100): AsyncGenerator<FunctionListItem> {
    let cursor: string | undefined;
    do {
      const page = await this.listFunctions({ limit: pageSize, cursor });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** `GET /functions/{ref}/info`: one function by name, or by function_id (also a shared one of another account). */
  getFunction(ref: string): Promise<FunctionRecord> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/info`, idempotent: true });
  }

  /**
   * `GET /functions/{ref}/openapi.json`: a one-operation OpenAPI 3.1 document for invoking the
   * function (its input schema as the request body), to import as a tool.
   */
  getFunctionOpenapi(ref: string): Promise<Record<string, unknown>> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/openapi.json`, idempotent: true });
  }

  /** `PATCH /functions/{ref}`: changes settings; new `code` adds a version. */
  updateFunction(ref: string, input: UpdateFunctionInput): Promise<FunctionRecord> {
    return this.body({ method: "PATCH", path: `/functions/${enc(ref)}`, body: input, idempotent: false });
  }

  /**
   * Waits while the function is `deploying` (on AWS, create and update answer before the deploy
   * job has provisioned the function's Lambda), reading `/info` every `intervalMs`; resolves with
   * the record once it is `active` or `failed` (its `status_reason` says why), or as it stands
   * after `timeoutMs`.
   */
  async waitUntilDeployed(ref: string, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<FunctionRecord> {
    const deadline = Date.now() + (options.timeoutMs ?? 180_000);
    let record = await this.getFunction(ref);
    while (record.status === "deploying" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs ?? 1000, Math.max(0, deadline - Date.now()))));
      record = await this.getFunction(ref);
    }
    return record;
  }

  /** `DELETE /functions/{ref}`: deletes the function, its schedule, versions and runtime. */
  async deleteFunction(ref: string): Promise<void> {
    await this.send({ method: "DELETE", path: `/functions/${enc(ref)}`, idempotent: true });
  }

  /** `GET /functions/{ref}/versions`: every version, oldest first. */
  listVersions(ref: string): Promise<VersionList> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/versions`, idempotent: true });
  }

  /** `GET /functions/{ref}/versions/{version}`: one version with its source. */
  getVersion(ref: string, version: string | number): Promise<VersionCode> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/versions/${enc(String(version))}`, idempotent: true });
  }

  /** `POST /functions/{function_id}/fork`: copies a shared (or own) function into this account. */
  forkFunction(functionId: string, input: ForkFunctionInput = {}): Promise<FunctionRecord> {
    return this.body({ method: "POST", path: `/functions/${enc(functionId)}/fork`, body: input, idempotent: false });
  }

  /**
   * Invokes a function and resolves with its result, waiting through 202s by polling the run
   * (up to `options.timeoutMs`). A failed run throws FunctionError (FunctionTimeoutError for
   * `function_timeout`) with its `runId`. Retried after a lost answer, a 5xx or a 429 under one
   * `Idempotency-Key` (options.idempotencyKey, default a random one): one run for all attempts.
   */
  invoke<T = unknown>(name: string, params?: Record<string, unknown>, options?: InvokeOptions): Promise<InvocationResult<T>> {
    return invoke<T>(this.send, name, params, options);
  }

  /** Starts an invocation without waiting (`Prefer: respond-async`): 202 with the run to poll. */
  startInvocation(
    name: string,
    params?: Record<string, unknown>,
    options: { version?: string | number; idempotencyKey?: string; method?: "POST" | "GET" } = {},
  ): Promise<AcceptedRun> {
    const headers: Record<string, string> = { prefer: "respond-async", "idempotency-key": options.idempotencyKey ?? globalThis.crypto.randomUUID() };
    if (options.version !== undefined) headers["x-function-version"] = String(options.version);
    if (options.method === "GET") return this.body({ method: "GET", path: `/functions/${enc(name)}`, query: stringParams(params), headers, idempotent: true });
    return this.body({ method: "POST", path: `/functions/${enc(name)}`, body: params, headers, idempotent: true });
  }

  /**
   * `POST /functions/{ref}/batch`: one run per item (1..1000 parameter objects), all checked
   * before any starts (ValidationError `invalid_parameters` whose `details.items` names each bad
   * item's index); 202 with the batch id and the runs' ids in the order of the items. Sent under
   * an `Idempotency-Key` (options.idempotencyKey, default a random one), so a retry after a lost
   * answer starts no second batch.
   */
  startBatch(name: string, items: Record<string, unknown>[], options: { version?: string | number; idempotencyKey?: string } = {}): Promise<AcceptedBatch> {
    const headers: Record<string, string> = { "idempotency-key": options.idempotencyKey ?? globalThis.crypto.randomUUID() };
    if (options.version !== undefined) headers["x-function-version"] = String(options.version);
    return this.body({ method: "POST", path: `/functions/${enc(name)}/batch`, body: { items }, headers, idempotent: true });
  }

  /** `GET /batches/{batch_id}`: the batch's counts by status, and `finished_at` once every run has ended. */
  getBatch(batchId: string): Promise<Batch> {
    return this.body({ method: "GET", path: `/batches/${enc(batchId)}`, idempotent: true });
  }

  /** `GET /batches/{batch_id}/runs`: one page of the batch's runs, in the order of its items (`limit` 1..1000, default 100). */
  listBatchRuns(batchId: string, options: { limit?: number; cursor?: string } = {}): Promise<BatchRunList> {
    return this.body({ method: "GET", path: `/batches/${enc(batchId)}/runs`, query: options, idempotent: true });
  }

  /** Every run of a batch, page after page, in the order of its items. */
  async *allBatchRuns(batchId: string, pageSize = 1000): AsyncGenerator<BatchRun> {
    let cursor: string | undefined;
    do {
      const page = await this.listBatchRuns(batchId, { limit: pageSize, cursor });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** Polls a batch until every run has ended (`finished_at`) and returns it; WaitTimeoutError past `timeoutMs`. */
  waitForBatch(batchId: string, options?: WaitBatchOptions): Promise<Batch> {
    return waitForBatch((id) => this.getBatch(id), batchId, options);
  }

  /** `GET /runs/{run_id}`: one run of this account. */
  getRun(runId: string): Promise<Run> {
    return this.body({ method: "GET", path: `/runs/${enc(runId)}`, idempotent: true });
  }

  /**
   * `GET /runs`: the account's runs, newest first, filtered by function (name or id), status and
   * trigger; pass the answer's `next_cursor` as `cursor` for the next page (null: no more).
   */
  listRuns(query: ListRunsQuery = {}): Promise<RunList> {
    return this.body({ method: "GET", path: "/runs", query: { ...query }, idempotent: true });
  }

  /**
   * `POST /runs/{run_id}/cancel`: a queued run never starts, a running one is stopped (its logs
   * and failure evidence kept); resolves with the run as it ended (`canceled`). A run that has
   * ended already throws (409 `run_finished`).
   */
  cancelRun(runId: string): Promise<Run> {
    return this.body({ method: "POST", path: `/runs/${enc(runId)}/cancel`, idempotent: false });
  }

  /**
   * `GET /runs/{run_id}/events`: the run's events as they happen (`status`, `log`, then one
   * `result` or `error`, after which it returns), reconnecting with `Last-Event-ID` as needed.
   */
  runEvents(runId: string, options?: RunEventsOptions): AsyncGenerator<RunEvent> {
    return runEvents(this.transport, runId, options);
  }

  /** `GET /runs/{run_id}/artifacts`: the files a run of this account kept, in name order. */
  listArtifacts(runId: string): Promise<ArtifactList> {
    return this.body({ method: "GET", path: `/runs/${enc(runId)}/artifacts`, idempotent: true });
  }

  /**
   * `GET /runs/{run_id}/artifacts/{name}`: one artifact's bytes and content type. On AWS the
   * service answers with a redirect to a short-lived download URL, which fetch follows (without
   * the API key: it is not sent to another origin).
   */
  async downloadArtifact(runId: string, name: string): Promise<ArtifactContent> {
    const path = `/runs/${enc(runId)}/artifacts/${enc(name)}`;
    const response = await this.send({ method: "GET", path, headers: { accept: "*/*" }, binary: true, idempotent: true });
    return { contentType: response.headers.get("content-type") ?? "application/octet-stream", bytes: response.bytes ?? new Uint8Array(0) };
  }

  /** Polls a run until it ends (succeeded, failed or timed_out) and returns it; WaitTimeoutError past `timeoutMs`. */
  waitForRun(runId: string, options?: WaitOptions): Promise<Run> {
    return waitForRun(this.send, runId, options);
  }

  /**
   * `PUT /functions/{ref}/secrets/{name}`: sets (or replaces) one secret of a function, which its
   * runs read with `secrets.get(name)`. `name` is `^[A-Z][A-Z0-9_]{0,63}$`, `value` 4 to 4096
   * bytes of UTF-8; at most 50 per function. The value is never sent back.
   */
  async setSecret(ref: string, name: string, value: string): Promise<void> {
    await this.send({ method: "PUT", path: `/functions/${enc(ref)}/secrets/${enc(name)}`, body: { value }, idempotent: true });
  }

  /** `GET /functions/{ref}/secrets`: the names of the function's secrets and when each was set (never a value). */
  listSecrets(ref: string): Promise<SecretList> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/secrets`, idempotent: true });
  }

  /** `DELETE /functions/{ref}/secrets/{name}`: removes one secret (NotFoundError `secret_not_found` when there is none). */
  async deleteSecret(ref: string, name: string): Promise<void> {
    await this.send({ method: "DELETE", path: `/functions/${enc(ref)}/secrets/${enc(name)}`, idempotent: true });
  }

  /** `GET /profiles`: the account's profiles (Session.start({ profile }) opens and saves them). */
  listProfiles(): Promise<ProfileList> {
    return this.body({ method: "GET", path: "/profiles", idempotent: true });
  }

  /** `GET /profiles/{name}`: one profile's size, last save and cookie domains (NotFoundError `profile_not_found`). */
  getProfile(name: string): Promise<ProfileInfo> {
    return this.body({ method: "GET", path: `/profiles/${enc(name)}`, idempotent: true });
  }

  /** `DELETE /profiles/{name}`: deletes a profile and its saved state. */
  async deleteProfile(name: string): Promise<void> {
    await this.send({ method: "DELETE", path: `/profiles/${enc(name)}`, idempotent: true });
  }

  /** `GET /functions/{ref}/logs`: the latest runs, newest first (`limit` 1..1000, default 50). */
  getLogs(ref: string, options: { limit?: number } = {}): Promise<LogList> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/logs`, query: options, idempotent: true });
  }

  /** `GET /functions/{ref}/metrics`: call counts, success rate (%), durations (ms). */
  getMetrics(ref: string): Promise<FunctionMetrics> {
    return this.body({ method: "GET", path: `/functions/${enc(ref)}/metrics`, idempotent: true });
  }

  /** `GET /usage`: the account's metered usage in a month (`YYYY-MM`, default this month). */
  getUsage(options: { month?: string } = {}): Promise<Usage> {
    return this.body({ method: "GET", path: "/usage", query: options, idempotent: true });
  }

  /** `POST /api-keys`: a new key; its secret `key` is in this answer only. */
  createApiKey(input: CreateApiKeyInput = {}): Promise<CreatedApiKey> {
    return this.body({ method: "POST", path: "/api-keys", body: input, idempotent: false });
  }

  /** `GET /api-keys`: the account's keys (never their secrets). */
  listApiKeys(): Promise<ApiKeyList> {
    return this.body({ method: "GET", path: "/api-keys", idempotent: true });
  }

  /** `DELETE /api-keys/{id}`: revokes a key at once. */
  async deleteApiKey(keyId: string): Promise<void> {
    await this.send({ method: "DELETE", path: `/api-keys/${enc(keyId)}`, idempotent: true });
  }

  /** `PUT /accounts/{account}/plan` (admin keys only): moves an account to another plan. */
  setAccountPlan(account: string, plan: string): Promise<AccountPlan> {
    return this.body({ method: "PUT", path: `/accounts/${enc(account)}/plan`, body: { plan }, idempotent: true });
  }
}
