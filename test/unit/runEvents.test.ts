import { MAX_EVENT_RESULT_CHARS, START, nextEvents, parseEventId } from "../../lambdas/runs/runEvents";
import { functionItem, runItem } from "../helpers/records";

const fn = functionItem();
const ids = (result: ReturnType<typeof nextEvents>) => result.events.map((event) => event.id);

describe("a run's events", () => {
  it("come from the live text while the run goes on, and from the final record once it ended", () => {
    const queued = runItem(fn, { status: "queued", started_at: null });
    expect(ids(nextEvents(queued, null, START))).toEqual(["status:queued"]);
    // Output before the record's running mark: the run has started all the same.
    const live = nextEvents(queued, "LOG a\n", { phase: "queued", logOffset: 0 });
    expect(live.events.map((e) => [e.id, e.data])).toEqual([
      ["status:running", { status: "running", at: null }],
      ["log:6", { text: "LOG a\n" }],
    ]);
    expect(live.cursor).toEqual({ phase: "running", logOffset: 6 });
    // The record of a run still going has no text of its own: nothing more without the live one.
    expect(ids(nextEvents(runItem(fn), null, live.cursor))).toEqual([]);
    const ended = runItem(fn, { status: "timed_out", logs: "LOG a\nLOG b\n", error: { code: "function_timeout", message: "too slow" }, finished_at: "2026-01-01T00:00:09.000Z" });
    const end = nextEvents(ended, null, live.cursor);
    expect(end.events.map((e) => [e.id, e.data])).toEqual([
      ["log:12", { text: "LOG b\n" }],
      ["status:timed_out", { status: "timed_out", at: "2026-01-01T00:00:09.000Z" }],
      ["error", { run_id: ended.run_id, status: "timed_out", error: { code: "function_timeout", message: "too slow" }, duration_ms: null, finished_at: ended.finished_at }],
    ]);
    expect(end.cursor.phase).toBe("end");
    expect(nextEvents(ended, null, end.cursor).events).toEqual([]);
  });

  it("skip the running status of a run that never started, and leave a huge result to GET /runs/{id}", () => {
    const crashed = runItem(fn, { status: "failed", started_at: null, error: { code: "function_crashed", message: "no worker" }, finished_at: "2026-01-01T00:00:01.000Z" });
    expect(ids(nextEvents(crashed, null, START))).toEqual(["status:queued", "status:failed", "error"]);
    const huge = runItem(fn, { status: "succeeded", result_json: JSON.stringify("x".repeat(MAX_EVENT_RESULT_CHARS)), finished_at: "2026-01-01T00:00:01.000Z" });
    expect(nextEvents(huge, null, { phase: "final", logOffset: 0 }).events[0]?.data).toMatchObject({ result_omitted: true });
    expect(nextEvents(huge, null, { phase: "final", logOffset: 0 }).events[0]?.data).not.toHaveProperty("result");
  });

  it("name their cursor in their ids, and nothing else parses", () => {
    expect(parseEventId("log:42")).toEqual({ phase: "running", logOffset: 42 });
    expect(parseEventId("status:succeeded")).toEqual({ phase: "final", logOffset: 0 });
    expect(parseEventId("error")).toEqual({ phase: "end", logOffset: 0 });
    for (const bad of ["log:", "log:-1", "log:1e3", "log:9999999999", "status:paused", "status:queued ", "RESULT"]) expect(parseEventId(bad)).toBeNull();
  });
});
