/* eslint-disable @typescript-eslint/no-require-imports -- commands load on demand (static requires, which bin/cli.js's tsx hook compiles), so `browserfn list` does not load TypeScript and esbuild */
import type { Command } from "../command";

/** Every API command, loaded when it runs. */
export const COMMANDS: Record<string, { summary: string; load: () => Command }> = {
  login: { summary: "check and store the service URL and API key", load: () => require("./login").login },
  deploy: { summary: "bundle an automation file and create or update the function", load: () => require("./deploy").deploy },
  invoke: { summary: "run a function and print its result", load: () => require("./invoke").invoke },
  list: { summary: "list the account's functions", load: () => require("./list").list },
  info: { summary: "show one function", load: () => require("./info").info },
  logs: { summary: "show a function's latest runs (--follow)", load: () => require("./logs").logs },
  runs: { summary: "show one run with its result, logs and artifacts, or a function's latest runs", load: () => require("./runs").runs },
  metrics: { summary: "show a function's counts, success rate, durations", load: () => require("./metrics").metrics },
  versions: { summary: "list a function's versions", load: () => require("./versions").versions },
  fork: { summary: "copy a shared function into your account", load: () => require("./fork").fork },
  delete: { summary: "delete a function (asks unless --yes)", load: () => require("./delete").remove },
  secrets: { summary: "set, list or remove a function's secrets (values never shown)", load: () => require("./secrets").secrets },
  profiles: { summary: "list, show or delete the account's browser profiles (saved logins)", load: () => require("./profiles").profiles },
  keys: { summary: "list, create or revoke API keys", load: () => require("./keys").keys },
  usage: { summary: "show this month's usage and the plan's limits", load: () => require("./usage").usage },
  dev: { summary: "run an automation file once locally, without deploying", load: () => require("./dev").dev },
  mcp: { summary: "print the MCP client configuration for this service (Claude Code, Claude Desktop, Cursor, VS Code)", load: () => require("./mcp").mcp },
};
