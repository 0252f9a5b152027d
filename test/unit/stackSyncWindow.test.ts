import { MAX_SYNC_WAIT_SECONDS } from "../../lib/stackSettings";
import { synthStack } from "../helpers/testStack";

// #23.13: the sync window leaves API Gateway's 30 s measured headroom (docs/deploy.md, "Sync
// window headroom"): at most 27 s, counted from API Gateway's receipt of the request.

describe("the stack's sync window", () => {
  it("refuses a window that leaves API Gateway less than 3 s for the answer", () => {
    expect(MAX_SYNC_WAIT_SECONDS).toBe(27);
    expect(() => synthStack({ syncWaitSeconds: 28 })).toThrow(/syncWaitSeconds/);
    expect(() => synthStack({}, { syncWaitSeconds: "27.5" })).toThrow(/syncWaitSeconds/);
  });

  it("takes 27 s and hands it to the route Lambdas", () => {
    const template = synthStack({ syncWaitSeconds: 27 });
    const functions = Object.values(template.findResources("AWS::Lambda::Function")) as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }[];
    const windows = new Set(functions.flatMap(({ Properties }) => Object.entries(Properties.Environment?.Variables ?? {}).filter(([name]) => /SYNC_WAIT/.test(name)).map(([, value]) => value)));
    expect([...windows]).toEqual(["27"]);
  });
});
