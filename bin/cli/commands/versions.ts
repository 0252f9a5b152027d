import { positionals } from "../args";
import type { Command } from "../command";
import { shortTime } from "../output";

export const versions: Command = {
  summary: "list a function's versions, oldest first",
  usage: "browserfn versions <name>",
  options: {},
  async run({ args, out, client }) {
    const [name = ""] = positionals(args, ["name"]);
    const list = await (await client()).listVersions(name);
    if (out.json) {
      out.printJson(list);
      return 0;
    }
    out.table(
      ["VERSION", "CREATED", "SHA256", "PARAMETERS"],
      list.items.map((v) => [v.version, shortTime(v.created_at), v.code_sha256.slice(0, 12), v.variables.map((p) => `${p.name}: ${p.type}`).join(", ")]),
    );
    return 0;
  },
};
