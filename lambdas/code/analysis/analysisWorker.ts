/**
 * Entry point of an analysis worker thread (started by analysisPool.ts): loads the compiler,
 * says `ready`, then reads one module per request and answers it (analysisProtocol.ts). The
 * pool ends it when a module takes more than the deploy budget; its heap is capped by the
 * pool's resourceLimits.
 */
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { codeWarnings, compileCode } from "../compileCode";
import { ApiError } from "../../http/errors";
import type { AnalysisReply, AnalysisRequest } from "./analysisProtocol";
import { ownThreadId } from "./threadCpu";

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
 * Lowers this thread's CPU priority (nice 10) on Linux, where a thread's nice value is its own:
 * on a busy machine, the service's thread (requests) and the workers that run functions come
 * first, and a deploy's reading takes what is left (its budget counts its own CPU time, so a
 * slower reading is not a failed one). Elsewhere, or when not allowed, nothing changes.
 */
function lowerPriority(threadId: number | null): void {
  try {
    if (threadId !== null) setPriority(threadId, 10);
  } catch {
    // Not allowed: the thread keeps the process's priority.
  }
}

const threadId = ownThreadId();
lowerPriority(threadId);
const port = parentPort;
if (port) {
  port.on("message", (request: AnalysisRequest) => port.postMessage(answer(request)));
  port.postMessage({ type: "ready", threadId } satisfies AnalysisReply);
}
