import type { FunctionListItem } from "../../../client";
import type { Command } from "../command";
import { positionals } from "../args";
import { shortTime } from "../output";

export const list: Command = {
  summary: "list the account's functions",
  usage: "browserfn list",
  options: {},
  async run({ args, out, client }) {
    positionals(args, []);
    const api = await client();
    const items: FunctionListItem[] = [];
    for await (const item of api.allFunctions()) items.push(item);
    if (out.json) {
      out.printJson({ items });
      return 0;
    }
    out.table(
      ["NAME", "VERSION", "STATUS", "SCHEDULE", "SHARED", "UPDATED", "URL"],
      items.map((fn) => [fn.name, fn.latest_version, fn.status, fn.schedule, fn.shared ? "yes" : "no", shortTime(fn.updated_at), fn.url]),
    );
    return 0;
  },
};
