import { createRunEndNotifier } from "../../lambdas/runtime/aws/runEnds/notifyRunEnd";
import { RunEndWaiter } from "../../lambdas/runtime/aws/runEnds/runEndWaiter";
import { createWaitQueueSweep } from "../../lambdas/runtime/aws/runEnds/sweepWaitQueues";
import { isWaitQueueUrl, WAIT_QUEUE_IDLE_MS, WAIT_QUEUE_ROTATE_MS, waitQueueName } from "../../lambdas/runtime/aws/runEnds/waitQueueNames";
import { InProcessSqs } from "../helpers/inProcessSqs";

// The wait queues of #23 item 1 (runEnds/): names, rotation, the recorder's check of where it
// sends, and the sweeper's deletes, against the SQS stand-in with the exact calls.

const BASE = "https://sqs.eu-west-1.amazonaws.com/123456789012/";
const PREFIX = `${BASE}bfn-wait-`;
const T0 = Date.parse("2026-11-28T04:00:00Z");

describe("wait queues", () => {
  it("rotates a container's queue after an hour: the old one deleted, a new one made, at a wait with no run watched", async () => {
    const sqs = new InProcessSqs(BASE);
    let now = T0;
    let n = 0;
    const waiter = new RunEndWaiter({ sqs: sqs.client("route"), urlPrefix: PREFIX, tags: { a: "b" }, log: () => undefined, now: () => now, random: () => `0000000${++n}` });
    const first = await waiter.watch("run_a");
    first?.close();
    now += WAIT_QUEUE_ROTATE_MS - 1;
    const same = await waiter.watch("run_b");
    same?.close();
    expect(same?.queueUrl).toBe(first?.queueUrl);
    now += 2;
    const next = await waiter.watch("run_c");
    next?.close();
    expect(next?.queueUrl).not.toBe(first?.queueUrl);
    expect(sqs.calls.map((call) => [call.command, call.input.QueueName ?? call.input.QueueUrl])).toEqual([
      ["CreateQueueCommand", waitQueueName("bfn", T0, "00000001")],
      ["DeleteQueueCommand", first?.queueUrl],
      ["CreateQueueCommand", waitQueueName("bfn", now, "00000002")],
    ]);
  });

  it("hears a notice that came before its wait began, and ends a wait at its deadline with one long poll", async () => {
    const sqs = new InProcessSqs(BASE);
    const waiter = new RunEndWaiter({ sqs: sqs.client("route"), urlPrefix: PREFIX, tags: {}, log: () => undefined });
    const notify = createRunEndNotifier({ sqs: sqs.client("recorder"), urlPrefix: PREFIX, log: () => undefined });
    const early = await waiter.watch("run_early");
    const other = await waiter.watch("run_other");
    if (!early || !other) throw new Error("no queue");
    await notify(early.queueUrl, "run_early");
    // run_other's wait receives run_early's notice: run_early hears it when it asks.
    const waiting = other.ended(Date.now() + 1000);
    await expect(early.ended(Date.now() + 1000)).resolves.toBe("ended");
    await expect(waiting).resolves.toBe("window_over");
    early.close();
    other.close();
    const receives = sqs.callsOf("ReceiveMessageCommand");
    expect(receives.length).toBeGreaterThanOrEqual(1);
    expect(receives.every((call) => Number(call.input.WaitTimeSeconds) <= 1)).toBe(true);
  });

  it("ends a wait whose deadline passed while its long poll was out by its own timer, without spinning", async () => {
    const sqs = new InProcessSqs(BASE);
    let now = T0;
    const waiter = new RunEndWaiter({ sqs: sqs.client("route"), urlPrefix: PREFIX, tags: {}, log: () => undefined, now: () => now });
    const notify = createRunEndNotifier({ sqs: sqs.client("recorder"), urlPrefix: PREFIX, log: () => undefined });
    const watch = await waiter.watch("run_a");
    if (!watch) throw new Error("no queue");
    const waiting = watch.ended(T0 + 300);
    // The waiter's clock is past the deadline when the long poll returns (another run's notice),
    // before the wait's timer ran: the poll loop must stop, not restart at once for ever (it did).
    now = T0 + 1000;
    await notify(watch.queueUrl, "run_other");
    await expect(waiting).resolves.toBe("window_over");
    watch.close();
    expect(sqs.callsOf("ReceiveMessageCommand")).toHaveLength(1);
  });

  it("sends a notice only to a wait queue of the stack", async () => {
    const sqs = new InProcessSqs(BASE);
    const logs: string[] = [];
    const notify = createRunEndNotifier({ sqs: sqs.client("recorder"), urlPrefix: PREFIX, log: (line) => void logs.push(line) });
    for (const url of [`${BASE}bfn-webhooks`, `${BASE}other-wait-mk0abc-12345678`, "https://sqs.eu-west-1.amazonaws.com/999999999999/bfn-wait-mk0abc-12345678", `${BASE}bfn-wait-mk0abc-12345678/../x`]) {
      expect(isWaitQueueUrl(PREFIX, url)).toBe(false);
      await notify(url, "run_1");
    }
    expect(sqs.calls).toEqual([]);
    expect(logs).toHaveLength(4);
    const own = `${BASE}${waitQueueName("bfn", T0, "abcdef12")}`;
    await sqs.client("route").send({ constructor: { name: "CreateQueueCommand" }, input: { QueueName: waitQueueName("bfn", T0, "abcdef12") } });
    await notify(own, "run_1");
    expect(sqs.callsOf("SendMessageCommand")).toEqual([{ by: "recorder", command: "SendMessageCommand", input: { QueueUrl: own, MessageBody: '{"run_id":"run_1"}' } }]);
  });

  it("deletes only the wait queues older than the idle bound", async () => {
    const sqs = new InProcessSqs(BASE);
    const make = (name: string) => sqs.client("route").send({ constructor: { name: "CreateQueueCommand" }, input: { QueueName: name } });
    const old = waitQueueName("bfn", T0, "aaaaaaaa");
    const young = waitQueueName("bfn", T0 + 10 * 60_000, "bbbbbbbb");
    for (const name of [old, young, "bfn-wait-notours", "bfn-webhooks"]) await make(name);
    const sweep = createWaitQueueSweep({ sqs: sqs.client("sweeper"), urlPrefix: PREFIX, now: () => T0 + WAIT_QUEUE_IDLE_MS + 1, log: () => undefined });
    await expect(sweep()).resolves.toBe(1);
    expect(sqs.calls.filter((call) => call.by === "sweeper")).toEqual([
      { by: "sweeper", command: "ListQueuesCommand", input: { QueueNamePrefix: "bfn-wait-", MaxResults: 1000 } },
      { by: "sweeper", command: "DeleteQueueCommand", input: { QueueUrl: `${BASE}${old}` } },
    ]);
    expect([...sqs.queues.keys()].sort()).toEqual([`${BASE}${young}`, `${BASE}bfn-wait-notours`, `${BASE}bfn-webhooks`].sort());
  });
});
