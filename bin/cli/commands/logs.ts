import type { LogEntry } from "../../../client";
import { flag, intOption, positionals } from "../args";
import type { Command } from "../command";
import { type Output, duration, shortTime } from "../output";

const COLUMNS = ["TIME", "STATUS", "DURATION", "RUN", "VERSION", "TRIGGER", "ERROR"];
const FOLLOW_INTERVAL_MS = 2000;

function row(entry: LogEntry): (string | null)[] {
  return [
    shortTime(entry.timestamp),
    entry.status,
    duration(entry.duration),
    entry.run_id,
    entry.version,
    entry.trigger,
    entry.error ? `${entry.error.code}: ${entry.error.message}` : null,
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
    const first = await api.getLogs(name, { limit });
    if (!flag(args, "follow")) {
      if (out.json) out.printJson(first);
      else print(out, first.items, true);
      return 0;
    }
    // Following: oldest first, then each run once it has ended (a run still going is shown when it ends).
    const shown = new Set<string>();
    const show = (entries: LogEntry[], header: boolean) => {
      const fresh = entries.filter((e) => !shown.has(e.run_id) && e.status !== "queued" && e.status !== "running").reverse();
      for (const e of fresh) shown.add(e.run_id);
      print(out, fresh, header);
    };
    show(first.items, true);
    const stop = new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
    let stopped = false;
    void stop.then(() => (stopped = true));
    while (!stopped) {
      await Promise.race([stop, new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS))]);
      if (stopped) break;
      show((await api.getLogs(name, { limit: 100 })).items, false);
    }
    return 0;
  },
};
