import { fairTurns } from "../../lambdas/webhooks/fairTurns";
import type { DeliveryItem } from "../../lambdas/webhooks/webhookTypes";

const delivery = (account: string, n: number): DeliveryItem => ({
  delivery_id: `msg_${account}_${n}`,
  account_id: account,
  function_id: `fn_${account}`,
  run_id: `run_${account}_${n}`,
  event: "run.succeeded",
  url: "https://example.com/hook",
  status: "pending",
  attempts: 0,
  last_status_code: null,
  last_error: null,
  next_attempt_at: "2026-01-01T00:00:00.000Z",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});
const backlog = (account: string, count: number) => Array.from({ length: count }, (_, n) => delivery(account, n));
const ids = (chosen: DeliveryItem[]) => chosen.map((item) => item.delivery_id);

describe("fairTurns", () => {
  it("takes one per account per round, at most perAccount each and slots in all", () => {
    const due = new Map([
      ["a", backlog("a", 50)],
      ["b", backlog("b", 1)],
      ["c", backlog("c", 3)],
    ]);
    expect(ids(fairTurns(due, new Map(), { slots: 8, perAccount: 2 }, 0))).toEqual(["msg_a_0", "msg_b_0", "msg_c_0", "msg_a_1", "msg_c_1"]);
    expect(ids(fairTurns(due, new Map(), { slots: 2, perAccount: 2 }, 0))).toEqual(["msg_a_0", "msg_b_0"]);
  });

  it("serves the accounts with the fewest under way first: a busy account's backlog never goes before another's delivery", () => {
    const due = new Map([
      ["a", backlog("a", 50)],
      ["b", backlog("b", 1)],
    ]);
    expect(ids(fairTurns(due, new Map([["a", 1]]), { slots: 1, perAccount: 2 }, 0))).toEqual(["msg_b_0"]);
    expect(ids(fairTurns(due, new Map([["a", 2]]), { slots: 5, perAccount: 2 }, 0))).toEqual(["msg_b_0"]);
  });

  it("moves the turn on between calls, so equal accounts take the first slot in turn", () => {
    const due = new Map([
      ["a", backlog("a", 5)],
      ["b", backlog("b", 5)],
      ["c", backlog("c", 5)],
    ]);
    const firsts = [0, 1, 2, 3].map((turn) => fairTurns(due, new Map(), { slots: 1, perAccount: 2 }, turn)[0]?.account_id);
    expect(firsts).toEqual(["a", "b", "c", "a"]);
  });

  it("starts nothing without slots or due deliveries", () => {
    expect(fairTurns(new Map([["a", backlog("a", 3)]]), new Map(), { slots: 0, perAccount: 2 }, 0)).toEqual([]);
    expect(fairTurns(new Map(), new Map(), { slots: 8, perAccount: 2 }, 7)).toEqual([]);
  });
});
