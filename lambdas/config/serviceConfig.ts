import type { Plans } from "./plans";

/** Settings the handlers need, the same locally and on AWS; parsed once at the edge. */
export interface ServiceConfig {
  plans: Plans;
  /** Base URL of the API when known up front (local mode); otherwise taken from the request. */
  publicUrl: string | null;
  /** How long an invocation waits for its run before answering 202. */
  syncWaitSeconds: number;
  /** Largest request body accepted: MAX_BODY_BYTES locally, AWS_MAX_BODY_BYTES on AWS. */
  maxBodyBytes: number;
  /** Origins artifact downloads redirect to (AWS: the run bucket's), which the dashboard may fetch. */
  artifactOrigins?: string[];
  /** Webhooks may target loopback and private addresses (local: BROWSERFN_ALLOW_LOCAL_NETWORK); default false. */
  allowLocalNetwork?: boolean;
  /** The OAuth authorization server whose access tokens the API accepts (its issuer URL); absent or null: API keys only. */
  oauthIssuer?: string | null;
}

/** The request body limit locally (the local server refuses more from Content-Length, before reading it). */
export const MAX_BODY_BYTES = 6 * 1024 * 1024;

/**
 * The request body limit on AWS: 2.5 MiB. A body reaches its route Lambda inside the event, JSON
 * with the body escaped in it (a quote or backslash doubles) or base64 (4/3), and Lambda takes
 * at most 6 MiB of event: a 6 MiB check could never fire there (a bigger body never reached the
 * handler). Every body up to 2.5 MiB reaches the handler whatever its characters (2 × 2.5 MiB
 * and API Gateway's headers stay under 6 MiB), so this check is the limit a client meets, a 413
 * in the API's shape (test/unit/awsBodyLimit.test.ts).
 */
export const AWS_MAX_BODY_BYTES = 2.5 * 1024 * 1024;
