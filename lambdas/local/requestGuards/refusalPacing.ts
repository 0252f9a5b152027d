/**
 * Paces the 401s one client address gets: a few refused tokens a second are answered at once
 * (a user with a wrong key sees it straight away); past that, each refusal is held for
 * `holdMs` before it is answered, its body still unread (the socket paused, so what the client
 * sends waits in its own buffers, not the service's). A flood of requests without a valid key
 * then costs the service a held socket each instead of a new connection every few
 * milliseconds, and other tenants keep their share of the CPU.
 */
export interface RefusalPacing {
  /** Resolves when the refusal of a request from `client` may be answered. */
  wait(client: string): Promise<void>;
}

/** Client addresses remembered at most (a flood of addresses starts again from empty buckets). */
const MAX_CLIENTS = 10_000;

export function createRefusalPacing(options: { perSecond: number; burst: number; holdMs: number }, now: () => number = Date.now): RefusalPacing {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    wait(client) {
      const time = now();
      const bucket = buckets.get(client) ?? { tokens: options.burst, at: time };
      bucket.tokens = Math.min(options.burst, bucket.tokens + ((time - bucket.at) / 1000) * options.perSecond);
      bucket.at = time;
      if (buckets.size >= MAX_CLIENTS && !buckets.has(client)) buckets.clear();
      buckets.set(client, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return Promise.resolve();
      }
      return new Promise((resolve) => setTimeout(resolve, options.holdMs).unref());
    },
  };
}

/** A client's address as the pacing and the connection cap count it (IPv4-mapped IPv6 folded to IPv4). */
export function clientAddress(remoteAddress: string | undefined): string {
  const address = remoteAddress ?? "unknown";
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}
