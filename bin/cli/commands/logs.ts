import type { LogEntry } from "../../../client";
import { flag, intOption, positionals } from "../args";
import type { Command } from "../command";
import { RunFollower } from "../followRuns";
import { type Output, duration, printableLine, shortTime } from "../output";

const COLUMNS = ["TIME", "STATUS", "DURATION", "RUN", "VERSION", "TRIGGER", "ERROR"];
const FOLLOW_INTERVAL_MS = 2000;
/** Entries read per look while following: more runs than this ending between two looks are missed. */
const FOLLOW_PAGE = 100;
/** The API's default page. */
const DEFAULT_LIMIT = 50;

function row(entry: LogEntry): (string | null)[] {
  return [
    shortTime(entry.timestamp),
    entry.status,
    duration(entry.duration),
    entry.run_id,
    entry.version,
    entry.trigger,
    entry.error ? printableLine(`${entry.error.code}: ${entry.error.message}`) : null,
  ];
}

function print(out: Output, entries: LogEntry[], header: boolean): void {
  if (out.json) for (const entry of entries) out.printJson(entry);
  else if (header) out.table(COLUMNS, entries.map(row));
  else for (const entry of entries) out.line(row(entry).map((cell) => cell ?? "-").join("  "));
}

export const logs: Command = {
  summary: "show a function's latest runs (--follow to keep watching)",
  usage: "browserfn logs <name> [--limit N] [--follow]",
  options: { limit: { type: "string", short: "n" }, follow: { type: "boolean", short: "f" } },
  async run({ args, out, client }) {
    const [name = ""] = positionals(args, ["name"]);
    const limit = intOption(args, "limit", 1, 1000);
    const api = await client();
    if (!flag(args, "follow")) {
      const list = await api.getLogs(name, { limit });
      if (out.json) out.printJson(list);
      else print(out, list.items, true);
      return 0;
    }
    // Following: the latest `limit` runs that have ended, oldest first; then each run once, when it ends.
    const first = (await api.getLogs(name, { limit: Math.max(limit ?? DEFAULT_LIMIT, FOLLOW_PAGE) })).items;
    const follower = new RunFollower(first);
    print(out, first.slice(0, limit ?? DEFAULT_LIMIT).filter((e) => e.status !== "queued" && e.status !== "running").reverse(), true);
    const stop = new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
    let stopped = false;
    void stop.then(() => (stopped = true));
    while (!stopped) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stop, new Promise((resolve) => (timer = setTimeout(resolve, FOLLOW_INTERVAL_MS)))]);
      clearTimeout(timer);
      if (stopped) break;
      print(out, follower.next((await api.getLogs(name, { limit: FOLLOW_PAGE })).items), false);
    }
    return 0;
  },
};
