import { BrowserfnClient, NotFoundError } from "../../client";

/** A fetch that answers each request with the next scripted answer, and records the requests' Last-Event-ID. */
function scripted(answers: (() => Response)[]) {
  const seen: (string | null)[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    seen.push(new Headers(init.headers).get("last-event-id"));
    const next = answers.shift();
    if (!next) throw new Error("no more answers");
    return next();
  }) as unknown as typeof globalThis.fetch;
  return { fetch, seen };
}

const sse = (body: string) => () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
const event = (id: string, name: string, data: unknown) => `id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

describe("client.runEvents", () => {
  it("reconnects with Last-Event-ID after each body that ends before the run's end (long polling), until the result", async () => {
    const { fetch, seen } = scripted([
      sse(`retry: 10\n\n${event("status:queued", "status", { status: "queued", at: "t0" })}`),
      sse("retry: 10\n\n"),
      sse(`retry: 10\n\n${event("status:running", "status", { status: "running", at: "t1" })}${event("log:6", "log", { text: "LOG a\n" })}`),
      sse(`retry: 10\n\n${event("status:succeeded", "status", { status: "succeeded", at: "t2" })}${event("result", "result", { run_id: "run_x", status: "succeeded", result: 1 })}`),
    ]);
    const client = new BrowserfnClient({ baseUrl: "http://service.test", apiKey: "bfn_x", fetch });
    const received = [];
    for await (const e of client.runEvents("run_x")) received.push(`${e.event}:${e.id}`);
    expect(received).toEqual(["status:status:queued", "status:status:running", "log:log:6", "status:status:succeeded", "result:result"]);
    expect(seen).toEqual([null, "status:queued", "status:queued", "log:6"]);
  });

  it("ends on 204, throws API errors, and retries 5xx a few times", async () => {
    const done = scripted([() => new Response(null, { status: 204 })]);
    const none = [];
    for await (const e of new BrowserfnClient({ baseUrl: "http://service.test", fetch: done.fetch }).runEvents("run_x", { lastEventId: "result" })) none.push(e);
    expect([none, done.seen]).toEqual([[], ["result"]]);

    const error = (status: number, code: string) => () => new Response(JSON.stringify({ error: { code, message: code, request_id: "r", details: {} } }), { status, headers: { "retry-after": "0" } });
    const missing = scripted([error(503, "service_unavailable"), error(404, "run_not_found")]);
    const stream = new BrowserfnClient({ baseUrl: "http://service.test", fetch: missing.fetch }).runEvents("run_x");
    await expect(stream.next()).rejects.toBeInstanceOf(NotFoundError);
    expect(missing.seen).toEqual([null, null]);
  });
});
