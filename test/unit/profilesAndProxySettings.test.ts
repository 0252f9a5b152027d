import { compileCode } from "../../lambdas/code/compileCode";
import { ProxyInput, proxyFromInput, proxyOf } from "../../lambdas/proxy/proxySettings";
import { runProxyOf } from "../../lambdas/proxy/runProxy";
import { playwrightProxy, puppeteerProxyOptions, sessionProxy } from "../../layers/runtime/sessionProxy";

describe("the profile names a module gives Session.start literally (found at deploy)", () => {
  it("finds string and template literals of `profile`, sorted and once each, and nothing computed or invalid", () => {
    const code = `import { Session } from "browserfn/runtime";
export default async function run(name: string) {
  await using a = await Session.start({ profile: "shop-b", persist: true });
  await using b = await Session.start({ timeout_minutes: 1, profile: \`shop-a\` });
  await using c = await Session.start({ profile: "shop-b" });
  await using d = await Session.start({ profile: name });
  await using e = await Session.start({ profile: "Not_Valid" });
  await using f = await Session.start({ profile: \`x-\${name}\` });
  return 1;
}`;
    expect(compileCode(code).profile_names).toEqual(["shop-a", "shop-b"]);
    expect(compileCode("export default async () => 1;").profile_names).toEqual([]);
  });

  it("finds which of them a call may open as its writer (the AWS pipeline leases those before a run): a `persist` not literally false", () => {
    const code = `import { Session } from "browserfn/runtime";
export default async function run(save: boolean) {
  await using a = await Session.start({ profile: "written", persist: true });
  await using b = await Session.start({ profile: "maybe", persist: save });
  await using c = await Session.start({ profile: "read-only" });
  await using d = await Session.start({ profile: "read-too", persist: false });
  await using e = await Session.start({ persist: true, profile: "order" });
  return 1;
}`;
    const compiled = compileCode(code);
    expect(compiled.profile_names).toEqual(["maybe", "order", "read-only", "read-too", "written"]);
    expect(compiled.profile_writes).toEqual(["maybe", "order", "written"]);
    expect(compileCode("export default async () => 1;").profile_writes).toEqual([]);
  });
});

describe("the proxy setting", () => {
  const parse = (value: unknown) => ProxyInput.safeParse(value);

  it("takes http, https and socks5 servers as scheme://host:port, kept without a trailing slash", () => {
    const parsed = parse({ server: "http://proxy.example:8080/", username: "me", password_secret: "PROXY_PW", bypass: ["*.local"] });
    expect(parsed.success).toBe(true);
    expect(proxyFromInput(parsed.data ?? null)).toEqual({ server: "http://proxy.example:8080", username: "me", password_secret: "PROXY_PW", bypass: ["*.local"] });
    expect(parse({ server: "https://p:443" }).success).toBe(true);
    expect(parse({ server: "socks5://p:1080" }).success).toBe(true);
  });

  it("refuses socks5 with credentials, saying Chromium has no SOCKS authentication, and servers Chromium cannot use", () => {
    const socks = parse({ server: "socks5://p:1080", username: "u" });
    expect(socks.success).toBe(false);
    expect(socks.error?.issues[0]?.message).toContain("Chromium has no SOCKS authentication");
    for (const server of ["ftp://p:21", "http://p", "http://u:pw@p:80", "http://p:80/x", "http://p:80?q", "not a url"]) {
      expect(parse({ server }).success).toBe(false);
    }
    // Whatever the scheme's case, and on the field the request set.
    for (const [value, field] of [[{ server: "SOCKS5://p:1080", username: "u" }, "username"], [{ server: "Socks5://p:1080", password_secret: "PW" }, "password_secret"]] as const) {
      const refused = parse(value);
      expect(refused.error?.issues.find((issue) => issue.message.includes("Chromium has no SOCKS authentication"))?.path).toEqual([field]);
    }
    // A server with a path, a query or a fragment is told so (it does name its port).
    for (const server of ["http://p:80/x", "http://p:80?q=1", "http://p:80#f", "http://p:80/?"]) {
      expect(parse({ server }).error?.issues[0]?.message).toBe("must be only scheme://host:port (no path, query or fragment)");
    }
    expect(parse({ server: "http://p/x" }).error?.issues[0]?.message).toBe("must be only scheme://host:port (no path, query or fragment)");
    expect(parse({ server: "http://p" }).error?.issues[0]?.message).toBe("must name a port (http://host:port)");
    expect(parse({ server: "http://p:80", password_secret: "PW" }).success).toBe(false); // a password without a user
    expect(parse({ server: "http://p:80", password_secret: "lowercase" }).success).toBe(false);
    expect(parse({ server: "http://p:80", extra: 1 }).success).toBe(false);
  });

  it("reads a stored setting field by field, and gives a run the password from the function's secrets only", () => {
    expect(proxyOf({ proxy: { server: "http://p:80", username: 5, password_secret: null, bypass: ["a", 3], other: "x" } as never })).toEqual({ server: "http://p:80", username: null, password_secret: null, bypass: ["a"] });
    const setting = { server: "http://p:80", username: "u", password_secret: "PW", bypass: [] };
    expect(runProxyOf(setting, { PW: "secret-value" })).toEqual({ server: "http://p:80", username: "u", password: "secret-value", bypass: [] });
    // A secret the function lacks: no password, and the run's refusal can name the secret.
    expect(runProxyOf(setting, {})).toEqual({ server: "http://p:80", username: "u", bypass: [], missingSecret: "PW" });
    expect(runProxyOf(null, { PW: "x" })).toBeUndefined();
  });

  it("lets Session.start({ proxy }) override the function's proxy, or turn it off with null", () => {
    const fn = { server: "http://fn:80", bypass: [] };
    expect(sessionProxy(undefined, fn)).toBe(fn);
    expect(sessionProxy(null, fn)).toBeUndefined();
    expect(sessionProxy({ server: "http://own:3128", username: "u", password: "p" }, fn)).toEqual({ server: "http://own:3128", username: "u", password: "p", bypass: [] });
    expect(() => sessionProxy({ server: "socks5://s:1080", username: "u" }, fn)).toThrow("Chromium has no SOCKS authentication");
    expect(() => sessionProxy({ server: "http://nope" }, fn)).toThrow(/proxy.server must be/);
  });
});

describe("a session's proxy as each driver opens its context with it", () => {
  it("gives Playwright the puppeteer driver's bypass meaning: loopback stays direct unless the list says <-loopback>", () => {
    expect(playwrightProxy({ server: "http://p:8080", bypass: [] })).toEqual({ server: "http://p:8080", bypass: "localhost" });
    expect(playwrightProxy({ server: "http://p:8080", bypass: ["*.internal"] })).toEqual({ server: "http://p:8080", bypass: "*.internal,localhost" });
    expect(playwrightProxy({ server: "http://p:8080", bypass: ["<-loopback>"], username: "me", password: "pw" })).toEqual({ server: "http://p:8080", bypass: "<-loopback>", username: "me", password: "pw" });
    expect(playwrightProxy({ server: "http://p:8080", bypass: [], username: "me" })).toEqual({ server: "http://p:8080", bypass: "localhost", username: "me", password: "" });
    expect(puppeteerProxyOptions({ server: "http://p:8080", bypass: ["<-loopback>"] })).toEqual({ proxyServer: "http://p:8080", proxyBypassList: ["<-loopback>"] });
    expect(puppeteerProxyOptions(undefined)).toEqual({});
  });
});
