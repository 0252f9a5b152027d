/**
 * The worker thread that parses big frames from workers' sandboxes (resultParser.ts), off the
 * thread that serves requests: a run's result of several MB takes JSON.parse tens of ms.
 */
import { parentPort, threadId } from "node:worker_threads";
import { type ParseJob, type ParseReply, parseFrameBody } from "./parseFrameBody";

parentPort?.on("message", (job: ParseJob) => {
  let reply: ParseReply;
  try {
    reply = { id: job.id, threadId, ...parseFrameBody(job.body, job.maxDepth, job.secrets) };
  } catch (error) {
    reply = { id: job.id, threadId, ok: false, problem: `a message could not be parsed: ${(error as Error).message}`, kind: "too_large" };
  }
  parentPort?.postMessage(reply);
});
