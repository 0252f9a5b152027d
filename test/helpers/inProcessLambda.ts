import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { unzipSync } from "fflate";
import type { Browser } from "puppeteer-core";
import { createLambdaHandler, type LambdaRunEvent, type LambdaRunHandler } from "../../lambdas/runner/lambdaHandler";
import type { DestinationEvent } from "../../lambdas/runtime/aws/completionEvent";
import type { LambdaCommand } from "../../lambdas/runtime/aws/lambdaClient";

type Destination = (event: DestinationEvent) => Promise<void>;
interface EventInvokeConfig {
  MaximumRetryAttempts?: number;
  DestinationConfig?: { OnSuccess?: { Destination?: string }; OnFailure?: { Destination?: string } };
}

/**
 * The Lambda control plane, faked: it keeps each function's zips, published versions, aliases
 * and async-invocation configs. An Event Invoke really runs the published zip (unpacked into a
 * directory, served by createLambdaHandler in this process, as the Lambda Node runtime would)
 * in the background, and hands the destination event to the function ARN the alias's config
 * names, as Lambda does: `destinations` maps those ARNs to handlers (the real recorder).
 */
export class InProcessLambda {
  readonly sent: LambdaCommand[] = [];
  private readonly functions = new Map<string, { latest: Uint8Array; config: unknown; published: Uint8Array[]; aliases: Map<string, number> }>();
  private readonly configs = new Map<string, EventInvokeConfig>();
  private readonly handlers = new Map<string, LambdaRunHandler>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly root: string,
    private readonly destinations: Record<string, Destination>,
    private readonly launchBrowser?: () => Promise<Browser>,
  ) {}

  async send(command: LambdaCommand): Promise<unknown> {
    this.sent.push(command);
    const input = command.input as Record<string, unknown> & { FunctionName: string };
    const fn = this.functions.get(input.FunctionName);
    const missing = () => Object.assign(new Error(`Function not found: ${input.FunctionName}`), { name: "ResourceNotFoundException" });
    switch (command.constructor.name) {
      case "CreateFunctionCommand":
        this.functions.set(input.FunctionName, { latest: (input.Code as { ZipFile: Uint8Array }).ZipFile, config: input, published: [], aliases: new Map() });
        return {};
      case "UpdateFunctionCodeCommand":
        if (!fn) throw missing();
        fn.latest = input.ZipFile as Uint8Array;
        return {};
      case "GetFunctionConfigurationCommand":
        if (!fn) throw missing();
        return { ...(fn.config as object), Layers: [], State: "Active", LastUpdateStatus: "Successful" };
      case "PublishVersionCommand":
        if (!fn) throw missing();
        return { Version: String(fn.published.push(fn.latest)) };
      case "CreateAliasCommand":
      case "UpdateAliasCommand":
        fn?.aliases.set(input.Name as string, Number(input.FunctionVersion));
        return {};
      case "PutFunctionEventInvokeConfigCommand":
        if (!fn?.aliases.has(input.Qualifier as string)) throw missing();
        this.configs.set(`${input.FunctionName}:${input.Qualifier as string}`, input as EventInvokeConfig);
        return {};
      case "InvokeCommand":
        if (input.InvocationType !== "Event") throw new Error("the fake only takes Event invocations");
        return this.invokeAsync(input.FunctionName, input.Qualifier as string, input.Payload as string);
      default:
        throw new Error(`the fake does not know ${command.constructor.name}`);
    }
  }

  /** Waits for every run started so far and the delivery of its destination event. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  async close(): Promise<void> {
    await this.settled();
    await Promise.all([...this.handlers.values()].map((handler) => handler.close()));
  }

  private async invokeAsync(name: string, alias: string, payload: string): Promise<unknown> {
    const version = this.functions.get(name)?.aliases.get(alias);
    const zip = version === undefined ? undefined : this.functions.get(name)?.published[version - 1];
    if (!zip) throw Object.assign(new Error(`Function not found: ${name}:${alias}`), { name: "ResourceNotFoundException" });
    const config = this.configs.get(`${name}:${alias}`);
    const run = this.run(`${name}:${version}`, zip, payload).then(async ({ ok, response }) => {
      const destination = ok ? config?.DestinationConfig?.OnSuccess?.Destination : config?.DestinationConfig?.OnFailure?.Destination;
      const deliver = destination === undefined ? undefined : this.destinations[destination];
      if (!deliver) return; // no destination: Lambda drops the result
      await deliver({
        version: "1.0",
        timestamp: new Date().toISOString(),
        requestContext: { requestId: "req", functionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${name}:${alias}`, condition: ok ? "Success" : "RetriesExhausted", approximateInvokeCount: 1 },
        requestPayload: JSON.parse(payload) as unknown,
        responseContext: { statusCode: 200, executedVersion: String(version), ...(ok ? {} : { functionError: "Unhandled" }) },
        responsePayload: response,
      });
    });
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => undefined); // settled() reports it
    return { StatusCode: 202 };
  }

  private async run(key: string, zip: Uint8Array, payload: string): Promise<{ ok: boolean; response: unknown }> {
    let handler = this.handlers.get(key);
    if (!handler) {
      const dir = path.join(this.root, key.replace(":", "-"));
      await mkdir(dir, { recursive: true });
      for (const [file, data] of Object.entries(unzipSync(zip))) await writeFile(path.join(dir, file), data);
      handler = createLambdaHandler(dir, this.launchBrowser ? { launchBrowser: this.launchBrowser } : {});
      this.handlers.set(key, handler);
    }
    try {
      return { ok: true, response: await handler(JSON.parse(payload) as LambdaRunEvent) };
    } catch (error) {
      const { name: errorType, message: errorMessage } = error as Error;
      return { ok: false, response: { errorType, errorMessage } };
    }
  }
}
