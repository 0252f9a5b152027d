import { buildRecorderSource } from "../../lambdas/recording/recorderBuild";
import { patchRrweb } from "../../lambdas/recording/recorderPatches";

// The recorder each recorded page compiles: rrweb's `record` from the pinned build, patched
// (lambdas/recording/recorderPatches.ts) so that it costs a page what recording needs and no more.
describe("the recorder's script", () => {
  const source = buildRecorderSource();

  it("leaves out what only the replay uses (postcss, the Replayer) and stays small", () => {
    expect(source.rrweb).not.toMatch(/postcss/i);
    expect(source.rrweb).not.toContain("Replayer");
    expect(source.rrweb.length).toBeLessThan(100_000);
  });

  it("gives every document a script without rrweb's code, which comes only once recording begins", () => {
    // Each new document of a recorded page parses the script before its own: rrweb (78 KB) is not in it.
    expect(source.script.length).toBeLessThan(5_000);
    expect(source.script).not.toContain("customElements?.get(");
    expect(source.rrweb).toContain("customElements?.get(");
  });

  it("never throws and catches per element, nor appends an iframe to find prototypes", () => {
    expect(source.rrweb).toContain("customElements?.get(");
    expect(source.rrweb).not.toContain("__rrwebUntaintedMutationObserver");
  });

  it("refuses an rrweb build its patches do not match (an upgrade is checked, not quietly slower)", () => {
    expect(() => patchRrweb("export { record };")).toThrow(/does not match the recorder's patch/);
  });
});
