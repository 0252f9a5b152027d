import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { ApiError } from "../http/errors";
import { ACCOUNT_PATTERN } from "../schemas/keySchemas";
import type { AccountStore } from "../store/accountStore";
import type { Principal, TokenVerifier } from "./identity";

/** Asymmetric JWS algorithms an access token may use; `none` and the HMAC (HS*) ones never. */
export const JWT_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"] as const;
export const DEFAULT_JWT_ALGORITHMS = ["RS256", "ES256"];

/** Keys older than this are fetched again before use (so a removed key stops working within it). */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** An unknown `kid` refetches the key set at most this often. */
export const JWKS_REFETCH_MS = 30_000;
/** After a failed fetch, requests that need the keys fail at once for this long. */
const JWKS_RETRY_MS = 5_000;
const JWKS_TIMEOUT_MS = 5_000;

export interface JwtVerifierOptions {
  /** The `iss` every token must carry, exactly. */
  issuer: string;
  jwksUrl: string;
  /** Accepted `aud` values. */
  audience?: string[];
  /** Accepted `client_id` values (Cognito access tokens carry no `aud`). */
  clientIds?: string[];
  /** Default RS256 and ES256; any of JWT_ALGORITHMS. */
  algorithms?: string[];
  accounts: AccountStore;
  /** The plan of an account created by its first token. */
  defaultPlan: string;
  fetch?: typeof fetch;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /** Leeway for `exp` and `nbf` (default 5). */
  clockToleranceSeconds?: number;
}

/**
 * Verifies OAuth 2.0 access tokens (JWTs) against the issuer's JWKS: signature, algorithm,
 * `iss`, `aud` or `client_id`, `exp`, `nbf`. The account is the token's `sub`, or its
 * `client_id` when it has no `sub`; it is created on first use with `defaultPlan`.
 */
export function createJwtVerifier(options: JwtVerifierOptions): TokenVerifier {
  const audience = options.audience ?? [];
  const clientIds = options.clientIds ?? [];
  if (audience.length === 0 && clientIds.length === 0) {
    throw new Error("createJwtVerifier: configure an audience or client ids (at least one of them)");
  }
  const algorithms = options.algorithms ?? DEFAULT_JWT_ALGORITHMS;
  const unsupported = algorithms.filter((alg) => !(JWT_ALGORITHMS as readonly string[]).includes(alg));
  if (algorithms.length === 0 || unsupported.length > 0) {
    throw new Error(`createJwtVerifier: algorithms must be some of ${JWT_ALGORITHMS.join(", ")} (got ${algorithms.length === 0 ? "an empty list" : unsupported.join(", ")})`);
  }
  const now = options.now ?? Date.now;
  const getKey = createJwksCache(options.jwksUrl, options.fetch ?? fetch, now);
  const check = {
    issuer: options.issuer,
    algorithms,
    requiredClaims: ["exp"],
    clockTolerance: options.clockToleranceSeconds ?? 5,
  };

  return {
    async verify(token) {
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(token, getKey, { ...check, currentDate: new Date(now()) }));
      } catch (error) {
        throw toApiError(error, algorithms);
      }
      if (claims.token_use !== undefined && claims.token_use !== "access") {
        throw new ApiError("invalid_token", "The token is not an access token (its token_use is not 'access')");
      }
      const audienceProblem = checkAudience(claims, audience, clientIds);
      if (audienceProblem) throw new ApiError("invalid_token", `The access token is not meant for this API: ${audienceProblem}`);
      const accountId = accountOf(claims);
      const account =
        (await options.accounts.getAccount(accountId)) ??
        (await options.accounts.ensureAccount({ account_id: accountId, plan: options.defaultPlan, created_at: new Date(now()).toISOString() }));
      return { account_id: account.account_id, plan: account.plan, admin: false, key_id: null } satisfies Principal;
    },
  };
}

/** Accepted when `aud` names an accepted audience or `client_id` an accepted client; else why not. */
function checkAudience(claims: JWTPayload, audience: string[], clientIds: string[]): string | null {
  const auds = typeof claims.aud === "string" ? [claims.aud] : (claims.aud ?? []);
  const clientId = typeof claims.client_id === "string" ? claims.client_id : undefined;
  if (auds.some((aud) => audience.includes(aud))) return null;
  if (clientId !== undefined && clientIds.includes(clientId)) return null;
  const rejected = [
    ...(auds.length > 0 && audience.length > 0 ? ["audience"] : []),
    ...(clientId !== undefined && clientIds.length > 0 ? ["client id"] : []),
  ];
  if (rejected.length === 0) return "it names no accepted audience (aud) or client id (client_id)";
  return `its ${rejected.join(" and ")} ${rejected.length > 1 ? "are" : "is"} not accepted`;
}

