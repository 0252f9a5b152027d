import { ApiError } from "./errors";

export interface RateLimit {
  /** Sustained requests per second per key (0: no limit). */
  perSecond: number;
  /** Requests a key may make at once after a quiet spell. */
  burst: number;
}

/** What a limiter counts and by whom, for its 429's message: "requests" per "key" unless said. */
export interface RateLimited {
  what: string;
  per: string;
}

/**
 * Token buckets by key (an API key's id, or an account's for OAuth tokens: rateLimitKey; an
 * account id for deploys), kept in this process: with several service instances each enforces
 * the limit on its own. `limited` names what is counted and by whom in the 429's message.
 */
export function createRateLimiter(limit: RateLimit, now: () => number = Date.now, limited: RateLimited = { what: "requests", per: "key" }) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  /** `key`'s bucket refilled to now; throws 429 `rate_limited` with Retry-After when it holds no whole token. */
  const refilled = (key: string) => {
    const t = now();
    const bucket = buckets.get(key) ?? { tokens: limit.burst, at: t };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((t - bucket.at) / 1000) * limit.perSecond);
    bucket.at = t;
    if (bucket.tokens < 1) {
      buckets.set(key, bucket);
      const wait = Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond));
      throw new ApiError(
        "rate_limited",
        `Too many ${limited.what}: at most ${rate(limit.perSecond)} (bursts of ${limit.burst}) per ${limited.per}`,
        { per_second: limit.perSecond, burst: limit.burst },
        { "retry-after": String(wait) },
      );
    }
    return bucket;
  };
  return {
    /** Takes one token for `key`, or throws 429 `rate_limited` with Retry-After. */
    take(key: string): void {
      if (limit.perSecond <= 0) return;
      const bucket = refilled(key);
      bucket.tokens -= 1;
      if (buckets.size > 100_000) buckets.clear();
      buckets.set(key, bucket);
    },
    /** Throws what `take` would throw now, taking nothing (a request refused on its head, before its body is read). */
    check(key: string): void {
      if (limit.perSecond <= 0) return;
      refilled(key);
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** "100 a second", or, under one a second, "60 a minute". */
function rate(perSecond: number): string {
  return perSecond >= 1 ? `${perSecond} a second` : `${Math.round(perSecond * 60 * 100) / 100} a minute`;
}

/** Whose bucket a request takes from: its API key's, or its account's for an OAuth token. */
export function rateLimitKey(principal: { key_id: string | null; account_id: string }): string {
  return principal.key_id ?? `account:${principal.account_id}`;
}
