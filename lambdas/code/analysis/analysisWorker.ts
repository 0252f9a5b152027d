/**
 * Entry point of an analysis worker thread (started by analysisPool.ts): loads the compiler,
 * says `ready`, then reads one module per request and answers it (analysisProtocol.ts). The
 * pool ends it when a module takes more than the deploy budget; its heap is capped by the
 * pool's resourceLimits.
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { codeWarnings, compileCode } from "../compileCode";
import { ApiError } from "../../http/errors";
import type { AnalysisReply, AnalysisRequest } from "./analysisProtocol";

function answer(request: AnalysisRequest): AnalysisReply {
  try {
    const value = request.op === "compile" ? compileCode(request.source) : codeWarnings(request.source);
    return { type: "answer", id: request.id, json: JSON.stringify(value) };
  } catch (error) {
    if (error instanceof ApiError) {
      return { type: "rejected", id: request.id, code: error.code, message: error.message, details: error.details };
    }
    return { type: "failed", id: request.id, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Lowers this thread's CPU priority (nice 10) on Linux, where a thread's nice value is its own
 * (`/proc/thread-self` names its id): on a busy machine, the service's thread (requests) and the
 * workers that run functions come first, and a deploy's reading takes what is left. Elsewhere, or
 * when not allowed, nothing changes.
 */
function lowerPriority(): void {
  try {
    const threadId = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, 10);
  } catch {
    // Not Linux, or no /proc: the thread keeps the process's priority.
  }
}

lowerPriority();
const port = parentPort;
if (port) {
  port.on("message", (request: AnalysisRequest) => port.postMessage(answer(request)));
  port.postMessage({ type: "ready" } satisfies AnalysisReply);
}
