/**
 * Entry point of an analysis worker thread (started by analysisPool.ts): loads the compiler,
 * says `ready`, then reads one module per request and answers it (analysisProtocol.ts). The
 * pool ends it when a module takes more than the deploy budget; its heap is capped by the
 * pool's resourceLimits.
 */
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

const port = parentPort;
if (port) {
  port.on("message", (request: AnalysisRequest) => port.postMessage(answer(request)));
  port.postMessage({ type: "ready" } satisfies AnalysisReply);
}
