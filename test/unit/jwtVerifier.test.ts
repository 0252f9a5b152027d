import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { base64url, exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { ApiError } from "../../lambdas/http/errors";
import type { TokenVerifier } from "../../lambdas/identity/identity";
import { createJwtVerifier, JWKS_MAX_AGE_MS, JWKS_REFETCH_MS, type JwtVerifierOptions } from "../../lambdas/identity/jwtVerifier";
import type { Store } from "../../lambdas/store/store";
import { startMemoryStore } from "../helpers/memoryStore";

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

const AUDIENCE = "browserfn-api";
const CLIENT_ID = "app-client-1";

/** A JWKS endpoint on 127.0.0.1 serving whatever keys the test sets, counting its requests. */
async function startJwksServer() {
  let keys: JWK[] = [];
  let status = 200;
  let requests = 0;
  const server: Server = createServer((request, response) => {
    requests += 1;
    response.writeHead(status, { "content-type": "application/json" });
    response.end(status === 200 ? JSON.stringify({ keys }) : "{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: url,
    jwksUrl: `${url}/.well-known/jwks.json`,
    requests: () => requests,
    setKeys: (next: JWK[]) => void (keys = next),
    setStatus: (next: number) => void (status = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function newKey(kid: string, alg = "RS256") {
  const pair = await generateKeyPair(alg);
  return { kid, alg, ...pair, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" } };
}

let store: Store;
let closeStore: () => Promise<void>;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
let keyA: Awaited<ReturnType<typeof newKey>>;
let keyB: Awaited<ReturnType<typeof newKey>>;
let keyEc: Awaited<ReturnType<typeof newKey>>;
let clock: number;

beforeAll(async () => {
  ({ store, close: closeStore } = await startMemoryStore());
  jwks = await startJwksServer();
  [keyA, keyB, keyEc] = await Promise.all([newKey("key-a"), newKey("key-b"), newKey("key-ec", "ES256")]);
});
afterAll(async () => {
  await jwks.close();
  await closeStore();
});
beforeEach(() => {
  clock = Date.now();
  jwks.setKeys([keyA.jwk, keyEc.jwk]);
  jwks.setStatus(200);
});

function verifier(overrides: Partial<JwtVerifierOptions> = {}): TokenVerifier {
  return createJwtVerifier({
    issuer: jwks.issuer,
    jwksUrl: jwks.jwksUrl,
    audience: [AUDIENCE],
    clientIds: [CLIENT_ID],
    accounts: store.accounts,
    defaultPlan: "free",
    now: () => clock,
    ...overrides,
  });
}

const seconds = () => Math.floor(clock / 1000);

/** A token signed by `key` (default A) with sensible claims, overridden by `claims` (undefined drops one). */
function sign(claims: JWTPayload = {}, key: { kid: string; alg: string; privateKey: KeyPair["privateKey"] } = keyA): Promise<string> {
  const payload: JWTPayload = { iss: jwks.issuer, aud: AUDIENCE, sub: "user-1", iat: seconds(), exp: seconds() + 3600, ...claims };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" }).sign(key.privateKey);
}

/** Asserts a 401 invalid_token whose message matches and never quotes the token. */
async function expectInvalid(tokens: TokenVerifier, token: string, message: RegExp): Promise<void> {
  const error = await tokens.verify(token).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  expect({ code: error.code, status: error.status }).toEqual({ code: "invalid_token", status: 401 });
  expect(error.message).toMatch(message);
  for (const part of token.split(".")) if (part.length > 8) expect(error.message).not.toContain(part);
}

describe("createJwtVerifier: valid tokens", () => {
  it("names the account by sub, creates it with the default plan, then uses its stored plan", async () => {
    const tokens = verifier();
    expect(await tokens.verify(await sign({ sub: "user-1" }))).toEqual({ account_id: "user-1", plan: "free", admin: false, key_id: null });
    expect(await store.accounts.getAccount("user-1")).toMatchObject({ account_id: "user-1", plan: "free", created_at: new Date(clock).toISOString() });

    await store.accounts.setPlan("user-1", "pro");
    expect((await tokens.verify(await sign({ sub: "user-1" }))).plan).toBe("pro");
    // An ES256 key of the same set works too (RS256 and ES256 are the defaults).
    expect((await tokens.verify(await sign({ sub: "user-ec" }, keyEc))).account_id).toBe("user-ec");
  });

  it("names a client-credentials token's account by its client_id", async () => {
    const tokens = verifier({ audience: [] });
    // Cognito: token_use "access", no username, sub equal to client_id, no aud.
    const cognito = await sign({ aud: undefined, sub: CLIENT_ID, client_id: CLIENT_ID, token_use: "access", scope: "browserfn/invoke" });
    expect(await tokens.verify(cognito)).toEqual({ account_id: CLIENT_ID, plan: "free", admin: false, key_id: null });
    // Without a sub at all, the client_id still names the account.
    expect((await tokens.verify(await sign({ aud: undefined, sub: undefined, client_id: CLIENT_ID }))).account_id).toBe(CLIENT_ID);
  });

  it("accepts an aud list that contains an accepted audience, and a small clock skew", async () => {
    const tokens = verifier();
    expect((await tokens.verify(await sign({ aud: ["other", AUDIENCE] }))).account_id).toBe("user-1");
    expect((await tokens.verify(await sign({ exp: seconds() - 2, nbf: seconds() + 2 }))).account_id).toBe("user-1");
  });
});

describe("createJwtVerifier: rejected tokens", () => {
  it("rejects expired and not-yet-valid tokens", async () => {
    const tokens = verifier();
    await expectInvalid(tokens, await sign({ exp: seconds() - 60 }), /expired/);
    await expectInvalid(tokens, await sign({ nbf: seconds() + 60 }), /not valid yet/);
    await expectInvalid(tokens, await sign({ exp: undefined }), /lacks the 'exp' claim/);
    await expectInvalid(tokens, await sign({ exp: "tomorrow" as unknown as number }), /'exp' claim is not valid/);
  });

  it("rejects another issuer, audience or client id", async () => {
    const tokens = verifier();
    await expectInvalid(tokens, await sign({ iss: `${jwks.issuer}/other` }), /wrong issuer/);
    await expectInvalid(tokens, await sign({ iss: undefined }), /lacks the 'iss' claim/);
    await expectInvalid(tokens, await sign({ aud: "other-api" }), /not meant for this API: its audience is not accepted/);
    await expectInvalid(tokens, await sign({ aud: undefined, client_id: "app-client-2" }), /its client id is not accepted/);
    await expectInvalid(tokens, await sign({ aud: "other-api", client_id: "app-client-2" }), /its audience and client id are not accepted/);
    await expectInvalid(tokens, await sign({ aud: undefined }), /names no accepted audience \(aud\) or client id/);
    // Only client ids configured: an aud alone is not enough.
    await expectInvalid(verifier({ audience: [] }), await sign({ aud: CLIENT_ID }), /names no accepted audience/);
  });

  it("rejects a bad signature: another key under the same kid, or a changed payload", async () => {
    const tokens = verifier();
    const impostor = await newKey("key-a");
    await expectInvalid(tokens, await sign({}, impostor), /bad signature/);
    const [header, , signature] = (await sign({ sub: "user-1" })).split(".");
    const forged = base64url.encode(JSON.stringify({ iss: jwks.issuer, aud: AUDIENCE, sub: "local", exp: seconds() + 60 }));
    await expectInvalid(tokens, `${header}.${forged}.${signature}`, /bad signature/);
  });

  it("rejects alg none and HS256 keyed with the public key", async () => {
    const tokens = verifier();
    const claims = base64url.encode(JSON.stringify({ iss: jwks.issuer, aud: AUDIENCE, sub: "user-1", exp: seconds() + 60 }));
    for (const header of [{ alg: "none" }, { alg: "none", kid: "key-a" }, { alg: "NONE", typ: "JWT" }]) {
      await expectInvalid(tokens, `${base64url.encode(JSON.stringify(header))}.${claims}.`, /signing algorithm is not supported/);
    }
    const pem = await exportSPKI(keyA.publicKey);
    for (const secret of [pem, JSON.stringify(keyA.jwk), keyA.jwk.n as string]) {
      const hs256 = await new SignJWT({ iss: jwks.issuer, aud: AUDIENCE, sub: "user-1", exp: seconds() + 60 })
        .setProtectedHeader({ alg: "HS256", kid: "key-a" })
        .sign(new TextEncoder().encode(secret));
      await expectInvalid(tokens, hs256, /signing algorithm is not supported \(accepted: RS256, ES256\)/);
    }
    // An algorithm left out of the configured list is refused as well.
    await expectInvalid(verifier({ algorithms: ["RS256"] }), await sign({}, keyEc), /accepted: RS256\)/);
  });

  it("rejects malformed tokens, ID tokens and subjects that cannot name an account", async () => {
    const tokens = verifier();
    await expectInvalid(tokens, "not-a-jwt", /neither an API key nor a well-formed JWT/);
    await expectInvalid(tokens, "a.b.c", /neither an API key nor a well-formed JWT/);
    await expectInvalid(tokens, await sign({ token_use: "id" }), /not an access token/);
    await expectInvalid(tokens, await sign({ sub: "auth0|123" }), /cannot name an account/);
    await expectInvalid(tokens, await sign({ sub: undefined }), /names no subject/);
  });

  it("refuses a configuration without audience and client ids, or with unsafe algorithms", () => {
    expect(() => verifier({ audience: [], clientIds: [] })).toThrow(/audience or client ids/);
    for (const algorithms of [["none"], ["HS256"], ["RS256", "HS512"], []]) {
      expect(() => verifier({ algorithms })).toThrow(/algorithms must be some of/);
    }
  });
});

describe("createJwtVerifier: the JWKS cache", () => {
  it("fetches once for concurrent first requests and reuses the keys", async () => {
    const tokens = verifier();
    const before = jwks.requests();
    const token = await sign();
    await Promise.all(Array.from({ length: 10 }, () => tokens.verify(token)));
    await tokens.verify(await sign({}, keyEc));
    expect(jwks.requests() - before).toBe(1);
  });

  it("refetches on an unknown kid, at most once per 30 s, and then accepts a newly added key", async () => {
    const tokens = verifier();
    const before = jwks.requests();
    await tokens.verify(await sign());
    jwks.setKeys([keyA.jwk, keyB.jwk]);
    // Right after a fetch, an unknown kid is refused without asking again.
    await expectInvalid(tokens, await sign({}, keyB), /unknown key/);
    expect(jwks.requests() - before).toBe(1);
    clock += JWKS_REFETCH_MS;
    expect((await tokens.verify(await sign({ sub: "user-b" }, keyB))).account_id).toBe("user-b");
    expect(jwks.requests() - before).toBe(2);
  });

  it("does not hammer the JWKS endpoint with unknown kids", async () => {
    const tokens = verifier();
    const before = jwks.requests();
    await tokens.verify(await sign());
    const strangers = Array.from({ length: 20 }, (_, i) => ({ ...keyA, kid: `stranger-${i}` }));
    for (const key of strangers) await expectInvalid(tokens, await sign({}, key), /unknown key/);
    expect(jwks.requests() - before).toBe(1);
    clock += JWKS_REFETCH_MS + 1;
    await Promise.all(strangers.map(async (key) => expectInvalid(tokens, await sign({}, key), /unknown key/)));
    expect(jwks.requests() - before).toBe(2);
    clock += 10_000;
    for (const key of strangers) await expectInvalid(tokens, await sign({}, key), /unknown key/);
    expect(jwks.requests() - before).toBe(2);
  });

  it("rotation: a removed key works until the next fetch (max age or an unknown kid), then fails", async () => {
    // Removed key, no new kid seen: the cached set is used until it is JWKS_MAX_AGE_MS old.
    let tokens = verifier();
    await tokens.verify(await sign());
    jwks.setKeys([keyB.jwk]);
    clock += JWKS_MAX_AGE_MS - 1;
    expect((await tokens.verify(await sign())).account_id).toBe("user-1");
    clock += 1;
    await expectInvalid(tokens, await sign(), /unknown key/);
    expect((await tokens.verify(await sign({}, keyB))).account_id).toBe("user-1");

    // A token under the new kid refetches the set: from then on the old key is gone.
    jwks.setKeys([keyA.jwk]);
    tokens = verifier();
    await tokens.verify(await sign());
    jwks.setKeys([keyB.jwk]);
    clock += JWKS_REFETCH_MS;
    await tokens.verify(await sign({}, keyB));
    await expectInvalid(tokens, await sign(), /unknown key/);
  });

  it("answers 503 when the JWKS cannot be fetched, retrying after 5 s", async () => {
    const tokens = verifier();
    const before = jwks.requests();
    jwks.setStatus(500);
    const token = await sign();
    await expect(tokens.verify(token)).rejects.toMatchObject({ code: "service_unavailable", status: 503, headers: { "retry-after": "5" } });
    await expect(tokens.verify(token)).rejects.toMatchObject({ code: "service_unavailable" });
    expect(jwks.requests() - before).toBe(1);
    jwks.setStatus(200);
    clock += 5_000;
    expect((await tokens.verify(token)).account_id).toBe("user-1");
    expect(jwks.requests() - before).toBe(2);
  });
});
