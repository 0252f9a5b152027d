import { buildRecorderSource } from "../../lambdas/recording/recorderBuild";
import { patchRrweb } from "../../lambdas/recording/recorderPatches";

// The recorder each recorded page compiles: rrweb's `record` from the pinned build, patched
// (lambdas/recording/recorderPatches.ts) so that it costs a page what recording needs and no more.
describe("the recorder's script", () => {
  const source = buildRecorderSource();

  it("leaves out what only the replay uses (postcss, the Replayer) and stays small", () => {
    expect(source).not.toMatch(/postcss/i);
    expect(source).not.toContain("Replayer");
    expect(source.length).toBeLessThan(100_000);
  });

  it("never throws and catches per element, nor appends an iframe to find prototypes", () => {
    expect(source).toContain("customElements?.get(");
    expect(source).not.toContain("__rrwebUntaintedMutationObserver");
  });

  it("refuses an rrweb build its patches do not match (an upgrade is checked, not quietly slower)", () => {
    expect(() => patchRrweb("export { record };")).toThrow(/does not match the recorder's patch/);
  });
});
