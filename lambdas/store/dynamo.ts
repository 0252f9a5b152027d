import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import {
  type DeleteCommand,
  DynamoDBDocumentClient,
  type PutCommand,
  QueryCommand,
  ScanCommand,
  type UpdateCommand,
} from "@aws-sdk/lib-dynamodb";

/**
 * What the stores need of a document client: send() of lib-dynamodb commands. On AWS it is
 * the SDK's DynamoDBDocumentClient; the local service uses DynaliteDocumentClient.
 */
export type DocumentSender = Pick<DynamoDBDocumentClient, "send">;

/** The SDK's document client; built once at the edge. */
export function createDocumentClient(config: DynamoDBClientConfig = {}): {
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
} {
  const client = new DynamoDBClient(config);
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { client, doc };
}

/** True when a conditional write failed because its condition did not hold. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

const UNREACHABLE = /\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ECONNABORTED)\b|socket hang up/i;
/** DynamoDB's names for a request refused because of its rate. */
export const THROTTLING_ERROR_NAMES: ReadonlySet<string> = new Set(["ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"]);
const UNAVAILABLE_NAMES = new Set(["TimeoutError", "ServiceUnavailable", "ServiceUnavailableException", ...THROTTLING_ERROR_NAMES]);

/**
 * True when a store call failed because the store could not be reached (refused or dropped
 * connections, timeouts, a throttled or unavailable service) rather than because of the
 * request: the caller may try again later. The SDK has retried it already (`maxAttempts`).
 * Judged by the error's code, name and message, not its class: the SDK wraps errors that
 * come from another realm (a test VM) in a plain Error that keeps only the message.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof name === "string" && UNAVAILABLE_NAMES.has(name)) return true;
  return [code, message].some((text) => typeof text === "string" && UNREACHABLE.test(text));
}

/**
 * Sends a conditional write; true when it was written, false when its condition did not
 * hold (any other failure is thrown).
 */
export async function sendConditional(doc: DocumentSender, command: ConditionalCommand): Promise<boolean> {
  try {
    // send()'s overloads take one command class at a time; all three go the same way.
    await doc.send(command as PutCommand);
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}

type ConditionalCommand = PutCommand | UpdateCommand | DeleteCommand;
type QueryInput = ConstructorParameters<typeof QueryCommand>[0];
type ScanInput = ConstructorParameters<typeof ScanCommand>[0];

/** Every item of a query, following LastEvaluatedKey page by page. */
export async function queryAll(doc: DocumentSender, input: QueryInput): Promise<Record<string, unknown>[]> {
  return paged((ExclusiveStartKey) => doc.send(new QueryCommand({ ...input, ExclusiveStartKey })));
}

/**
 * The first `limit` items of a query (all of them when it has fewer), following LastEvaluatedKey:
 * a page stops at 1 MB of items read, however few that is.
 */
export async function queryUpTo(doc: DocumentSender, input: QueryInput, limit: number): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  while (items.length < limit) {
    const result = await doc.send(new QueryCommand({ ...input, Limit: limit - items.length, ExclusiveStartKey: startKey }));
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
    if (!startKey) break;
  }
  return items;
}

/** Every item of a scan, following LastEvaluatedKey page by page. */
export async function scanAll(doc: DocumentSender, input: ScanInput): Promise<Record<string, unknown>[]> {
  return paged((ExclusiveStartKey) => doc.send(new ScanCommand({ ...input, ExclusiveStartKey })));
}

async function paged(
  page: (startKey: Record<string, unknown> | undefined) => Promise<{ Items?: Record<string, unknown>[]; LastEvaluatedKey?: Record<string, unknown> }>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const result = await page(startKey);
    items.push(...(result.Items ?? []));
    startKey = result.LastEvaluatedKey;
  } while (startKey);
  return items;
}
