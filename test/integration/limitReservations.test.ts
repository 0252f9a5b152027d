import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { DocumentSender } from "../../lambdas/store/dynamo";
import { LimitStore } from "../../lambdas/store/limitStore";
import { startMemoryStore } from "../helpers/memoryStore";

// LimitStore.reserveInvocations (a batch's items) and admit with `counted` (each of its runs),
// on dynalite: a reservation is one conditional write, all or nothing; a counted admission takes
// a slot and counts nothing.

describe("reserving a batch's invocations", () => {
  it("counts n at once or none, by one conditional write, and a counted run's admission counts nothing", async () => {
    const memory = await startMemoryStore();
    const { store } = memory;
    const now = new Date("2026-11-27T12:00:00.000Z");
    const limits = { concurrency: 2, invocationsPerMonth: 10 };
    try {
      expect(await store.limits.reserveInvocations("acct", 11, 10, now)).toEqual({ reserved: false, used: 0 });
      expect(await store.limits.reserveInvocations("acct", 6, 10, now)).toEqual({ reserved: true });
      expect(await store.limits.reserveInvocations("acct", 5, 10, now)).toEqual({ reserved: false, used: 6 });
      expect(await store.limits.reserveInvocations("acct", 4, 10, now)).toEqual({ reserved: true });
      expect(await store.limits.current("acct", now)).toEqual({ invocations: 10, inFlight: 0 });
      // The quota is used up: an uncounted run is refused, a counted one (reserved) takes a slot.
      expect(await store.limits.admit("acct", "run_a", limits, now.getTime() + 60_000, now)).toMatchObject({ admitted: false, limit: "quota" });
      expect(await store.limits.admit("acct", "run_b", { ...limits, counted: true }, now.getTime() + 60_000, now)).toEqual({ admitted: true });
      expect(await store.limits.admit("acct", "run_c", { ...limits, counted: true }, now.getTime() + 60_000, now)).toEqual({ admitted: true });
      expect(await store.limits.admit("acct", "run_d", { ...limits, counted: true }, now.getTime() + 60_000, now)).toMatchObject({ admitted: false, limit: "concurrency" });
      expect(await store.limits.current("acct", now)).toEqual({ invocations: 10, inFlight: 2 });
      await store.limits.release("acct", "run_b");
      expect(await store.limits.leaseIds("acct")).toEqual(["run_c"]);
      // A new month starts the count again.
      expect(await store.limits.reserveInvocations("acct", 10, 10, new Date("2026-12-01T00:00:00.000Z"))).toEqual({ reserved: true });
      await store.limits.unreserveInvocations("acct", 3);
      expect((await store.limits.current("acct", new Date("2026-12-01T00:00:01.000Z"))).invocations).toBe(7);
    } finally {
      await memory.close();
    }
  });

  it("sends one conditional UpdateItem per reservation once the account's item exists", async () => {
    const memory = await startMemoryStore();
    const sent: unknown[] = [];
    const counting: DocumentSender = {
      send: ((command: { input: unknown }) => {
        if (command instanceof UpdateCommand) sent.push(command.input);
        return memory.doc.send(command as UpdateCommand);
      }) as DocumentSender["send"],
    };
    const limitStore = new LimitStore(counting, memory.table);
    const now = new Date("2026-11-27T12:00:00.000Z");
    try {
      await limitStore.reserveInvocations("acct", 1, 100, now);
      sent.length = 0;
      await limitStore.reserveInvocations("acct", 40, 100, now);
      expect(sent).toEqual([
        {
          TableName: memory.table,
          Key: { pk: "LIMITS#acct", sk: "LIMITS" },
          UpdateExpression: "ADD invocations :n",
          ConditionExpression: "month_key = :month AND invocations <= :room",
          ExpressionAttributeValues: { ":n": 40, ":month": "2026-11", ":room": 60 },
        },
      ]);
    } finally {
      await memory.close();
    }
  });
});
