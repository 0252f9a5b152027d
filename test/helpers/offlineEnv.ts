/**
 * The environment of a tool run by a test that must not reach the network: the environment of
 * the test, with Redocly's telemetry and update notice off, and every HTTP(S) proxy set to a
 * port nothing listens on, so that a request the tool would make fails at once instead of leaving
 * the machine.
 */
export function offlineEnv(): NodeJS.ProcessEnv {
  const deadProxy = "http://127.0.0.1:9";
  return {
    ...process.env,
    REDOCLY_TELEMETRY: "off",
    REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
    REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
    NO_COLOR: "1",
    HTTP_PROXY: deadProxy,
    HTTPS_PROXY: deadProxy,
    http_proxy: deadProxy,
    https_proxy: deadProxy,
    NO_PROXY: "",
    no_proxy: "",
  };
}
