import { parsePssKb, parseStat, sumPss, treeOf } from "../../bench/processMemory";

const stat = (pid: number, command: string, ppid: number) => `${pid} (${command}) S ${ppid} ${pid} ${pid} 0 -1 4194560 264 0 0 0 1 7 0 0 20 0 1 0 24`;

describe("the bench's memory of a process tree", () => {
  it("reads a process's parent and command name from /proc/<pid>/stat, spaces and parentheses included", () => {
    expect(parseStat(stat(42, "node", 7))).toEqual({ pid: 42, ppid: 7, command: "node" });
    expect(parseStat(stat(43, "Web Content", 42))).toEqual({ pid: 43, ppid: 42, command: "Web Content" });
    expect(parseStat(stat(44, "a) (b", 1))).toEqual({ pid: 44, ppid: 1, command: "a) (b" });
    expect(parseStat("")).toBeNull();
  });

  it("reads the Pss line of smaps_rollup in kB (not Pss_Anon and the like)", () => {
    const rollup = "55bc-7fff ---p 00000000 00:00 0  [rollup]\nRss:   1756 kB\nPss:    270 kB\nPss_Dirty:   112 kB\nPss_Anon:   112 kB\n";
    expect(parsePssKb(rollup)).toBe(270);
    expect(parsePssKb("")).toBe(0);
  });

  it("takes the root and all its descendants, and nothing else", () => {
    const table = [
      { pid: 1, ppid: 0, command: "init" },
      { pid: 10, ppid: 1, command: "node" }, // the service
      { pid: 11, ppid: 10, command: "node" }, // dynalite
      { pid: 12, ppid: 10, command: "bwrap" }, // a worker's sandbox…
      { pid: 14, ppid: 13, command: "chromium" }, // …whose browser is listed before its parent
      { pid: 13, ppid: 12, command: "node" },
      { pid: 20, ppid: 1, command: "node" }, // the bench itself
      { pid: 21, ppid: 20, command: "chromium" },
    ];
    expect(treeOf(table, 10).map((entry) => entry.pid).sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 14]);
    expect(treeOf(table, 99)).toEqual([]);
  });

  it("sums PSS in MB, in all and per command name", () => {
    const memory = sumPss([
      { command: "node", pssKb: 100 * 1024 },
      { command: "chromium", pssKb: 300 * 1024 },
      { command: "node", pssKb: 50 * 1024 + 51 },
      { command: "chromium", pssKb: 0 },
    ]);
    expect(memory).toEqual({
      pss_mb: 450,
      processes: 4,
      by_command: { chromium: { pss_mb: 300, processes: 2 }, node: { pss_mb: 150, processes: 2 } },
    });
    expect(sumPss([])).toEqual({ pss_mb: 0, processes: 0, by_command: {} });
  });
});
