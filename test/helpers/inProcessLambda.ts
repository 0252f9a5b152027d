import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { unzipSync } from "fflate";
import type { Browser } from "puppeteer-core";
import { createLambdaHandler, type LambdaHandlerOptions, type LambdaRunEvent, type LambdaRunHandler } from "../../lambdas/runner/lambdaHandler";
import type { LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";

/** One of the service's own Lambdas (the recorder, a deploy job), by the name or ARN it is invoked with. */
export type ServiceLambda = (payload: unknown) => Promise<unknown>;

/** Lambda's synchronous answer limit. */
const MAX_ANSWER_BYTES = 6 * 1024 * 1024;

interface FunctionState {
  latest: Uint8Array;
  /** Timeout (s) of the latest configuration, and of each published version. */
  timeout: number;
  /** Layer version ARNs of the latest configuration (each published version keeps its own). */
  layers: string[];
  published: { zip: Uint8Array; timeout: number; layers: string[] }[];
  aliases: Map<string, number>;
}

const codeSha256 = (zip: Uint8Array) => createHash("sha256").update(zip).digest("base64");

/** Which container an invocation runs in: `process.exit` from its code crashes that container. */
const invocations = new AsyncLocalStorage<ContainerState>();
const realExit = process.exit.bind(process);

interface ContainerState {
  exitCode?: number;
  exited(): void;
}

/**
 * The Lambda API, faked in this process: it keeps each function's zips, configuration,
 * published versions and aliases. A RequestResponse Invoke of a function's alias really runs
 * the published zip (unpacked into a directory, served by createLambdaHandler in this process
 * as the Lambda Node runtime would) and answers as Lambda does: the handler's return value as
 * JSON, or a function error for a timeout (`Sandbox.Timedout`, after the version's Timeout),
 * an answer over 6 MB (`Function.ResponseSizeTooLarge`), a thrown error, or an exit of the
 * process (`Runtime.ExitError`; the container is then replaced). `services` are the service's
 * own Lambdas (recorder, deploy job), invoked by name or ARN.
 */
export class InProcessLambda {
  readonly sent: LambdaCommand[] = [];
  /** Every event a function's Lambda was invoked with. */
  readonly events: unknown[] = [];
  private readonly functions = new Map<string, FunctionState>();
  private readonly handlers = new Map<string, LambdaRunHandler>();
  private readonly background = new Set<Promise<unknown>>();
  /**
   * When true, functions' invocations take turns: the runner keeps its run in progress in
   * module state (layers/runtime/runContext.ts), which every container in this one process
   * shares, so two runs at the same moment would refuse each other here (on Lambda each has its
   * own container). For tests whose runs overlap in the workflow (the run queue's).
   */
  oneRunAtATime = false;
  private turn: Promise<unknown> = Promise.resolve();
  /**
   * When set and it answers true for an Invoke of a function (`<name>:<alias>`), that Invoke is
   * refused as Lambda refuses one over its concurrency (TooManyRequestsException, 429): the
   * function does not run. The service's own Lambdas are never throttled here.
   */
  throttle?: (functionName: string) => boolean;
  /**
   * The environment Lambda gives a function's process (its role's credentials, an endpoint), by
   * the function's name: set in this process's environment while an invocation of it runs, and
   * restored after, since its code runs here. One invocation at a time when used.
   */
  environment?: (functionName: string) => Record<string, string>;
  /** Errors the next commands of a class (e.g. "CreateFunctionCommand") answer with, each once, in order (see fail). */
  private readonly faults = new Map<string, Error[]>();

  constructor(
    private readonly root: string,
    private readonly services: Record<string, ServiceLambda>,
    private readonly launchBrowser?: () => Promise<Browser>,
    /** The KMS client a function's Lambda gets, by its name (its session's credentials). */
    private readonly kmsFor?: (functionName: string) => LambdaHandlerOptions["kms"],
  ) {}

  /** The next `times` commands of class `command` answer `error` (as Lambda refusing or throttling them) and change nothing. */
  fail(command: string, error: () => Error, times = 1): void {
    this.faults.set(command, [...(this.faults.get(command) ?? []), ...Array.from({ length: times }, error)]);
  }

  async send(command: LambdaCommand): Promise<unknown> {
    this.sent.push(command);
    const fault = this.faults.get(command.constructor.name)?.shift();
    if (fault) throw fault;
    const input = command.input as Record<string, unknown> & { FunctionName: string };
    const fn = this.functions.get(input.FunctionName);
    switch (command.constructor.name) {
      case "CreateFunctionCommand":
        this.functions.set(input.FunctionName, {
          latest: (input.Code as { ZipFile: Uint8Array }).ZipFile,
          timeout: Number(input.Timeout ?? 3),
          layers: Array.isArray(input.Layers) ? input.Layers.map(String) : [],
          published: [],
          aliases: new Map(),
        });
        return {};
      case "UpdateFunctionCodeCommand":
        if (!fn) throw missing(input.FunctionName);
        fn.latest = input.ZipFile as Uint8Array;
        return {};
      case "UpdateFunctionConfigurationCommand":
        if (!fn) throw missing(input.FunctionName);
        if (input.Timeout !== undefined) fn.timeout = Number(input.Timeout);
        if (Array.isArray(input.Layers)) fn.layers = input.Layers.map(String);
        return {};
      case "GetFunctionConfigurationCommand": {
        if (!fn) throw missing(input.FunctionName);
        // A qualifier is an alias or, as on Lambda, a version number.
        const qualifier = input.Qualifier as string | undefined;
        const number = qualifier === undefined ? undefined : /^\d+$/.test(qualifier) ? Number(qualifier) : fn.aliases.get(qualifier);
        const version = number === undefined ? undefined : fn.published[number - 1];
        if (input.Qualifier !== undefined && !version) throw missing(`${input.FunctionName}:${input.Qualifier as string}`);
        const zip = version?.zip ?? fn.latest;
        const layers = (version?.layers ?? fn.layers).map((Arn) => ({ Arn }));
        return { Timeout: version?.timeout ?? fn.timeout, CodeSha256: codeSha256(zip), Layers: layers, State: "Active", LastUpdateStatus: "Successful" };
      }
      case "PublishVersionCommand": {
        if (!fn) throw missing(input.FunctionName);
        // As Lambda: only over the code the caller names, when it names one; nothing new when nothing changed.
        if (input.CodeSha256 !== undefined && input.CodeSha256 !== codeSha256(fn.latest)) {
          throw Object.assign(new Error("CodeSha256 does not match the function's code"), { name: "InvalidParameterValueException" });
        }
        const last = fn.published.at(-1);
        if (last && codeSha256(last.zip) === codeSha256(fn.latest) && last.timeout === fn.timeout && last.layers.join() === fn.layers.join()) return { Version: String(fn.published.length) };
        return { Version: String(fn.published.push({ zip: fn.latest, timeout: fn.timeout, layers: fn.layers })) };
      }
      case "CreateAliasCommand":
      case "UpdateAliasCommand":
        fn?.aliases.set(input.Name as string, Number(input.FunctionVersion));
        return {};
      case "DeleteFunctionCommand":
        if (!fn) throw missing(input.FunctionName);
        this.functions.delete(input.FunctionName);
        return {};
      case "InvokeCommand":
        return this.invoke(input.FunctionName, input.Qualifier as string | undefined, String(input.Payload ?? "null"), input.InvocationType as string | undefined);
      default:
        throw new Error(`the fake does not know ${command.constructor.name}`);
    }
  }

  /** Waits for the Event invocations started so far. */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  async close(): Promise<void> {
    await this.settled();
    await Promise.all([...this.handlers.values()].map((handler) => handler.close()));
  }

  private async invoke(functionName: string, qualifier: string | undefined, payload: string, type = "RequestResponse"): Promise<unknown> {
    const [name = "", alias = qualifier] = qualifier === undefined ? functionName.split(/:(?=[^:]+$)/) : [functionName, qualifier];
    const service = this.services[functionName];
    if (!service && this.throttle?.(`${name}:${alias ?? "$LATEST"}`)) throw tooManyRequests();
    const answer = service ? () => this.callService(service, payload) : () => this.takeTurn(() => this.callFunction(name, alias ?? "$LATEST", payload));
    if (type === "Event") {
      const running = answer();
      this.background.add(running);
      void running.finally(() => this.background.delete(running));
      return { StatusCode: 202 };
    }
    return answer();
  }

  private async callService(service: ServiceLambda, payload: string): Promise<unknown> {
    try {
      return { StatusCode: 200, Payload: encode(await service(JSON.parse(payload) as unknown)) };
    } catch (error) {
      return functionError((error as Error).name || "Error", (error as Error).message);
    }
  }

  private takeTurn(call: () => Promise<unknown>): Promise<unknown> {
    if (!this.oneRunAtATime) return call();
    const result = this.turn.then(call, call);
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async callFunction(name: string, alias: string, payload: string): Promise<unknown> {
    const fn = this.functions.get(name);
    const number = fn?.aliases.get(alias);
    const version = number === undefined ? undefined : fn?.published[number - 1];
    if (!version) throw missing(`${name}:${alias}`);
    const key = `${name}:${number}`;
    const event = JSON.parse(payload) as LambdaRunEvent;
    this.events.push(event);
    const deadline = Date.now() + version.timeout * 1000;
    const context = { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
    let exited: () => void = () => undefined;
    let answered = false;
    // An exit after the answer (the runner retiring a container whose realm a run changed) ends
    // the container, as in Lambda: the next invocation gets a new one.
    const exit = new Promise<"exit">((resolve) => (exited = () => (answered ? this.replace(key) : resolve("exit"))));
    const state: ContainerState = { exited };
    let timer: NodeJS.Timeout | undefined;
    // The function's environment is there when its container starts (the runner's realm snapshot
    // is taken then), as in Lambda.
    const environment = this.environment?.(name) ?? {};
    const saved = Object.keys(environment).map((variable) => [variable, process.env[variable]] as const);
    Object.assign(process.env, environment);
    try {
      const handler = await this.container(key, version.zip);
      const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), version.timeout * 1000)));
      const ran = await Promise.race([invocations.run(state, () => handler(event, context)).then((value) => ({ value }), (error: unknown) => ({ error })), timedOut, exit]);
      if (ran === "exit" || state.exitCode !== undefined) {
        this.replace(key);
        return functionError("Runtime.ExitError", `RequestId: req Error: Runtime exited with error: exit status ${state.exitCode ?? 0}`);
      }
      if (ran === "timeout") {
        this.replace(key);
        return functionError("Sandbox.Timedout", `RequestId: req Error: Task timed out after ${version.timeout.toFixed(2)} seconds`);
      }
      if ("error" in ran) return functionError((ran.error as Error).name || "Error", (ran.error as Error).message);
      const text = JSON.stringify(ran.value) ?? "null";
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_ANSWER_BYTES) {
        return functionError("Function.ResponseSizeTooLarge", `Response payload size (${bytes} bytes) exceeded maximum allowed payload size (6291556 bytes).`);
      }
      return { StatusCode: 200, ExecutedVersion: String(number), Payload: new TextEncoder().encode(text) };
    } finally {
      answered = true;
      clearTimeout(timer);
      for (const [variable, value] of saved) {
        if (value === undefined) delete process.env[variable];
        else process.env[variable] = value;
      }
    }
  }

  private async container(key: string, zip: Uint8Array): Promise<LambdaRunHandler> {
    let handler = this.handlers.get(key);
    if (!handler) {
      const dir = path.join(this.root, `${key.replace(":", "-")}-${Date.now()}`);
      await mkdir(dir, { recursive: true });
      for (const [file, data] of Object.entries(unzipSync(zip))) await writeFile(path.join(dir, file), data);
      // Installed once, before a runner loads (and never swapped back): the runner's realm
      // snapshot sees the same process.exit before and after each run, as in a real container.
      // Outside an invocation it is the real exit.
      process.exit = guardedExit;
      const kms = this.kmsFor?.(key.split(":")[0] ?? key);
      // A run that left the realm changed retires its container, as the runner's exit after its
      // answer does in Lambda: the next invocation gets a new one. (This process is one realm for
      // every function's containers, so one function's run, e.g. loading Playwright, changes
      // what another's container sees.)
      const created: LambdaRunHandler = createLambdaHandler(dir, {
        ...(this.launchBrowser ? { launchBrowser: this.launchBrowser } : {}),
        ...(kms ? { kms } : {}),
        onLeftovers: () => {
          if (this.handlers.get(key) === created) this.replace(key);
        },
      });
      handler = created;
      this.handlers.set(key, handler);
    }
    return handler;
  }

  /** A container that timed out or exited is gone: its browser is closed, the next invocation starts a new one. */
  private replace(key: string): void {
    const handler = this.handlers.get(key);
    this.handlers.delete(key);
    void handler?.close().catch(() => undefined);
  }
}

/**
 * `process.exit` while a function's code runs: that invocation's container exits, not this
 * process. The code goes on (nothing here can stop it), but its invocation answers at once and
 * its container is replaced.
 */
function guardedExit(code?: number | string | null): never {
  const state = invocations.getStore();
  if (!state) return realExit(code as number);
  state.exitCode = Number(code ?? 0);
  state.exited();
  return undefined as never;
}

function missing(name: string): Error {
  return Object.assign(new Error(`Function not found: ${name}`), { name: "ResourceNotFoundException" });
}

/** Lambda's answer to an Invoke over the account's or the function's concurrency. */
function tooManyRequests(): Error {
  return Object.assign(new Error("Rate Exceeded."), { name: "TooManyRequestsException", Reason: "ReservedFunctionConcurrentInvocationLimitExceeded", $metadata: { httpStatusCode: 429 } });
}

function encode(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value ?? null));
}

function functionError(errorType: string, errorMessage: string) {
  return { StatusCode: 200, FunctionError: "Unhandled", Payload: encode({ errorType, errorMessage }) };
}
