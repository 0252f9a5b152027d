import { readLocalConfig } from "../../lambdas/config/localConfig";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";

describe("readLocalConfig: BROWSERFN_OAUTH_*", () => {
  const base = { BROWSERFN_DATA_DIR: "/tmp/data" };

  it("is off without an issuer, and derives the JWKS URL and algorithms from it", () => {
    expect(readLocalConfig(base).oauth).toBeNull();
    const config = readLocalConfig({
      ...base,
      BROWSERFN_OAUTH_ISSUER: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123",
      BROWSERFN_OAUTH_CLIENT_IDS: "client-1, client-2,",
    });
    expect(config.oauth).toEqual({
      issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123",
      jwksUrl: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123/.well-known/jwks.json",
      audience: [],
      clientIds: ["client-1", "client-2"],
      algorithms: ["RS256", "ES256"],
    });
    const explicit = readLocalConfig({
      ...base,
      BROWSERFN_OAUTH_ISSUER: "https://id.example.com/",
      BROWSERFN_OAUTH_JWKS_URL: "https://id.example.com/keys",
      BROWSERFN_OAUTH_AUDIENCE: "api",
      BROWSERFN_OAUTH_ALGORITHMS: "ES384,PS256",
    }).oauth;
    expect(explicit).toMatchObject({ issuer: "https://id.example.com/", jwksUrl: "https://id.example.com/keys", audience: ["api"], algorithms: ["ES384", "PS256"] });
    expect(readLocalConfig({ ...base, BROWSERFN_OAUTH_ISSUER: "https://id.example.com/", BROWSERFN_OAUTH_AUDIENCE: "api" }).oauth?.jwksUrl).toBe(
      "https://id.example.com/.well-known/jwks.json",
    );
  });

  it("fails at start-up on a half or unsafe configuration, naming the variable", () => {
    const issuer = "https://id.example.com";
    expect(() => readLocalConfig({ ...base, BROWSERFN_OAUTH_ISSUER: issuer })).toThrow(/BROWSERFN_OAUTH_ISSUER: needs BROWSERFN_OAUTH_AUDIENCE or BROWSERFN_OAUTH_CLIENT_IDS/);
    expect(() => readLocalConfig({ ...base, BROWSERFN_OAUTH_AUDIENCE: "api" })).toThrow(/BROWSERFN_OAUTH_AUDIENCE: is set but BROWSERFN_OAUTH_ISSUER is not/);
    expect(() => readLocalConfig({ ...base, BROWSERFN_OAUTH_ISSUER: issuer, BROWSERFN_OAUTH_AUDIENCE: "api", BROWSERFN_OAUTH_ALGORITHMS: "RS256,HS256" })).toThrow(
      /BROWSERFN_OAUTH_ALGORITHMS/,
    );
    expect(() => readLocalConfig({ ...base, BROWSERFN_OAUTH_ISSUER: issuer, BROWSERFN_OAUTH_AUDIENCE: "api", BROWSERFN_OAUTH_ALGORITHMS: "none" })).toThrow(
      /BROWSERFN_OAUTH_ALGORITHMS/,
    );
    expect(() => readLocalConfig({ ...base, BROWSERFN_OAUTH_ISSUER: "not a url", BROWSERFN_OAUTH_AUDIENCE: "api" })).toThrow(/BROWSERFN_OAUTH_ISSUER/);
    expect(() =>
      readLocalConfig({ ...base, BROWSERFN_OAUTH_ISSUER: issuer, BROWSERFN_OAUTH_AUDIENCE: "api", BROWSERFN_PLANS: JSON.stringify({ pro: DEFAULT_PLANS.pro }) }),
    ).toThrow(/plan 'free', which BROWSERFN_PLANS does not define/);
  });
});
