/**
 * The network policy of the namespaces sandbox: with BROWSERFN_ALLOW_LOCAL_NETWORK unset,
 * neither an automation's Node code nor its browser reaches the host's loopback, its own
 * addresses, private networks, the networks the webhook policy refuses, or anything on the
 * host's own links (its subnets and gateways, whatever their range); with it set, they reach
 * the user's own local sites, and the service's internals (the store) still refuse them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { startTestService, type TestService } from "../helpers/localService";
import { type NeighbourNetwork, startNeighbourNetwork } from "../helpers/neighbourNetwork";
import { type PageServer, startPageServer } from "../helpers/pageServer";

const PROBE = `import { Session } from "browserfn/runtime";
export default async function run(urls: string[]) {
  const node: string[] = [];
  for (const url of urls) {
    try { const response = await fetch(url, { signal: AbortSignal.timeout(3000) }); node.push(response.status + " " + (await response.text()).slice(0, 80)); }
    catch (error) { node.push("unreachable: " + ((error as any).cause?.code ?? (error as Error).name)); }
  }
  await using session = await Session.start();
  const browser: string[] = [];
  for (const url of urls) {
    // A page each: a failed navigation's error page must not race the next one.
    const page = await session.newPage();
    try { const response = await page.goto(url, { timeout: 3000 }); browser.push((response?.status() ?? 0) + " " + (await page.title())); }
    catch (error) { browser.push("unreachable: " + (error as Error).message.split(" at ")[0]); }
    await page.close();
  }
  return { node, browser };
}`;

/** A page on every address of the host (0.0.0.0), as a user's local site might be. */
async function startWideServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((_request, response) => response.end("<title>wide</title>wide"));
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const hostAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((address) => address && address.family === "IPv4" && !address.internal)
    .map((address) => address?.address as string);

let pages: PageServer;
let wide: Awaited<ReturnType<typeof startWideServer>>;
beforeAll(async () => {
  [pages, wide] = await Promise.all([startPageServer(), startWideServer()]);
});
afterAll(async () => {
  await Promise.all([pages.close(), wide.close()]);
});

describe("the namespaces sandbox's network, local network not allowed", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ config: { sandbox: "namespaces", allowLocalNetwork: false } });
  });
  afterAll(() => t.destroy());

  it("reaches neither the host's loopback, its own addresses, the NAT's gateway, nor the service", async () => {
    await t.deploy("probe", PROBE, { timeout_seconds: 60 });
    const urls = [
      `${pages.url}/title/loopback`,
      `http://localhost:${wide.port}/`,
      `http://10.0.2.2:${wide.port}/`,
      `${t.url}/health`,
      ...hostAddresses().map((address) => `http://${address}:${wide.port}/`),
    ];
    const response = await t.call("POST", "/functions/probe", { body: { urls } });
    expect(response.status).toBe(200);
    const { node, browser } = response.body as { node: string[]; browser: string[] };
    expect(node).toHaveLength(urls.length);
    for (const answer of [...node, ...browser]) expect(answer).toMatch(/^unreachable/);
  });
});

describe("the namespaces sandbox's network and the host's links, local network not allowed", () => {
  // A neighbour on a link of the host, in a range no list names (11.22.33.0/24), that is also
  // the host's gateway to two more addresses: one public-looking, one in a documentation range
  // (which the webhook policy refuses).
  const NEIGHBOUR = "11.22.33.7";
  const PUBLIC_BEHIND = "11.22.40.5";
  const DOCUMENTATION_BEHIND = "198.51.100.9";
  let t: TestService;
  let neighbour: NeighbourNetwork;
  beforeAll(async () => {
    expect(process.getuid?.()).toBe(0); // interfaces and namespaces of the host's own: root only
    neighbour = await startNeighbourNetwork({ hostCidr: "11.22.33.1/24", neighbour: NEIGHBOUR, prefix: 24, behind: [PUBLIC_BEHIND, DOCUMENTATION_BEHIND] });
    t = await startTestService({ config: { sandbox: "namespaces", allowLocalNetwork: false } });
  }, 60_000);
  afterAll(async () => {
    await t?.destroy();
    await neighbour?.remove();
  });

  it("reaches neither a neighbour on the host's subnet nor a documentation range, and still a public address behind the same gateway", async () => {
    const urls = [NEIGHBOUR, DOCUMENTATION_BEHIND, PUBLIC_BEHIND].map((address) => `http://${address}:${neighbour.port}/`);
    // From the host, all three answer: the attack is sound.
    for (const url of urls) expect((await fetch(url)).status).toBe(200);
    await t.deploy("probe", PROBE, { timeout_seconds: 60 });
    const response = await t.call("POST", "/functions/probe", { body: { urls } });
    expect(response.status).toBe(200);
    const { node, browser } = response.body as { node: string[]; browser: string[] };
    expect(node[0]).toMatch(/^unreachable/);
    expect(node[1]).toMatch(/^unreachable/);
    expect(node[2]).toBe(`200 <title>neighbour ${PUBLIC_BEHIND}</title>neighbour`);
    expect(browser[0]).toMatch(/^unreachable/);
    expect(browser[1]).toMatch(/^unreachable/);
    expect(browser[2]).toBe(`200 neighbour ${PUBLIC_BEHIND}`);
  });
});

describe("the namespaces sandbox's network, local network allowed", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ config: { sandbox: "namespaces", allowLocalNetwork: true } });
  });
  afterAll(() => t.destroy());

  it("reaches the user's local sites, and the store still refuses it", async () => {
    await t.deploy("probe", PROBE, { timeout_seconds: 60 });
    const store = `${t.service.dynamoEndpoint}/`;
    const response = await t.call("POST", "/functions/probe", { body: { urls: [`${pages.url}/title/mine`, `http://127.0.0.1:${wide.port}/`, store] } });
    expect(response.status).toBe(200);
    const { node, browser } = response.body as { node: string[]; browser: string[] };
    expect(node[0]).toMatch(/^200 .*mine/);
    expect(node[1]).toMatch(/^200 .*wide/);
    expect(browser[0]).toBe("200 mine");
    expect(browser[1]).toBe("200 wide");
    // The store answers only requests that carry the service's per-start secret.
    expect(node[2]).toMatch(/^403 .*UnrecognizedClientException/);
    expect(browser[2]).not.toMatch(/^200/);
  });
});
