import { ApiError } from "../http/errors";
import type { AccountStore } from "../store/accountStore";
import { API_KEY_PREFIX, hashApiKey } from "./apiKeys";

/** Who is calling: the account a key or token resolves to. */
export interface Principal {
  account_id: string;
  plan: string;
  admin: boolean;
  /** The API key used, or null for an OAuth access token. */
  key_id: string | null;
}

/** Verifies a bearer token that is not an API key (OAuth 2.0 access tokens plug in here). */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}

/** Turns an `Authorization` header into a Principal, or throws 401. */
export interface Identity {
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** Drops cached answers for a key (revoked) or an account (plan changed). */
  forget(match: { key_id?: string; account_id?: string }): void;
}

export interface IdentityOptions {
  tokens?: TokenVerifier;
  /**
   * How long a verified API key is remembered (0: never). Revocations and plan changes made
   * through this process's API take effect at once; others within this time.
   */
  cacheMs?: number;
  now?: () => number;
}

export function createIdentity(accounts: AccountStore, options: IdentityOptions = {}): Identity {
  const cacheMs = options.cacheMs ?? 0;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { principal: Principal; until: number }>();
  return {
    async authenticate(authorization) {
      const token = bearerToken(authorization);
      if (!token.startsWith(API_KEY_PREFIX)) {
        if (options.tokens) return options.tokens.verify(token);
        throw new ApiError("invalid_token", "The bearer token is not a valid API key");
      }
      const hash = hashApiKey(token);
      const cached = cache.get(hash);
      if (cached && cached.until > now()) return cached.principal;
      const principal = await verifyApiKey(accounts, hash);
      if (cacheMs > 0) {
        if (cache.size >= 10_000) cache.clear();
        cache.set(hash, { principal, until: now() + cacheMs });
      }
      return principal;
    },
    forget({ key_id, account_id }) {
      for (const [hash, { principal }] of cache) {
        if (principal.key_id === key_id || principal.account_id === account_id) cache.delete(hash);
      }
    },
  };
}

function bearerToken(authorization: string | undefined): string {
  if (!authorization || authorization.trim() === "") {
    throw new ApiError("missing_token", "Missing Authorization header; send 'Authorization: Bearer <token>'");
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw new ApiError("invalid_token", "The Authorization header must be 'Bearer <token>'");
  return match[1];
}

async function verifyApiKey(accounts: AccountStore, hash: string): Promise<Principal> {
  const key = await accounts.getApiKeyByHash(hash);
  const account = key && (await accounts.getAccount(key.account_id));
  if (!key || !account) throw new ApiError("invalid_token", "The API key is not valid (unknown or deleted)");
  return { account_id: account.account_id, plan: account.plan, admin: key.admin, key_id: key.key_id };
}
