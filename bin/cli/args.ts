import { parseArgs } from "node:util";

/** A mistake in how the command was called: exit code 2, with the command's usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A failure of the CLI's own work (a file, bundling, a local run) with the exit code to end with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies OptionSpecs;

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Parses a command's arguments strictly: an unknown flag or a missing value is a UsageError. */
export function parseCommandArgs(argv: string[], options: OptionSpecs): ParsedArgs {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { ...GLOBAL_OPTIONS, ...options }, allowPositionals: true, strict: true });
    return { values: values as ParsedArgs["values"], positionals };
  } catch (error) {
    throw new UsageError((error as Error).message.split("\n")[0] ?? "bad arguments");
  }
}

/** The string value of an option (undefined when absent). */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === "string" ? value : undefined;
}

/** A boolean flag. */
export function flag(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/** An integer option within [min, max], or undefined when absent. */
export function intOption(args: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const text = stringOption(args, name);
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not '${text}'`);
  }
  return Number(text);
}

/** Exactly the named positional arguments, in order. */
export function positionals(args: ParsedArgs, names: string[]): string[] {
  const missing = names.slice(args.positionals.length);
  if (missing.length > 0) throw new UsageError(`missing argument <${missing[0]}>`);
  if (args.positionals.length > names.length) throw new UsageError(`unexpected argument '${args.positionals[names.length]}'`);
  return args.positionals;
}

/** Parameters of an invocation from `-p key=value` (strings) or `--data '<JSON object>'`, never both. */
export function invocationParams(args: ParsedArgs): { kind: "query"; params: Record<string, string> } | { kind: "json"; params: Record<string, unknown> | undefined } {
  const pairs = (args.values.param as string[] | undefined) ?? [];
  const data = stringOption(args, "data");
  if (pairs.length > 0 && data !== undefined) throw new UsageError("use either -p key=value or --data JSON, not both");
  if (data !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (error) {
      throw new UsageError(`--data is not JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("--data must be a JSON object of parameters");
    return { kind: "json", params: parsed as Record<string, unknown> };
  }
  if (pairs.length === 0) return { kind: "json", params: undefined };
  const params: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at < 1) throw new UsageError(`-p takes key=value, not '${pair}'`);
    params[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { kind: "query", params };
}

/** The options of commands that take invocation parameters. */
export const PARAM_OPTIONS = {
  param: { type: "string", short: "p", multiple: true },
  data: { type: "string", short: "d" },
} as const satisfies OptionSpecs;
