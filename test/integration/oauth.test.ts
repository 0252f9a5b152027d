import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { ECHO_FN } from "../helpers/code";
import { expectError } from "../helpers/http";
import { startTestService, type TestService } from "../helpers/localService";

const AUDIENCE = "browserfn-api";

let t: TestService;
let issuer: string;
let privateKey: CryptoKey;
let closeJwks: () => Promise<void>;

beforeAll(async () => {
  const pair = await generateKeyPair("RS256");
  privateKey = pair.privateKey;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" }] });
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(jwks);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closeJwks = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t = await startTestService({
    config: {
      oauth: { issuer, jwksUrl: `${issuer}/.well-known/jwks.json`, audience: [AUDIENCE], clientIds: [], algorithms: ["RS256"] },
    },
  });
});
afterAll(async () => {
  await t?.destroy();
  await closeJwks?.();
});

function accessToken(claims: JWTPayload): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuer, aud: AUDIENCE, sub: "oauth-user-1", iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .sign(privateKey);
}

describe("OAuth 2.0 access tokens on the local service", () => {
  it("serves a valid token's account, isolated from the API-key accounts", async () => {
    const jwt = await accessToken({});
    const aliceKey = await t.newAccount("alice");
    expect((await t.call("POST", "/functions", { token: aliceKey, body: { name: "echo", code: ECHO_FN } })).status).toBe(201);

    const listed = await t.call("GET", "/functions", { token: jwt });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);

    expect((await t.call("POST", "/functions", { token: jwt, body: { name: "mine", code: ECHO_FN } })).status).toBe(201);
    const names = async (token: string) => ((await t.call("GET", "/functions", { token })).body.items as { name: string }[]).map((f) => f.name);
    expect(await names(jwt)).toEqual(["mine"]);
    expect(await names(aliceKey)).toEqual(["echo"]);
    expect(await names(t.adminKey)).toEqual([]);
    // The account was created on first use, on the free plan, and is not an admin.
    expect(await t.service.deps.store.accounts.getAccount("oauth-user-1")).toMatchObject({ plan: "free" });
    expectError(await t.call("POST", "/api-keys", { token: jwt, body: { account: "alice" } }), 403, "forbidden");
  });

  it("answers an expired or foreign token with 401 invalid_token in the one error shape", async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await accessToken({ iat: now - 7200, exp: now - 3600 });
    const error = expectError(await t.call("GET", "/functions", { token: expired }), 401, "invalid_token");
    expect(error.message).toMatch(/expired/);
    expect(error.message).not.toContain(expired.split(".")[1]);
    const foreign = await accessToken({ aud: "another-api" });
    expect(expectError(await t.call("GET", "/functions", { token: foreign }), 401, "invalid_token").message).toMatch(/audience/);
  });

  it("names the issuer in the MCP endpoint's protected resource metadata, and lists the token's account's tools on /mcp", async () => {
    const metadata = await t.call("GET", "/.well-known/oauth-protected-resource", { token: null });
    expect(metadata.body).toMatchObject({ resource: `${t.url}/mcp`, authorization_servers: [issuer] });
    const list = await t.call("POST", "/mcp", {
      token: await accessToken({}),
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: { jsonrpc: "2.0", id: 7, method: "tools/list" },
    });
    expect(list.status).toBe(200);
    expect((list.body.result.tools as { name: string }[]).map((tool) => tool.name)).toEqual(["mine"]);
  });
});
