import { UsageError, intOption, positionals, stringOption } from "../args";
import type { Command } from "../command";
import { duration, printableLine, shortTime } from "../output";
import { printRun } from "../printRun";
import { type SavedArtifact, saveArtifacts } from "../saveArtifacts";

export const runs: Command = {
  summary: "show one run (`runs get <run_id> [--artifacts DIR]`) or a function's latest runs (`runs list <name>`)",
  usage: "browserfn runs get <run_id> [--artifacts DIR] | runs list <name> [--limit N]",
  options: { artifacts: { type: "string" }, limit: { type: "string", short: "n" } },
  async run({ args, out, client }) {
    const [action = "", ...rest] = args.positionals;
    const dir = stringOption(args, "artifacts");
    if (action === "get") {
      const [runId = ""] = positionals({ ...args, positionals: rest }, ["run_id"]);
      if (stringOption(args, "limit") !== undefined) throw new UsageError("--limit is for `runs list`");
      if (dir === "") throw new UsageError("--artifacts needs a directory");
      const api = await client();
      const run = await api.getRun(runId);
      let saved: SavedArtifact[] | undefined;
      if (dir !== undefined) {
        saved = await saveArtifacts(api, run.run_id, dir, (artifact) => {
          if (!out.json) out.note(`Saved ${artifact.path} (${artifact.bytes} bytes, ${artifact.content_type})`);
        });
      }
      if (out.json) {
        out.printJson(saved === undefined ? run : { run, artifacts: saved });
        return 0;
      }
      printRun(out, run);
      // Without --artifacts, what the run kept is listed (not downloaded): the hint says how to save it.
      const listed = saved ?? (await api.listArtifacts(run.run_id)).items;
      out.line(saved === undefined ? "\nartifacts:" : `\nartifacts (saved to ${dir}):`);
      out.table(["NAME", "TYPE", "BYTES", "CREATED"], listed.map((a) => [a.name, a.content_type, a.bytes, shortTime(a.created_at)]));
      if (saved === undefined && listed.length > 0) out.note(`Save them with: browserfn runs get ${run.run_id} --artifacts DIR`);
      return 0;
    }
    if (action === "list") {
      const [name = ""] = positionals({ ...args, positionals: rest }, ["name"]);
      if (dir !== undefined) throw new UsageError("--artifacts is for `runs get`");
      const list = await (await client()).getLogs(name, { limit: intOption(args, "limit", 1, 1000) });
      if (out.json) {
        out.printJson(list);
        return 0;
      }
      out.table(
        ["RUN", "STATUS", "STARTED", "DURATION", "VERSION", "TRIGGER", "ERROR"],
        list.items.map((e) => [e.run_id, e.status, shortTime(e.timestamp), duration(e.duration), e.version, e.trigger, e.error ? printableLine(`${e.error.code}: ${e.error.message}`) : null]),
      );
      return 0;
    }
    throw new UsageError(action === "" ? "missing action: runs get <run_id> or runs list <name>" : `unknown runs action '${action}' (get, list)`);
  },
};
