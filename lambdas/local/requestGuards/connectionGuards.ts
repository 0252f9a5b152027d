/**
 * What a client may hold of the local server: connections per client address (a local user's
 * tests, CLI and dashboard all come from 127.0.0.1, so the default leaves them plenty), and how
 * long a request body may stop arriving before it is answered 408 and its connection closed.
 */
export interface ConnectionGuards {
  maxConnectionsPerClient: number;
  bodyIdleMs: number;
}

export const DEFAULT_CONNECTION_GUARDS: ConnectionGuards = { maxConnectionsPerClient: 256, bodyIdleMs: 10_000 };

/** Refused tokens one client address gets answered at once: 20 a second, bursts of 40; past that each 401 waits 1 s. */
export const REFUSAL_PACING = { perSecond: 20, burst: 40, holdMs: 1_000 } as const;

/**
 * Node's own timeouts for a request's arrival: the head within 10 s, the whole request within
 * 60 s (a body that keeps trickling; a stalled one is cut by `bodyIdleMs` first), checked every
 * second (Node checks every 30 s by default). They end when the request has arrived: a long
 * answer (an event stream) is never cut by them.
 */
export const REQUEST_TIMEOUTS = { headersTimeout: 10_000, requestTimeout: 60_000, connectionsCheckingInterval: 1_000 } as const;
