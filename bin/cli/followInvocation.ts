import { type BrowserfnClient, WaitTimeoutError, createError } from "../../client";
import type { Io, Output } from "./output";
import { duration } from "./output";

/**
 * `invoke --follow`: starts the run without waiting (`Prefer: respond-async`), then follows its
 * events (`GET /runs/{id}/events`): the console output goes to stderr as it is written, the
 * result to stdout once the run succeeded; a failed run throws its error (exit code 1).
 * Interrupted (Ctrl-C), it stops following; the run goes on.
 */
export async function followInvocation(
  api: BrowserfnClient,
  io: Io,
  out: Output,
  name: string,
  input: { params: Record<string, unknown> | undefined; method: "GET" | "POST"; version: number | undefined; waitMs: number | undefined },
): Promise<number> {
  const accepted = await api.startInvocation(name, input.params, { version: input.version, method: input.method });
  out.note(`Running ${name} (run ${accepted.run_id})…`);
  const stop = new AbortController();
  const interrupt = () => stop.abort("interrupted");
  process.once("SIGINT", interrupt);
  const timer = input.waitMs === undefined ? undefined : setTimeout(() => stop.abort("wait"), input.waitMs);
  let loggedLast = "\n";
  try {
    for await (const event of api.runEvents(accepted.run_id, { signal: stop.signal })) {
      if (event.event === "log") {
        io.stderr.write(event.data.text);
        loggedLast = event.data.text.slice(-1) || loggedLast;
      }
      if (event.event !== "result" && event.event !== "error") continue;
      if (loggedLast !== "\n") io.stderr.write("\n");
      if (event.event === "error") {
        const { code, message } = event.data.error;
        throw createError({ status: code === "function_timeout" ? 504 : 500, code, message, details: { run_id: accepted.run_id, status: event.data.status } });
      }
      // A result too large for an event is read from the run.
      out.printJson(event.data.result_omitted ? (await api.getRun(accepted.run_id)).result : event.data.result);
      if (!out.json) out.note(`run ${accepted.run_id} · ${event.data.status} · ${duration(event.data.duration_ms)}`);
      return 0;
    }
    const message = `Stopped following run ${accepted.run_id}; it goes on (browserfn runs get ${accepted.run_id} has its result later)`;
    if (stop.signal.reason === "wait") throw new WaitTimeoutError({ status: 0, code: "wait_timeout", message, details: { run_id: accepted.run_id }, runId: accepted.run_id });
    out.note(message);
    return 130;
  } finally {
    clearTimeout(timer);
    process.off("SIGINT", interrupt);
  }
}
