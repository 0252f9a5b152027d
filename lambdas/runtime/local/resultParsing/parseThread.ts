/**
 * The worker thread that parses big frames from workers' sandboxes (resultParser.ts), off the
 * thread that serves requests: a run's result of several MB takes JSON.parse tens of ms. It runs
 * at nice 10 (on Linux a thread's nice value is its own), as the deploy analysis threads do: on a
 * busy machine the request thread and the runs' sandboxes come first, and big results take what
 * is left (small ones are parsed on the request thread).
 */
import { setPriority } from "node:os";
import { parentPort, threadId } from "node:worker_threads";
import { ownThreadId } from "../../../code/analysis/threadCpu";
import { type ParseJob, type ParseReply, parseFrameBody } from "./parseFrameBody";

try {
  const own = ownThreadId();
  if (own !== null) setPriority(own, 10);
} catch {
  // Not allowed: the thread keeps the process's priority.
}

parentPort?.on("message", (job: ParseJob) => {
  let reply: ParseReply;
  try {
    reply = { id: job.id, threadId, ...parseFrameBody(job.body, job.maxDepth, job.secrets) };
  } catch (error) {
    reply = { id: job.id, threadId, ok: false, problem: `a message could not be parsed: ${(error as Error).message}`, kind: "too_large" };
  }
  parentPort?.postMessage(reply);
});
