import { AWS_MAX_BODY_BYTES } from "../../config/serviceConfig";
import { type Deps, systemClock } from "../../deps";
import { createDocumentClient } from "../../store/dynamo";
import { createStore } from "../../store/store";
import type { AwsConfig } from "../awsConfig";
import { LambdaQueueState } from "../awsDispatch";
import { createAwsIdentity } from "../awsIdentityDeps";
import { withheldCodeAnalysis, withheldRuntime, withheldScheduler, withheldSecretBox } from "./withheldPorts";

/**
 * What every route's Lambda holds (DynamoDB only): the store, the identity (API keys, OAuth
 * tokens), the run queue's state of this container, the clock and the service's settings; the
 * other ports withheld (withheldPorts.ts). Each route group's factory (this folder) replaces
 * the ports its routes use, and builds only those ports' clients (#23.12).
 */
export function createRouteBase(config: AwsConfig, holder: string): Deps {
  const { doc } = createDocumentClient({ region: config.region });
  const store = createStore(doc, config.tablePrefix, { runRetentionDays: config.runRetentionDays, artifactRetentionDays: config.artifactRetentionDays });
  const log = (line: string) => console.error(line);
  return {
    store,
    identity: createAwsIdentity(store.accounts, config),
    // The run queue: a run past its plan's concurrency is queued; a Lambda dispatches after an
    // enqueue (awaited before it answers: lazyHandlers.ts), the recorder after each release, the
    // sweeper as recovery (docs/deploy.md).
    queue: new LambdaQueueState(),
    runtime: withheldRuntime(holder),
    scheduler: withheldScheduler(holder),
    secretBox: withheldSecretBox(holder),
    codeAnalysis: withheldCodeAnalysis(holder),
    clock: systemClock,
    config: {
      plans: config.plans,
      publicUrl: config.publicUrl,
      syncWaitSeconds: config.syncWaitSeconds,
      maxBodyBytes: AWS_MAX_BODY_BYTES,
      // Artifact downloads are 302s to presigned URLs of the run bucket (virtual-hosted style).
      artifactOrigins: [`https://${config.runtime.runBucket}.s3.${config.region}.amazonaws.com`],
      oauthIssuer: config.oauth?.issuer ?? null,
    },
    log,
  };
}
