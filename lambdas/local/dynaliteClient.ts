import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { DynaliteDocumentClient, SIGNATURE_DATE, STORE_SECRET_HEADER, UNCHECKED_SIGNATURE } from "./dynaliteDocumentClient";

/** How long a request may stay unanswered. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Attempts per request, the first included: a dynalite being restarted is waited for a little. */
const MAX_ATTEMPTS = 3;

/**
 * The AWS SDK's settings for a dynalite on loopback: the endpoint fixed (no endpoint rules to
 * evaluate per request) and a constant signature (dynalite wants the header but checks no
 * signature). Commands, their serialization and their errors are the SDK's own, as on AWS;
 * this saves about a quarter of the SDK's CPU per request (see docs/benchmarks.md).
 * What dynalite does check is the store's `secret` (DynaliteServer.secret), sent with every request.
 */
export function dynaliteClientConfig(endpoint: string, secret: string, requestTimeoutMs = DEFAULT_TIMEOUT_MS): DynamoDBClientConfig {
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
        request.headers[STORE_SECRET_HEADER] = secret;
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

/** The clients the local service talks to its dynalite with; `secret` is the store's (DynaliteServer.secret). */
export function createDynaliteClients(endpoint: string, secret: string, requestTimeoutMs = DEFAULT_TIMEOUT_MS): DynaliteClients {
  const client = new DynamoDBClient({ ...dynaliteClientConfig(endpoint, secret, requestTimeoutMs), maxAttempts: MAX_ATTEMPTS });
  const doc = new DynaliteDocumentClient(endpoint, secret, { requestTimeoutMs, maxAttempts: MAX_ATTEMPTS });
  return {
    client,
    doc,
    destroy: () => {
      client.destroy();
      doc.destroy();
    },
  };
}
