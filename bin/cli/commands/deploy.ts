import path from "node:path";
import { ConflictError, type CreateFunctionInput, type FunctionRecord } from "../../../client";
import { UsageError, flag, intOption, positionals, stringOption } from "../args";
import type { Command } from "../command";
import { prepareCode } from "../prepareCode";
import { EXIT } from "../exitCodes";
import { noteWarnings, printRecord } from "../printRecord";

export const deploy: Command = {
  summary: "bundle an automation file and create or update the function",
  usage: "browserfn deploy <file.ts> [--name NAME] [--description TEXT] [--schedule CRON|none] [--tz ZONE] [--memory MB] [--timeout SECONDS] [--retries ATTEMPTS[,BACKOFF_SECONDS]|none] [--shared]",
  options: {
    name: { type: "string", short: "n" },
    description: { type: "string" },
    schedule: { type: "string" },
    tz: { type: "string" },
    memory: { type: "string" },
    timeout: { type: "string" },
    retries: { type: "string" },
    shared: { type: "boolean" },
  },
  async run({ args, out, client }) {
    const [file = ""] = positionals(args, ["file.ts"]);
    const name = stringOption(args, "name") ?? path.basename(file).replace(/\.[cm]?[jt]s$/, "");
    if (!/^[a-z][a-z0-9-]{0,62}$/.test(name)) {
      throw new UsageError(`'${name}' is not a function name (^[a-z][a-z0-9-]{0,62}$); pass --name`);
    }
    const schedule = stringOption(args, "schedule");
    const settings: Omit<CreateFunctionInput, "name" | "code"> = {
      description: stringOption(args, "description"),
      schedule: schedule === "none" ? null : schedule,
      schedule_timezone: stringOption(args, "tz"),
      memory_mb: intOption(args, "memory", 128, 10240),
      timeout_seconds: intOption(args, "timeout", 1, 900),
      shared: flag(args, "shared") ? true : undefined,
      retries: retriesOption(stringOption(args, "retries")),
    };
    const { code } = await prepareCode(file, out);
    const api = await client();
    let record: FunctionRecord;
    try {
      out.note(`Creating ${name}…`);
      record = await api.createFunction({ name, code, ...settings });
      out.note(`Created ${name}, version ${record.latest_version}`);
    } catch (error) {
      if (!(error instanceof ConflictError && error.code === "function_exists")) throw error;
      out.note(`${name} exists; updating it…`);
      record = await api.updateFunction(name, { code, ...settings });
      out.note(`Updated ${name}, now at version ${record.latest_version}`);
    }
    // The answer's warnings are about the code just sent: a record read afterwards without them (a service that does not keep them) keeps these.
    const warnings = record.warnings ?? [];
    if (record.status === "deploying") {
      // On AWS a deploy job provisions the function's Lambda after the answer.
      out.note(`Waiting for ${name} to be deployed…`);
      const deployed = await api.waitUntilDeployed(name);
      record = deployed.warnings === undefined ? { ...deployed, warnings } : deployed;
    }
    noteWarnings(out, record);
    if (out.json) out.printJson(record);
    else printRecord(out, record, false);
    if (record.status === "failed") out.note(`The deploy failed: ${record.status_reason ?? "no reason given"}; fix it and deploy again`);
    return record.status === "failed" ? EXIT.api : EXIT.ok;
  },
};

/** `--retries 3` or `--retries 3,30` (attempts in all, then the first backoff in seconds); `none` removes the setting. */
export function retriesOption(text: string | undefined): CreateFunctionInput["retries"] {
  if (text === undefined) return undefined;
  if (text === "none") return null;
  const match = /^(\d+)(?:,(\d+))?$/.exec(text);
  const attempts = Number(match?.[1]);
  const backoff = match?.[2] === undefined ? undefined : Number(match[2]);
  if (!match || attempts < 1 || attempts > 10 || (backoff !== undefined && (backoff < 1 || backoff > 3600))) {
    throw new UsageError(`--retries must be ATTEMPTS (1 to 10) or ATTEMPTS,BACKOFF_SECONDS (backoff 1 to 3600), or none; not '${text}'`);
  }
  return backoff === undefined ? { max_attempts: attempts } : { max_attempts: attempts, backoff_seconds: backoff };
}
