import { z } from "zod";

/** A function's `proxy` setting as stored: the password is never here, only the name of the secret holding it. */
export interface ProxySettings {
  /** `http://host:port`, `https://host:port` or `socks5://host:port`. */
  server: string;
  username: string | null;
  /** The function's secret holding the password (read at run time by the service, never stored here). */
  password_secret: string | null;
  /** Hosts the browser reaches directly (Chromium's bypass list: `*.example.com`, `localhost`, …). */
  bypass: string[];
}

const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const MAX_BYPASS = 50;

/** `scheme://host:port` of a server proxyServerProblem accepts, the port always written (a URL drops 443 after https, 80 after http). */
export function proxyServerText(server: string): string {
  const url = new URL(server);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.protocol}//${url.hostname}:${port}`;
}

/** Why `server` is not a proxy Chromium can use, or undefined when it is one. */
export function proxyServerProblem(server: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return "must be a URL such as http://proxy.example.com:8080";
  }
  if (!["http:", "https:", "socks5:"].includes(url.protocol)) return "must start with http://, https:// or socks5://";
  if (url.username || url.password) return "must not carry credentials: give `username` and `password_secret` instead";
  if ((url.pathname !== "" && url.pathname !== "/") || url.search || url.hash || /[?#]/.test(server)) return "must be only scheme://host:port (no path, query or fragment)";
  if (!/^[a-z0-9]+:\/\/[^/?#]*:\d+\/?$/i.test(server)) return "must name a port (http://host:port)";
  return undefined;
}

const ProxyFields = z.strictObject({
  server: z.string().max(300).describe("`http://host:port`, `https://host:port` or `socks5://host:port`"),
  username: z.string().min(1).max(256).nullable().optional(),
  password_secret: z
    .string()
    .regex(SECRET_NAME, "must name one of the function's secrets (^[A-Z][A-Z0-9_]{0,63}$)")
    .nullable()
    .optional()
    .describe("The function's secret holding the password: read at run time, never stored on the record or shown"),
  bypass: z.array(z.string().min(1).max(253)).max(MAX_BYPASS).optional().describe("Hosts reached without the proxy (Chromium's bypass list)"),
});

/** A proxy as a create or update body (and Session.start) gives it: checked the way Chromium can use it. */
export const ProxyInputObject = ProxyFields.superRefine((value, ctx) => {
  const problem = proxyServerProblem(value.server);
  if (problem) ctx.addIssue({ code: "custom", path: ["server"], message: problem });
  else if (new URL(value.server).protocol === "socks5:" && (value.username || value.password_secret)) {
    ctx.addIssue({
      code: "custom",
      path: [value.username ? "username" : "password_secret"],
      message: "Chromium has no SOCKS authentication: a socks5 proxy takes no username or password (use an http:// or https:// proxy for one that needs them)",
    });
  }
  if (!value.username && value.password_secret) ctx.addIssue({ code: "custom", path: ["password_secret"], message: "needs a username" });
});

/** `proxy` in a create or update body: `null` removes it. */
export const ProxyInput = ProxyInputObject.nullable()
  .describe("Every browser session of the function's runs goes through this proxy (Session.start({ proxy }) overrides it per session). `null` removes it")
  .meta({ id: "ProxyInput" });

/** `proxy` in a function record (never the password). */
export const ProxyView = z
  .object({
    server: z.string(),
    username: z.string().nullable(),
    password_secret: z.string().nullable().describe("The name of the secret holding the password; the password itself is never shown"),
    bypass: z.array(z.string()),
  })
  .nullable()
  .meta({ id: "Proxy" });

/** The setting a create or update asks for, in its stored form (null: none). */
export function proxyFromInput(input: z.infer<typeof ProxyInput>): ProxySettings | null {
  if (input === null) return null;
  return {
    server: proxyServerText(input.server),
    username: input.username ?? null,
    password_secret: input.password_secret ?? null,
    bypass: [...(input.bypass ?? [])],
  };
}

/** A stored setting read back field by field (null when absent or not one). */
export function proxyOf(fn: { proxy?: ProxySettings | null }): ProxySettings | null {
  const stored = fn.proxy;
  if (!stored || typeof stored !== "object" || typeof stored.server !== "string") return null;
  return {
    server: stored.server,
    username: typeof stored.username === "string" ? stored.username : null,
    password_secret: typeof stored.password_secret === "string" ? stored.password_secret : null,
    bypass: Array.isArray(stored.bypass) ? stored.bypass.filter((entry): entry is string => typeof entry === "string") : [],
  };
}
