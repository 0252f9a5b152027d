import type { Plans } from "./plans";

/** Settings the handlers need, the same locally and on AWS; parsed once at the edge. */
export interface ServiceConfig {
  plans: Plans;
  /** Base URL of the API when known up front (local mode); otherwise taken from the request. */
  publicUrl: string | null;
  /** How long an invocation waits for its run before answering 202. */
  syncWaitSeconds: number;
  /** Largest request body accepted (the Lambda payload limit). */
  maxBodyBytes: number;
  /** Origins artifact downloads redirect to (AWS: the run bucket's), which the dashboard may fetch. */
  artifactOrigins?: string[];
  /** Webhooks may target loopback and private addresses (local: BROWSERFN_ALLOW_LOCAL_NETWORK); default false. */
  allowLocalNetwork?: boolean;
  /** The OAuth authorization server whose access tokens the API accepts (its issuer URL); absent or null: API keys only. */
  oauthIssuer?: string | null;
}

export const MAX_BODY_BYTES = 6 * 1024 * 1024;
