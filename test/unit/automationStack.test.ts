import { mapAutomationStack } from "../../lambdas/runner/automationStack";

describe("mapAutomationStack: the frames of the service's own code", () => {
  it("name no path of the machine: their function names stay, their files are browserfn-runtime", () => {
    const stack = [
      "TimeoutError: Waiting for selector `.x` failed",
      "    at new WaitTask (/tmp/browserfn-runtime-ZtDnHU/worker.cjs:44656:19)",
      "    at async CdpFrame.waitForSelector (/tmp/browserfn-runtime-ZtDnHU/worker.cjs:40001:7)",
      "    at /var/task/runner.js:12:3",
      "    at file:///var/task/index.mjs:5:1",
      "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
      "    at run (/automation/index.js:64:19)",
    ].join("\n");
    expect(mapAutomationStack(stack, "export default async () => 1;").split("\n")).toEqual([
      "TimeoutError: Waiting for selector `.x` failed",
      "    at new WaitTask (browserfn-runtime)",
      "    at async CdpFrame.waitForSelector (browserfn-runtime)",
      "    at browserfn-runtime",
      "    at browserfn-runtime",
      "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
      // The code has no source map here: its frame is kept as it is.
      "    at run (/automation/index.js:64:19)",
    ]);
  });

  it("keeps a message that holds a path as it is (only frames are rewritten)", () => {
    const stack = "Error: cannot open /tmp/data/x.json:1:2\n    at run (/srv/app/worker.cjs:1:2)";
    expect(mapAutomationStack(stack, "")).toBe("Error: cannot open /tmp/data/x.json:1:2\n    at run (browserfn-runtime)");
  });
});
