import { FairQueue } from "../../lambdas/code/analysis/fairQueue";

describe("FairQueue (deploys waiting for an analysis worker)", () => {
  it("serves accounts in turns, each account's items oldest first", () => {
    const queue = new FairQueue<string>();
    for (const item of ["a1", "a2", "a3"]) queue.push("a", item);
    queue.push("b", "b1");
    queue.push("c", "c1");
    queue.push("b", "b2");
    const all = () => true;
    expect([1, 2, 3, 4, 5, 6].map(() => queue.take(all))).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
    expect(queue.take(all)).toBeUndefined();
    expect(queue.size).toBe(0);
  });

  it("skips accounts that may not take now, keeping their place and items", () => {
    const queue = new FairQueue<string>();
    queue.push("busy", "x1");
    queue.push("busy", "x2");
    queue.push("free", "y1");
    expect(queue.accounts((account) => account !== "busy")).toBe(1);
    expect(queue.take((account) => account !== "busy")).toBe("y1");
    expect(queue.take((account) => account !== "busy")).toBeUndefined();
    expect(queue.size).toBe(2);
    expect(queue.drain()).toEqual(["x1", "x2"]);
    expect(queue.size).toBe(0);
  });
});
