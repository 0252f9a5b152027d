import { Agent, request } from "node:http";
import { type marshallOptions, marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { type DocumentSender, isStoreUnavailable, THROTTLING_ERROR_NAMES } from "../store/dynamo";

/** What dynalite checks of a request's signature: that there is one, with a date (never whether it is right). */
export const UNCHECKED_SIGNATURE = "AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0";
export const SIGNATURE_DATE = "20260101T000000Z";
/** The header that carries the store's secret (DynaliteServer.secret); dynalite refuses requests without it. */
export const STORE_SECRET_HEADER = "x-browserfn-store-secret";

/** The parts of a lib-dynamodb command (PutCommand, QueryCommand, …) this client reads. */
interface DocumentCommand {
  input: Record<string, unknown>;
  /** Which members of the input hold plain values to marshall (lib-dynamodb's own map). */
  inputKeyNodes: KeyNodes;
  /** Which members of the output hold attribute values to unmarshall. */
  outputKeyNodes: KeyNodes;
  /** The DynamoDB command underneath (PutItemCommand, …): its class names the operation. */
  clientCommand: object;
}

/** lib-dynamodb's key-node maps: null marshalls the value itself, {} or [] each member, "*" each entry one level down. */
type KeyNodes = null | { [key: string]: KeyNodes } | KeyNodes[];

export interface DynaliteDocumentClientOptions {
  /** How long a request may stay unanswered before it fails with TimeoutError (it is then tried again). */
  requestTimeoutMs: number;
  /** Attempts per command, the first included, as the SDK's `maxAttempts`. */
  maxAttempts: number;
}

/** The document client's marshalling options (createDocumentClient), with lib-dynamodb's own defaults. */
const MARSHALL: marshallOptions = { removeUndefinedValues: true, convertEmptyValues: false, convertTopLevelContainer: true };
const UNMARSHALL = { convertWithoutMapWrapper: true };
const RETRY_BASE_MS = 100;
const THROTTLING_RETRY_BASE_MS = 500;

/**
 * A document client for dynalite on loopback that takes the same lib-dynamodb commands as
 * DynamoDBDocumentClient and answers the same outputs and errors, without the SDK's request
 * pipeline. Values are marshalled by util-dynamodb with the document client's options and
 * lib-dynamodb's own map of which members to marshall (each command carries it); the request
 * is DynamoDB's JSON protocol over a keep-alive connection; errors carry DynamoDB's error name
 * (ConditionalCheckFailedException, …), and connection failures their Node code.
 * Like the SDK it tries a request again (up to `maxAttempts`) when the connection failed, it
 * timed out, dynalite answered 5xx or throttled, with jittered exponential backoff.
 * Every request carries the store's secret (STORE_SECRET_HEADER), without which dynalite answers 403.
 *
 * It exists for speed: the SDK spends about 0.6 ms of CPU per request in its middleware, on
 * every store call of an invocation (docs/benchmarks.md). The stores' code is the same on
 * both; test/integration/dynaliteDocumentClient.test.ts sends every store operation through
 * both clients and requires equal answers. On AWS the SDK's client is used, always.
 */
export class DynaliteDocumentClient {
  private readonly url: URL;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 50 });

  constructor(
    endpoint: string,
    private readonly secret: string,
    private readonly options: DynaliteDocumentClientOptions,
  ) {
    this.url = new URL(endpoint);
  }

  /** As DynamoDBDocumentClient.send (promise form only). */
  readonly send = ((command: DocumentCommand) => this.sendCommand(command)) as unknown as DocumentSender["send"];

  destroy(): void {
    this.agent.destroy();
  }

  private async sendCommand(command: DocumentCommand): Promise<Record<string, unknown>> {
    const operation = command.clientCommand.constructor.name.replace(/Command$/, "");
    const body = JSON.stringify(convert(command.input, (value) => marshall(value, MARSHALL), command.inputKeyNodes), toBase64);
    let totalRetryDelay = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        const output = await this.post(operation, body);
        const converted = convert(output, (value) => unmarshall(value as never, UNMARSHALL), command.outputKeyNodes) as Record<string, unknown>;
        return { ...converted, $metadata: { httpStatusCode: 200, attempts: attempt, totalRetryDelay } };
      } catch (error) {
        if (attempt >= this.options.maxAttempts || !retryable(error)) throw error;
        const base = THROTTLING_ERROR_NAMES.has((error as Error).name) ? THROTTLING_RETRY_BASE_MS : RETRY_BASE_MS;
        const delay = Math.floor(Math.random() * base * 2 ** (attempt - 1));
        totalRetryDelay += delay;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** One request; resolves with the parsed answer, rejects with DynamoDB's error or the connection's. */
  private post(operation: string, body: string): Promise<Record<string, unknown>> {
    return dynaliteRequest({ url: this.url, secret: this.secret, agent: this.agent, timeoutMs: this.options.requestTimeoutMs }, operation, body);
  }
}

