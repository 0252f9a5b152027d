import { endpointOf, fairTurns } from "../../lambdas/webhooks/fairTurns";
import type { DeliveryItem } from "../../lambdas/webhooks/webhookTypes";

const delivery = (account: string, n: number, url = "https://example.com/hook"): DeliveryItem => ({
  delivery_id: `msg_${account}_${n}`,
  account_id: account,
  function_id: `fn_${account}`,
  run_id: `run_${account}_${n}`,
  event: "run.succeeded",
  url,
  status: "pending",
  attempts: 0,
  last_status_code: null,
  last_error: null,
  next_attempt_at: "2026-01-01T00:00:00.000Z",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});
const backlog = (account: string, count: number) => Array.from({ length: count }, (_, n) => delivery(account, n));
/** Under way: by account only (each on an endpoint of its own). */
const busyAccounts = (entries: [string, number][] = []) => ({ byAccount: new Map(entries), byEndpoint: new Map<string, number>() });
const limits = (slots: number, perAccount: number, perEndpoint = 99) => ({ slots, perAccount, perEndpoint });
const ids = (chosen: DeliveryItem[]) => chosen.map((item) => item.delivery_id);

describe("fairTurns", () => {
  it("takes one per account per round, at most perAccount each and slots in all", () => {
    const due = new Map([
      ["a", backlog("a", 50)],
      ["b", backlog("b", 1)],
      ["c", backlog("c", 3)],
    ]);
    expect(ids(fairTurns(due, busyAccounts(), limits(8, 2), 0))).toEqual(["msg_a_0", "msg_b_0", "msg_c_0", "msg_a_1", "msg_c_1"]);
    expect(ids(fairTurns(due, busyAccounts(), limits(2, 2), 0))).toEqual(["msg_a_0", "msg_b_0"]);
  });

  it("serves the accounts with the fewest under way first: a busy account's backlog never goes before another's delivery", () => {
    const due = new Map([
      ["a", backlog("a", 50)],
      ["b", backlog("b", 1)],
    ]);
    expect(ids(fairTurns(due, busyAccounts([["a", 1]]), limits(1, 2), 0))).toEqual(["msg_b_0"]);
    expect(ids(fairTurns(due, busyAccounts([["a", 2]]), limits(5, 2), 0))).toEqual(["msg_b_0"]);
  });

  it("moves the turn on between calls, so equal accounts take the first slot in turn", () => {
    const due = new Map([
      ["a", backlog("a", 5)],
      ["b", backlog("b", 5)],
      ["c", backlog("c", 5)],
    ]);
    const firsts = [0, 1, 2, 3].map((turn) => fairTurns(due, busyAccounts(), limits(1, 2), turn)[0]?.account_id);
    expect(firsts).toEqual(["a", "b", "c", "a"]);
  });

  it("starts nothing without slots or due deliveries", () => {
    expect(fairTurns(new Map([["a", backlog("a", 3)]]), busyAccounts(), limits(0, 2), 0)).toEqual([]);
    expect(fairTurns(new Map(), busyAccounts(), limits(8, 2), 7)).toEqual([]);
  });

  it("takes an account's endpoints in turn, at most perEndpoint each: a receiver that never answers holds back only its own", () => {
    const hanging = "http://127.0.0.1:4001/hook";
    const fast = "http://127.0.0.1:4002/hook";
    // Each run owes one delivery to each receiver, soonest first: hanging, fast, hanging, fast…
    const due = new Map([["a", Array.from({ length: 6 }, (_, n) => delivery("a", n, n % 2 === 0 ? hanging : fast))]]);
    // Two of the hanging receiver's under way already: only the fast one's are started.
    const underWay = { byAccount: new Map([["a", 2]]), byEndpoint: new Map([[endpointOf({ account_id: "a", url: hanging }), 2]]) };
    expect(ids(fairTurns(due, underWay, limits(8, 4, 2), 0))).toEqual(["msg_a_1", "msg_a_3"]);
    // None under way: the two endpoints alternate, each up to its share.
    expect(ids(fairTurns(due, busyAccounts(), limits(8, 4, 2), 0))).toEqual(["msg_a_0", "msg_a_1", "msg_a_2", "msg_a_3"]);
    // An endpoint is the URL's origin: paths on one receiver share its share.
    const paths = new Map([["a", [delivery("a", 0, `${hanging}/1`), delivery("a", 1, `${hanging}/2`), delivery("a", 2, `${hanging}/3`)]]]);
    expect(ids(fairTurns(paths, busyAccounts(), limits(8, 4, 2), 0))).toEqual(["msg_a_0", "msg_a_1"]);
    // The same origin of two accounts is two endpoints.
    const shared = new Map([
      ["a", [delivery("a", 0, hanging), delivery("a", 1, hanging)]],
      ["b", [delivery("b", 0, hanging)]],
    ]);
    expect(ids(fairTurns(shared, busyAccounts(), limits(8, 4, 1), 0))).toEqual(["msg_a_0", "msg_b_0"]);
  });
});
