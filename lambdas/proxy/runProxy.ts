import type { ProxySettings } from "./proxySettings";

import type { RunProxy } from "../../layers/runtime/sessionProxy";

/** What a run's browser sessions are given: the proxy with its password read from the function's secrets. */
export type { RunProxy };

/**
 * The run's proxy (trusted side): the function's setting, with the password read at run time
 * from the function's secrets (`secrets` by name). A secret that is missing leaves the password
 * out and is named (`missingSecret`): the proxy then refuses the credentials, and the run's
 * navigation fails naming the proxy and that secret.
 */
export function runProxyOf(setting: ProxySettings | null, secrets: Readonly<Record<string, string>>): RunProxy | undefined {
  if (!setting) return undefined;
  const proxy: RunProxy = { server: setting.server, bypass: [...setting.bypass] };
  if (setting.username) proxy.username = setting.username;
  if (setting.password_secret && Object.hasOwn(secrets, setting.password_secret)) proxy.password = secrets[setting.password_secret];
  else if (setting.password_secret) proxy.missingSecret = setting.password_secret;
  return proxy;
}
