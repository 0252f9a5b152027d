import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { DynaliteDocumentClient, SIGNATURE_DATE, UNCHECKED_SIGNATURE } from "./dynaliteDocumentClient";

/** How long a request may stay unanswered. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Attempts per request, the first included: a dynalite being restarted is waited for a little. */
const MAX_ATTEMPTS = 3;

/**
 * The AWS SDK's settings for a dynalite on loopback: the endpoint fixed (no endpoint rules to
 * evaluate per request) and a constant signature (dynalite wants the header but checks no
 * signature). Commands, their serialization and their errors are the SDK's own, as on AWS;
 * this saves about a quarter of the SDK's CPU per request (see docs/benchmarks.md).
 */
export function dynaliteClientConfig(endpoint: string, requestTimeoutMs = DEFAULT_TIMEOUT_MS): DynamoDBClientConfig {
  const url = new URL(endpoint);
  return {
    endpoint,
    // A dynalite that hangs (stopped, not dead) fails requests instead of holding them forever.
    requestHandler: { requestTimeout: requestTimeoutMs, throwOnRequestTimeout: true },
    endpointProvider: () => ({ url }),
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    signer: {
      sign: async (request) => {
        request.headers.authorization = UNCHECKED_SIGNATURE;
        request.headers["x-amz-date"] = SIGNATURE_DATE;
        return request;
      },
    },
  };
}

export interface DynaliteClients {
  /** The SDK's client, for creating and describing tables (start-up only). */
  client: DynamoDBClient;
  /** What the stores use: the lean document client (see DynaliteDocumentClient). */
  doc: DynaliteDocumentClient;
  destroy(): void;
}

/** The clients the local service talks to its dynalite with. */
export function createDynaliteClients(endpoint: string, requestTimeoutMs = DEFAULT_TIMEOUT_MS): DynaliteClients {
  const client = new DynamoDBClient({ ...dynaliteClientConfig(endpoint, requestTimeoutMs), maxAttempts: MAX_ATTEMPTS });
  const doc = new DynaliteDocumentClient(endpoint, { requestTimeoutMs, maxAttempts: MAX_ATTEMPTS });
  return {
    client,
    doc,
    destroy: () => {
      client.destroy();
      doc.destroy();
    },
  };
}
