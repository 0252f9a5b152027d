import type { TextTransport } from "../../lambdas/runner/drivers/cdpMux";

/**
 * A CDP pipe whose far end is the test: what the mux sends is kept (parsed) in `sent`, and what
 * `say` is given is delivered as the browser's message (Chromium's order: `method` or `id` first,
 * `sessionId` last, as the test writes it).
 */
export function fakePipe() {
  const sent: Record<string, unknown>[] = [];
  const pipe: TextTransport & { say(message: object): void } = {
    send: (message) => void sent.push(JSON.parse(message) as Record<string, unknown>),
    close: () => pipe.onclose?.(),
    say: (message) => pipe.onmessage?.(JSON.stringify(message)),
  };
  return { pipe, sent };
}
