import { UsageError, flag, positionals } from "../args";
import type { Command } from "../command";
import { ask } from "../prompt";

export const remove: Command = {
  summary: "delete a function, its schedule, versions and runs (asks first unless --yes)",
  usage: "browserfn delete <name> [--yes]",
  options: { yes: { type: "boolean", short: "y" } },
  async run({ args, io, out, client }) {
    const [name = ""] = positionals(args, ["name"]);
    if (!flag(args, "yes")) {
      if (!io.stdin.isTTY) throw new UsageError("refusing to delete without --yes: stdin is not a terminal to confirm on");
      const answer = await ask(io, `Delete function '${name}' with all its versions and runs? [y/N] `);
      if (!/^y(es)?$/i.test(answer)) {
        out.note("Not deleted.");
        return 0;
      }
    }
    await (await client()).deleteFunction(name);
    if (out.json) out.printJson({ deleted: name });
    else out.note(`Deleted ${name}`);
    return 0;
  },
};
