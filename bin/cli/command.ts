import { BrowserfnClient } from "../../client";
import type { OptionSpecs, ParsedArgs } from "./args";
import { resolveConnection } from "./config";
import { httpFetch } from "./httpFetch";
import type { Io, Output } from "./output";

/** What a command gets: its parsed arguments, where to write, and the API client. */
export interface CommandContext {
  io: Io;
  out: Output;
  args: ParsedArgs;
  /** The client for the configured service (a CliError with exit code 2 when not logged in). */
  client(): Promise<BrowserfnClient>;
}

/** One `browserfn <command>`. `run` resolves with the exit code. */
export interface Command {
  /** One line for `browserfn help`. */
  summary: string;
  /** The argument synopsis, e.g. `<name> [--limit N] [--follow]`. */
  usage: string;
  options: OptionSpecs;
  run(ctx: CommandContext): Promise<number>;
}

/** The client of the configured service; requests are marked as coming from the CLI, and sent over node:http (httpFetch). */
export async function connect(env: NodeJS.ProcessEnv): Promise<BrowserfnClient> {
  const { url, apiKey } = await resolveConnection(env);
  return new BrowserfnClient({ baseUrl: url, apiKey, fetch: httpFetch, headers: { "x-service-request-origin": "browserfn-cli" } });
}
