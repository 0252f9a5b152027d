import { PARAM_OPTIONS, UsageError, flag, intOption, invocationParams, positionals, stringOption } from "../args";
import { readBatchItems } from "../batchItems";
import type { Command } from "../command";
import { followInvocation } from "../followInvocation";
import { duration } from "../output";

export const invoke: Command = {
  summary: "run a deployed function and print its result (waits through 202s)",
  usage: "browserfn invoke <name> [-p key=value …| --data JSON | --batch ITEMS.jsonl] [--version N] [--async | --follow] [--wait SECONDS]",
  options: {
    ...PARAM_OPTIONS,
    version: { type: "string" },
    async: { type: "boolean" },
    follow: { type: "boolean", short: "f" },
    wait: { type: "string" },
    batch: { type: "string" },
  },
  async run({ args, io, out, client }) {
    const [name = ""] = positionals(args, ["name"]);
    const batchFile = stringOption(args, "batch");
    if (batchFile !== undefined) {
      if (args.values.param !== undefined || args.values.data !== undefined) throw new UsageError("--batch takes the parameters from its file: no -p or --data");
      if (flag(args, "async") || flag(args, "follow") || args.values.wait !== undefined) throw new UsageError("--batch answers at once: no --async, --follow or --wait");
      // Every line is checked before anything is sent.
      const items = await readBatchItems(batchFile, io.stdin);
      const version = intOption(args, "version", 1, 999_999_999);
      const accepted = await (await client()).startBatch(name, items, { version });
      if (out.json) out.printJson(accepted);
      else {
        out.line(accepted.batch_id);
        for (const runId of accepted.run_ids) out.line(runId);
        out.note(`batch ${accepted.batch_id} · ${accepted.run_ids.length} run(s) · ${accepted.status_url}`);
      }
      return 0;
    }
    const input = invocationParams(args);
    const version = intOption(args, "version", 1, 999_999_999);
    const waitSeconds = intOption(args, "wait", 1, 86_400);
    const api = await client();
    if (flag(args, "async") && flag(args, "follow")) throw new UsageError("--async and --follow do not go together");
    if (flag(args, "async")) {
      const accepted = await api.startInvocation(name, input.params, { version });
      if (out.json) out.printJson(accepted);
      else out.line(`${accepted.run_id} ${accepted.status} ${accepted.status_url}`);
      return 0;
    }
    if (flag(args, "follow")) {
      // -p values are strings: sent in the query string, the service converts them to the declared types.
      const method = input.kind === "query" ? "GET" : "POST";
      return followInvocation(api, io, out, name, { params: input.params, method, version, waitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000 });
    }
    const spinner = out.spinner(`Running ${name}…`);
    try {
      const outcome = await api.invoke(name, input.params, {
        // -p values are strings: sent in the query string, the service converts them to the declared types.
        method: input.kind === "query" ? "GET" : "POST",
        version,
        timeoutMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
        onAccepted: (accepted) => spinner.update(`Running ${name} (run ${accepted.run_id})…`),
        onPoll: (run) => spinner.update(`Running ${name} (run ${run.run_id}, ${run.status})…`),
      });
      spinner.stop();
      out.printJson(outcome.result);
      if (!out.json) out.note(`run ${outcome.runId} · version ${outcome.version ?? "-"} · ${duration(outcome.durationMs)}`);
      return 0;
    } finally {
      spinner.stop();
    }
  },
};

