import { positionals } from "../args";
import type { Command } from "../command";
import { printRecord } from "../printRecord";

export const info: Command = {
  summary: "show one function (by name, or a shared function by function_id)",
  usage: "browserfn info <name|function_id>",
  options: {},
  async run({ args, out, client }) {
    const [ref = ""] = positionals(args, ["name"]);
    const record = await (await client()).getFunction(ref);
    if (out.json) out.printJson(record);
    else printRecord(out, record);
    return 0;
  },
};
