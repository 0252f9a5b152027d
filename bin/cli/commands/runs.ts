import { UsageError, intOption, positionals, stringOption } from "../args";
import type { RunListItem, RunStatus } from "../../../client";
import type { Command } from "../command";
import { duration, printableLine, shortTime } from "../output";
import { printRun } from "../printRun";
import { type SavedArtifact, saveArtifacts } from "../saveArtifacts";
import { writeReplay } from "../writeReplay";

export const runs: Command = {
  summary: "show one run (`runs get <run_id>`), list the account's runs (`runs list`), cancel one (`runs cancel <run_id>`), or write its recording with a player (`runs replay <run_id>`)",
  usage:
    "browserfn runs get <run_id> [--artifacts DIR] | runs list [<name>] [--function F] [--status S] [--trigger T] [--limit N] [--cursor C] | runs cancel <run_id> | runs replay <run_id> [--out DIR]",
  options: {
    artifacts: { type: "string" },
    out: { type: "string", short: "o" },
    limit: { type: "string", short: "n" },
    function: { type: "string" },
    status: { type: "string" },
    trigger: { type: "string" },
    cursor: { type: "string" },
  },
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
      if (dir !== undefined) throw new UsageError("--artifacts is for `runs get`");
      const [name] = rest;
      if (rest.length > 1) throw new UsageError(`unexpected argument '${rest[1]}'`);
      if (name !== undefined && stringOption(args, "function") !== undefined) throw new UsageError("give the function once: <name> or --function");
      // The service checks the filters (400 invalid_request names a bad status or trigger).
      const query = {
        function: name ?? stringOption(args, "function"),
        status: stringOption(args, "status") as RunStatus | undefined,
        trigger: stringOption(args, "trigger") as RunListItem["trigger"] | undefined,
        limit: intOption(args, "limit", 1, 100),
        cursor: stringOption(args, "cursor"),
      };
      const list = await (await client()).listRuns(query);
      if (out.json) {
        out.printJson(list);
        return 0;
      }
      out.table(
        ["RUN", "FUNCTION", "STATUS", "STARTED", "DURATION", "VERSION", "TRIGGER", "ERROR"],
        list.items.map((r) => [
          r.run_id,
          r.function_name,
          r.status,
          shortTime(r.started_at ?? r.queued_at),
          duration(r.duration_ms),
          r.version,
          r.trigger,
          r.error ? printableLine(`${r.error.code}: ${r.error.message}`) : null,
        ]),
      );
      if (list.next_cursor) out.note(`More: browserfn runs list --cursor ${list.next_cursor} (with the same filters)`);
      return 0;
    }
    if (action === "replay") {
      const [runId = ""] = positionals({ ...args, positionals: rest }, ["run_id"]);
      const outDir = stringOption(args, "out") ?? `replay-${runId}`;
      if (outDir === "") throw new UsageError("--out needs a directory");
      const written = await writeReplay(await client(), runId, outDir);
      if (out.json) {
        out.printJson(written);
        return 0;
      }
      for (const page of written.pages) out.note(`Wrote ${page.recording} (${page.events} events) and ${page.player}`);
      // The folder, alone on stdout: what a script reads.
      out.line(written.dir);
      return 0;
    }
    if (action === "cancel") {
      const [runId = ""] = positionals({ ...args, positionals: rest }, ["run_id"]);
      const run = await (await client()).cancelRun(runId);
      if (out.json) {
        out.printJson(run);
        return 0;
      }
      printRun(out, run);
      return 0;
    }
    throw new UsageError(action === "" ? "missing action: runs get <run_id>, runs list, runs cancel <run_id> or runs replay <run_id>" : `unknown runs action '${action}' (get, list, cancel, replay)`);
  },
};