/** Where a dynalite request goes: its endpoint, the store's secret, the client's keep-alive agent (none: Node's global one), how long it may stay unanswered. */
export interface DynaliteTarget {
  url: URL;
  secret: string;
  agent?: Agent;
  timeoutMs: number;
}

/**
 * One DynamoDB JSON request to dynalite, with the store's secret: resolves with the parsed
 * answer (binary values as bytes), rejects with DynamoDB's error (named as the SDK names it),
 * the connection's, or a TimeoutError after `timeoutMs` unanswered. The document client's
 * requests and the start-up's table check (tablesReady.ts) both go through here.
 */
export function dynaliteRequest(target: DynaliteTarget, operation: string, body: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...(target.agent ? { agent: target.agent } : {}),
        host: target.url.hostname,
        port: target.url.port,
        path: "/",
        method: "POST",
        headers: {
          "content-type": "application/x-amz-json-1.0",
          "content-length": Buffer.byteLength(body),
          "x-amz-target": `DynamoDB_20120810.${operation}`,
          authorization: UNCHECKED_SIGNATURE,
          "x-amz-date": SIGNATURE_DATE,
          [STORE_SECRET_HEADER]: target.secret,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          try {
            if (res.statusCode === 200) resolve(JSON.parse(text, fromBase64) as Record<string, unknown>);
            else reject(dynamoError(res.statusCode ?? 0, text, res.headers["x-amzn-requestid"]));
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.setTimeout(target.timeoutMs, () => {
      const error = new Error(`dynalite did not answer ${operation} within ${target.timeoutMs} ms`);
      req.destroy(Object.assign(error, { name: "TimeoutError", code: "ETIMEDOUT" }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * lib-dynamodb's traversal (processKeysInObj): `fn` applied where the key nodes say, every
 * other member copied as it is.
 */
function convert(value: unknown, fn: (value: unknown) => unknown, nodes: KeyNodes): unknown {
  if (value === undefined) return undefined;
  if (nodes === null) return fn(value);
  const keys = Object.keys(nodes);
  if (keys.length === 0) return mapMembers(value, fn);
  if (keys.length === 1 && keys[0] === "*") {
    const next = (nodes as Record<string, KeyNodes>)["*"] ?? null;
    return mapMembers(value, (member) => convert(member, fn, next));
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of keys) {
    const converted = convert(copy[key], fn, (nodes as Record<string, KeyNodes>)[key] ?? null);
    if (converted !== undefined) copy[key] = converted;
  }
  return copy;
}

/** `fn` of each member of an array or object; members `fn` turns into undefined are left out (an object's). */
function mapMembers(value: unknown, fn: (value: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map(fn);
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const converted = member === undefined ? undefined : fn(member);
    if (converted !== undefined) out[key] = converted;
  }
  return out;
}

/** JSON replacer: binary attribute values (B, BS) go as base64, as DynamoDB's JSON protocol wants. */
function toBase64(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Uint8Array ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("base64") : value;
}

/** JSON reviver: base64 binary attribute values back to bytes (Uint8Array, as the SDK gives them). */
function fromBase64(key: string, value: unknown): unknown {
  if (key === "B" && typeof value === "string") return bytes(value);
  if (key === "BS" && Array.isArray(value) && value.every((member) => typeof member === "string")) return value.map(bytes);
  return value;
}

function bytes(base64: string): Uint8Array {
  const buffer = Buffer.from(base64, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** DynamoDB's error answer as the SDK throws it: named by its `__type`, with its message. */
function dynamoError(status: number, text: string, requestId: string | string[] | undefined): Error {
  let parsed: { __type?: string; message?: string; Message?: string } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    // not JSON: named by its status below
  }
  const name = parsed.__type?.split("#").pop() || (status >= 500 ? "InternalServerError" : "UnknownError");
  const error = new Error(parsed.message ?? parsed.Message ?? (text.slice(0, 200) || `HTTP ${status}`));
  return Object.assign(error, {
    name,
    $fault: status >= 500 ? "server" : "client",
    $metadata: { httpStatusCode: status, requestId: typeof requestId === "string" ? requestId : undefined },
  });
}

/** As the SDK's standard retry strategy: what leaves the store unreachable for now (connection failures, timeouts, throttling), and 5xx. */
function retryable(error: unknown): boolean {
  return isStoreUnavailable(error) || (error as { $fault?: string }).$fault === "server";
}