/**
 * The account a token names: its `sub`, or for a client-credentials token without one its
 * `client_id`. (Cognito's client-credentials tokens have `sub` equal to `client_id`.)
 */
function accountOf(claims: JWTPayload): string {
  const accountId = typeof claims.sub === "string" ? claims.sub : claims.client_id;
  if (typeof accountId !== "string" || accountId === "") {
    throw new ApiError("invalid_token", "The access token names no subject (sub) or client id (client_id)");
  }
  if (!ACCOUNT_PATTERN.test(accountId)) {
    throw new ApiError(
      "invalid_token",
      "The access token's subject cannot name an account: it must be 1-128 characters of A-Z a-z 0-9 _ . @ : - starting with a letter or digit",
    );
  }
  return accountId;
}

/** jose's failures as invalid_token with a reason a caller can act on; never the token itself. */
function toApiError(error: unknown, algorithms: string[]): Error {
  if (error instanceof ApiError || !(error instanceof errors.JOSEError)) return error as Error;
  const reason = (message: string) => new ApiError("invalid_token", message);
  if (error instanceof errors.JWTExpired) return reason("The access token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") return reason(`The access token lacks the '${error.claim}' claim`);
    if (error.claim === "iss") return reason("The access token has the wrong issuer");
    if (error.claim === "nbf" && error.reason === "check_failed") return reason("The access token is not valid yet (nbf is in the future)");
    return reason(`The access token's '${error.claim}' claim is not valid`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return reason("The access token has a bad signature");
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return reason(`The access token's signing algorithm is not supported (accepted: ${algorithms.join(", ")})`);
  }
  if (error instanceof errors.JWKSNoMatchingKey) return reason("The access token is signed with an unknown key (kid)");
  if (error instanceof errors.JWKSMultipleMatchingKeys) return reason("The access token names no key (kid) and several keys match");
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
    return reason("The bearer token is neither an API key nor a well-formed JWT access token");
  }
  return reason("The access token could not be verified");
}

/**
 * The issuer's keys, fetched when first needed, again when older than JWKS_MAX_AGE_MS, and on an
 * unknown `kid` at most once per JWKS_REFETCH_MS (so unknown kids cannot hammer the issuer).
 * Concurrent requests share one fetch. Key selection (kid, alg, use, key_ops) is jose's.
 */
function createJwksCache(url: string, fetchImpl: typeof fetch, now: () => number): JWTVerifyGetKey {
  type KeySet = { select: ReturnType<typeof createLocalJWKSet>; fetchedAt: number };
  let keys: KeySet | undefined;
  let attemptedAt = -Infinity;
  let pending: Promise<KeySet> | undefined;

  const refresh = (): Promise<KeySet> => {
    if (!pending) {
      const startedAt = (attemptedAt = now());
      const current = downloadJwks(url, fetchImpl)
        .then((jwks) => (keys = { select: createLocalJWKSet(jwks as JSONWebKeySet), fetchedAt: startedAt }))
        .catch((error: unknown) => {
          const why = error instanceof errors.JOSEError ? "not a valid key set" : (error as Error).message;
          throw unavailable(`The authorization server's keys (JWKS) could not be fetched (${why}); try again shortly`);
        })
        .finally(() => {
          if (pending === current) pending = undefined;
        });
      pending = current;
    }
    return pending;
  };

  const current = async (): Promise<KeySet> => {
    if (keys && now() - keys.fetchedAt < JWKS_MAX_AGE_MS) return keys;
    if (!pending && now() - attemptedAt < JWKS_RETRY_MS) {
      throw unavailable("The authorization server's keys (JWKS) could not be fetched; try again shortly");
    }
    return refresh();
  };

  return async (header, token) => {
    const { select } = await current();
    try {
      return await select(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || now() - attemptedAt < JWKS_REFETCH_MS) throw error;
      return (await refresh()).select(header, token);
    }
  };
}

function unavailable(message: string): ApiError {
  return new ApiError("service_unavailable", message, {}, { "retry-after": String(JWKS_RETRY_MS / 1000) });
}

async function downloadJwks(url: string, fetchImpl: typeof fetch): Promise<unknown> {
  const response = await fetchImpl(url, {
    headers: { accept: "application/json, application/jwk-set+json" },
    redirect: "manual",
    signal: AbortSignal.timeout(JWKS_TIMEOUT_MS),
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  try {
    return await response.json();
  } catch {
    throw new Error("not JSON");
  }
}
