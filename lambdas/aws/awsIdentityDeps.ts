import { createIdentity, type Identity } from "../identity/identity";
import { createJwtVerifier } from "../identity/jwtVerifier";
import type { AccountStore } from "../store/accountStore";
import { createDocumentClient } from "../store/dynamo";
import { createStore } from "../store/store";
import type { IdentityEnvConfig } from "./awsConfig";

// The authorizer's deps, apart from the other Lambdas' (routeDeps/, awsDeps.ts): its bundle holds the
// DynamoDB client only, not the SDK clients the routes and the recorder use (#23.12).

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
