import { backgroundCpus, cpuList } from "../../lambdas/runtime/local/cpuShares/cgroupCpuShares";

describe("the CPUs background work may use", () => {
  it("reads a kernel CPU list one CPU at a time", () => {
    expect(cpuList("0-1\n")).toEqual([0, 1]);
    expect(cpuList("0-3,8,10-11")).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(cpuList("")).toEqual([]);
  });

  it("is every CPU but the first, and none where there is only one", () => {
    expect(backgroundCpus("0-1")).toBe("1");
    expect(backgroundCpus("2-5,7")).toBe("3,4,5,7");
    expect(backgroundCpus("0")).toBeUndefined();
    expect(backgroundCpus("3\n")).toBeUndefined();
  });
});
