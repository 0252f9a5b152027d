import { positionals, stringOption } from "../args";
import type { Command } from "../command";
import { printRecord } from "../printRecord";

export const fork: Command = {
  summary: "copy a shared function into your account",
  usage: "browserfn fork <function_id> [--name NAME]",
  options: { name: { type: "string", short: "n" } },
  async run({ args, out, client }) {
    const [functionId = ""] = positionals(args, ["function_id"]);
    const name = stringOption(args, "name");
    const record = await (await client()).forkFunction(functionId, name === undefined ? {} : { name });
    if (out.json) out.printJson(record);
    else {
      out.note(`Forked ${functionId} as ${record.name}`);
      printRecord(out, record);
    }
    return 0;
  },
};
