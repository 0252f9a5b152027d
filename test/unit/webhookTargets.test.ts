import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import v8 from "node:v8";
import vm from "node:vm";
import { literalAddressOf, refusedAddressReason } from "../../lambdas/network/addressPolicy";
import { deliveryBody, MAX_DELIVERY_BODY_BYTES } from "../../lambdas/webhooks/deliveryBody";
import { postWebhook } from "../../lambdas/webhooks/postWebhook";
import { MAX_DELIVERY_ATTEMPTS, retryDelayMs } from "../../lambdas/webhooks/retrySchedule";
import { functionItem, runItem } from "../helpers/records";

describe("refusedAddressReason", () => {
  it.each([
    "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254", "100.64.0.1", "100.127.255.255",
    "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::10.0.0.1",
    "2002:7f00:1::1", "2002:a9fe:a9fe::", "64:ff9b:1::a00:1",
    // Documentation and discard-only ranges, and the IPv4-translated form (::ffff:0:a.b.c.d).
    "192.0.2.1", "198.51.100.7", "203.0.113.200", "2001:db8::1", "100::1", "::ffff:0:7f00:1", "::ffff:0:10.0.0.1",
  ])("refuses %s", (address) => {
    expect(refusedAddressReason(address)).toEqual(expect.any(String));
  });

  it.each(["93.184.215.14", "8.8.8.8", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "::ffff:0:8.8.8.8", "2001:db9::1"])("allows %s", (address) => {
    expect(refusedAddressReason(address)).toBeNull();
  });

  it("reads addresses written in URLs", () => {
    expect(literalAddressOf("[::1]")).toBe("::1");
    expect(literalAddressOf(new URL("http://0x7f.1/").hostname)).toBe("127.0.0.1");
    expect(literalAddressOf("example.com")).toBeNull();
  });
});

describe("postWebhook", () => {
  let seen: { headers: IncomingHttpHeaders; url: string | undefined }[];
  let port: number;
  let close: () => Promise<void>;
  beforeEach(async () => {
    seen = [];
    const server = createServer((request, response) => {
      seen.push({ headers: request.headers, url: request.url });
      request.resume();
      if (request.url === "/redirect") response.writeHead(302, { location: "http://127.0.0.1/elsewhere" }).end();
      else response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    port = (server.address() as AddressInfo).port;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterEach(() => close());

  it("connects to the address it checked, keeping the host name in the Host header", async () => {
    const resolved: string[] = [];
    const resolve = async (hostname: string) => {
      resolved.push(hostname);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const result = await postWebhook(`http://hooks.example:${port}/in?x=1`, { "webhook-id": "msg_1" }, "{}", { allowLocalNetwork: true, resolve });
    expect(result).toEqual({ ok: true, status_code: 204, error: null });
    expect(resolved).toEqual(["hooks.example"]);
    expect(seen).toEqual([{ url: "/in?x=1", headers: expect.objectContaining({ host: `hooks.example:${port}`, "webhook-id": "msg_1", "content-type": "application/json" }) }]);
  });

  it("refuses a host with any non-public address, without connecting", async () => {
    const resolve = async () => [{ address: "93.184.215.14", family: 4 }, { address: "127.0.0.1", family: 4 }];
    const result = await postWebhook(`http://rebind.example:${port}/`, {}, "{}", { allowLocalNetwork: false, resolve });
    expect(result).toMatchObject({ ok: false, status_code: null, error: expect.stringMatching(/^refused: rebind\.example resolves to a non-public address/) });
    expect(seen).toEqual([]);
  });

  it("does not follow redirects, and reports connection failures and timeouts as failed attempts", async () => {
    expect(await postWebhook(`http://127.0.0.1:${port}/redirect`, {}, "{}", { allowLocalNetwork: true })).toEqual({ ok: false, status_code: 302, error: "answered HTTP 302" });
    expect(seen).toHaveLength(1);
    await close();
    const refused = await postWebhook(`http://127.0.0.1:${port}/`, {}, "{}", { allowLocalNetwork: true });
    expect(refused).toEqual({ ok: false, status_code: null, error: "connection failed: ECONNREFUSED" });
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", () => resolve()));
    close = () => new Promise((resolve) => { hanging.closeAllConnections(); hanging.close(() => resolve()); });
    const slow = await postWebhook(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`, {}, "{}", { allowLocalNetwork: true, timeoutMs: 200 });
    expect(slow).toEqual({ ok: false, status_code: null, error: "no answer within 200 ms" });
  });

  it("ends an attempt on a receiver that never answers at its timeout even through garbage collections (no weakly held deadline)", async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", () => resolve()));
    // Full collections while the attempts wait, as the service's 3 MB results made them.
    const churn = setInterval(() => gc(), 20);
    try {
      const stop = new AbortController();
      const attempts = [1, 2, 3].map(() =>
        postWebhook(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`, {}, "{}", { allowLocalNetwork: true, timeoutMs: 300, signal: stop.signal }),
      );
      const late = new Promise((resolve) => setTimeout(() => resolve("still waiting after 5 s"), 5_000));
      for (const attempt of attempts) expect(await Promise.race([attempt, late])).toEqual({ ok: false, status_code: null, error: "no answer within 300 ms" });
    } finally {
      clearInterval(churn);
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
});

describe("deliveryBody", () => {
  const ended = runItem(functionItem(), { status: "succeeded", finished_at: "2026-01-01T00:00:05.000Z", result_json: JSON.stringify({ ok: 1 }), logs: "hello\n" });

  it("is the event with the run as GET /runs/{id} shows it", () => {
    const body = JSON.parse(deliveryBody("run.succeeded", ended));
    expect(body).toEqual({ type: "run.succeeded", timestamp: "2026-01-01T00:00:05.000Z", data: { run: expect.objectContaining({ run_id: ended.run_id, result: { ok: 1 }, logs: "hello\n" }) } });
  });

  it("leaves out the result, then the logs, past 256 KB, and says so", () => {
    const big = "x".repeat(MAX_DELIVERY_BODY_BYTES);
    const noResult = JSON.parse(deliveryBody("run.succeeded", { ...ended, result_json: JSON.stringify(big) }));
    expect({ result: noResult.data.run.result, logs: noResult.data.run.logs, omitted: noResult.data.omitted }).toEqual({ result: null, logs: "hello\n", omitted: ["result"] });
    const nearly = "y".repeat(MAX_DELIVERY_BODY_BYTES - 10_000);
    const both = deliveryBody("run.succeeded", { ...ended, result_json: JSON.stringify(nearly), logs: `${nearly}${nearly}` });
    expect(Buffer.byteLength(both) <= MAX_DELIVERY_BODY_BYTES).toBe(true);
    const { run, omitted } = JSON.parse(both).data;
    expect({ result: run.result, logs: run.logs, omitted }).toEqual({ result: null, logs: "", omitted: ["result", "logs"] });
  });
});

describe("the retry schedule", () => {
  it("retries for more than 24 hours over eight attempts", () => {
    const delays = Array.from({ length: MAX_DELIVERY_ATTEMPTS }, (_, i) => retryDelayMs(i + 1));
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, null]);
    expect(delays.reduce<number>((sum, delay) => sum + (delay ?? 0), 0)).toBeGreaterThan(24 * 3_600_000);
    expect(retryDelayMs(1, 20)).toBe(20);
  });
});
