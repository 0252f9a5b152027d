/**
 * The worker thread that parses big frames from workers' sandboxes, and builds the bodies of
 * runs' webhook deliveries (resultParser.ts; threadJobs.ts), off the thread that serves
 * requests: a run's result of several MB takes JSON.parse tens of ms. It runs
 * at nice 10 (on Linux a thread's nice value is its own), as the deploy analysis threads do: on a
 * busy machine the request thread and the runs' sandboxes come first, and big results take what
 * is left (small ones are parsed on the request thread). Where accounts have cpu cgroups, the
 * service moves it into the group of the account whose job it does (CpuShares.charge): a
 * tenant's big results count against that tenant's CPU, not the service's.
 */
import { setPriority } from "node:os";
import { parentPort, threadId } from "node:worker_threads";
import { ownThreadId } from "../../../code/analysis/threadCpu";
import { cpuGroupOfThread } from "../cpuShares/cgroupCpuShares";
import { runJob, type ThreadHello, type ThreadJob, transferOf } from "./threadJobs";

const own = ownThreadId();
try {
  if (own !== null) setPriority(own, 10);
} catch {
  // Not allowed: the thread keeps the process's priority.
}
// Its id first: the service moves it into the share of the account whose job comes next (resultParser.ts).
parentPort?.postMessage({ tid: own } satisfies ThreadHello);

parentPort?.on("message", (job: ThreadJob) => {
  const cpuGroup = own === null ? undefined : cpuGroupOfThread(own);
  const reply = { ...runJob(job, threadId), ...(cpuGroup === undefined ? {} : { cpuGroup }) };
  parentPort?.postMessage(reply, transferOf(reply));
});
