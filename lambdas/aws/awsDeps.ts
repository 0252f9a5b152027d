import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { MAX_BODY_BYTES } from "../config/serviceConfig";
import { type Deps, systemClock } from "../deps";
import { createIdentity, type Identity } from "../identity/identity";
import { createJwtVerifier } from "../identity/jwtVerifier";
import { createAwsRuntime } from "../runtime/aws/awsRuntime";
import { createLambdaClients } from "../runtime/aws/lambdaClient";
import { createAwsScheduler } from "../schedule/awsScheduler";
import type { AccountStore } from "../store/accountStore";
import { createDocumentClient } from "../store/dynamo";
import { createStore } from "../store/store";
import type { RunCompletionDeps } from "../runtime/aws/recordCompletion";
import type { AwsConfig, IdentityEnvConfig, StoreEnvConfig } from "./awsConfig";

/**
 * Verified API keys are remembered this long by a warm authorizer container. API Gateway also
 * caches the authorizer's verdict per Authorization header (30 s, lib/httpApi.ts), so a key
 * revoked through the API stops working everywhere within about the sum (see docs/deploy.md).
 */
export const AWS_IDENTITY_CACHE_MS = 30_000;

/** API keys and, when an OAuth issuer is configured, its access tokens. */
export function createAwsIdentity(accounts: AccountStore, config: IdentityEnvConfig): Identity {
  const tokens = config.oauth
    ? createJwtVerifier({
        issuer: config.oauth.issuer,
        jwksUrl: config.oauth.jwksUrl,
        clientIds: config.oauth.clientIds,
        accounts,
        defaultPlan: config.defaultPlan,
      })
    : undefined;
  return createIdentity(accounts, { tokens, cacheMs: AWS_IDENTITY_CACHE_MS });
}

/** The store on DynamoDB and the identity: all the authorizer uses. */
export function createAwsIdentityDeps(config: IdentityEnvConfig): { identity: Identity; log: (line: string) => void } {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays });
  return { identity: createAwsIdentity(store.accounts, config), log: (line) => console.error(line) };
}

/** The run-completion Lambda's deps: the store on DynamoDB. */
export function createAwsCompletionDeps(config: StoreEnvConfig): RunCompletionDeps {
  const { doc } = createDocumentClient({ region: config.region });
  return { store: createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays }), clock: systemClock, log: (line) => console.error(line) };
}

/** Every port on its AWS adapter: DynamoDB, Lambda, EventBridge Scheduler, API keys + JWTs. */
export function createAwsDeps(config: AwsConfig): Deps {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays });
  return {
    store,
    identity: createAwsIdentity(store.accounts, config),
    runtime: createAwsRuntime({
      // The control plane with the SDK's standard retries; Invoke with one attempt (a retried Invoke could run an automation twice).
      lambda: createLambdaClients(config.region),
      runs: store.runs,
      completionArn: config.runtime.completionArn,
      functionPrefix: config.runtime.functionPrefix,
      executionRoleArn: config.runtime.executionRoleArn,
      layerArns: config.runtime.layerArns,
      logGroup: config.runtime.logGroup,
    }),
    scheduler: createAwsScheduler({
      client: new SchedulerClient({ region: config.region }),
      ...config.schedules,
    }),
    clock: systemClock,
    config: {
      plans: config.plans,
      publicUrl: config.publicUrl,
      syncWaitSeconds: config.syncWaitSeconds,
      maxBodyBytes: MAX_BODY_BYTES,
    },
    log: (line) => console.error(line),
  };
}
