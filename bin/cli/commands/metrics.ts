import { positionals } from "../args";
import type { Command } from "../command";
import { duration, shortTime } from "../output";

export const metrics: Command = {
  summary: "show a function's call counts, success rate and durations",
  usage: "browserfn metrics <name>",
  options: {},
  async run({ args, out, client }) {
    const [name = ""] = positionals(args, ["name"]);
    const m = await (await client()).getMetrics(name);
    if (out.json) {
      out.printJson(m);
      return 0;
    }
    out.fields([
      ["calls", m.total_calls],
      ["succeeded", m.succeeded_calls],
      ["failed", m.failed_calls],
      ["timed out", m.timed_out_calls],
      ["success rate", `${m.success_rate}%`],
      ["mean duration", duration(m.avg_duration)],
      ["p50 duration", duration(m.p50_duration)],
      ["p95 duration", duration(m.p95_duration)],
      ["skipped scheduled runs", m.skipped_scheduled_runs],
      ["last called", shortTime(m.last_called_at)],
    ]);
    return 0;
  },
};
