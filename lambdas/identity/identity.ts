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
}

export function createIdentity(accounts: AccountStore, tokens?: TokenVerifier): Identity {
  return {
    async authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token.startsWith(API_KEY_PREFIX)) return verifyApiKey(accounts, token);
      if (tokens) return tokens.verify(token);
      throw new ApiError("invalid_token", "The bearer token is not a valid API key");
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

async function verifyApiKey(accounts: AccountStore, token: string): Promise<Principal> {
  const key = await accounts.getApiKeyByHash(hashApiKey(token));
  const account = key && (await accounts.getAccount(key.account_id));
  if (!key || !account) throw new ApiError("invalid_token", "The API key is not valid (unknown or deleted)");
  return { account_id: account.account_id, plan: account.plan, admin: key.admin, key_id: key.key_id };
}
