import { notifyOfExecutionInput } from "../../lambdas/runtime/aws/runEnds/executionNotify";

// The sweeper reads the waiting route's queue from a status-change event's `input` (the run
// starter's JSON text), its head only: run_id, then notify.

const QUEUE = "https://sqs.eu-west-1.amazonaws.com/123456789012/bfn-wait-mk0abc-0a1b2c3d";
const RUN = "run_01jf0000000000000000000000";
const input = (fields: Record<string, unknown>) => JSON.stringify({ run_id: RUN, notify: QUEUE, function: "bfn-fn_x:v1", event: { params: {} }, ...fields });

describe("notifyOfExecutionInput", () => {
  it("reads the queue an execution's input names for its run", () => {
    expect(notifyOfExecutionInput(input({}), RUN)).toBe(QUEUE);
    expect(notifyOfExecutionInput(input({ notify: null }), RUN)).toBeNull();
  });

  it("reads nothing from an input that is not the run starter's, of another run, or too large", () => {
    expect(notifyOfExecutionInput(input({}), "run_other")).toBeNull();
    expect(notifyOfExecutionInput(undefined, RUN)).toBeNull();
    expect(notifyOfExecutionInput({ run_id: RUN, notify: QUEUE }, RUN)).toBeNull();
    expect(notifyOfExecutionInput(JSON.stringify({ notify: QUEUE, run_id: RUN }), RUN)).toBeNull();
    expect(notifyOfExecutionInput(input({ event: { params: { pad: "x".repeat(256 * 1024) } } }), RUN)).toBeNull();
  });

  it("never takes a queue from the run's parameters", () => {
    const spoof = JSON.stringify({ run_id: RUN, notify: null, event: { params: { x: `","notify":"${QUEUE}"` } } });
    expect(notifyOfExecutionInput(spoof, RUN)).toBeNull();
    const nested = `{"run_id":"${RUN}","notify":"${QUEUE}\\"}`;
    expect(notifyOfExecutionInput(nested, RUN)).toBeNull();
  });
});
