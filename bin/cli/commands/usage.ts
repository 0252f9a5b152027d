import { positionals, stringOption } from "../args";
import type { Command } from "../command";
import { duration } from "../output";

export const usage: Command = {
  summary: "show the account's usage this month (or --month YYYY-MM) and its plan's limits",
  usage: "browserfn usage [--month YYYY-MM]",
  options: { month: { type: "string" } },
  async run({ args, out, client }) {
    positionals(args, []);
    const month = stringOption(args, "month");
    const u = await (await client()).getUsage(month === undefined ? {} : { month });
    if (out.json) {
      out.printJson(u);
      return 0;
    }
    out.fields([
      ["account", u.account],
      ["month", u.month],
      ["plan", u.plan],
      ["invocations", u.limits ? `${u.total.invocations} of ${u.limits.invocations_per_month}` : u.total.invocations],
      ["execution", duration(u.total.execution_ms)],
      ["GB-seconds", u.total.gb_seconds],
      ["browser sessions", duration(u.total.browser_session_ms)],
      ["concurrency", u.limits ? u.limits.concurrency : null],
      ["remaining", u.remaining ? `${u.remaining.invocations} invocations, ${u.remaining.concurrency} concurrent runs now` : null],
    ]);
    out.line();
    out.table(
      ["FUNCTION", "INVOCATIONS", "EXECUTION", "GB-SECONDS"],
      u.functions.map((f) => [f.name ?? f.function_id, f.invocations, duration(f.execution_ms), f.gb_seconds]),
    );
    return 0;
  },
};
