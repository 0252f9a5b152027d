/**
 * The worker thread that parses big frames from workers' sandboxes, and builds the bodies of
 * runs' webhook deliveries (resultParser.ts; threadJobs.ts), off the thread that serves
 * requests: a run's result of several MB takes JSON.parse tens of ms. It runs
 * at nice 10 (on Linux a thread's nice value is its own), as the deploy analysis threads do: on a
 * busy machine the request thread and the runs' sandboxes come first, and big results take what
 * is left (small ones are parsed on the request thread).
 */
import { setPriority } from "node:os";
import { parentPort, threadId } from "node:worker_threads";
import { ownThreadId } from "../../../code/analysis/threadCpu";
import { runJob, type ThreadJob, transferOf } from "./threadJobs";

try {
  const own = ownThreadId();
  if (own !== null) setPriority(own, 10);
} catch {
  // Not allowed: the thread keeps the process's priority.
}

parentPort?.on("message", (job: ThreadJob) => {
  const reply = runJob(job, threadId);
  parentPort?.postMessage(reply, transferOf(reply));
});
