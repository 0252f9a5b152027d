import type { ServerResponse } from "node:http";
import { errorResult } from "../http/errorBody";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import type { StreamingResult } from "../http/streamBody";
import type { OpenStreams } from "./openStreams";

/** A comment line this often keeps a quiet stream's connection (and any proxy on the way) open. */
const KEEP_ALIVE_MS = 15_000;

/**
 * Writes a streamed result (an event stream) as its chunks come, until it ends, the client
 * leaves, or the service stops (`streams.endAll`). Past the owner's cap of open streams it
 * answers 429 `too_many_streams` instead. Resolves with the status answered, once the response
 * is over and everything it held (the stream's source, the keep-alive timer) is released.
 */
export async function sendStream(
  response: ServerResponse,
  result: StreamingResult,
  requestId: string,
  streams: OpenStreams,
  log: (line: string) => void,
  send: (response: ServerResponse, result: HttpResult, requestId: string) => void,
): Promise<number> {
  const { owner } = result.stream;
  const controller = streams.add(owner);
  if (!controller) {
    const refused = new ApiError("too_many_streams", `An account may hold ${streams.maxPerOwner} event streams open at once`, { limit: streams.maxPerOwner }, { "retry-after": "5" });
    const answer = errorResult(refused, requestId, log);
    send(response, answer, requestId);
    return answer.statusCode;
  }
  const stop = () => controller.abort();
  response.once("close", stop);
  const keepAlive = setInterval(() => response.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
  try {
    const headers: Record<string, string> = { "x-request-id": requestId };
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
    response.writeHead(result.statusCode, headers);
    response.flushHeaders();
    for await (const chunk of result.stream.open(controller.signal)) {
      if (controller.signal.aborted) break;
      if (!response.write(chunk)) await drained(response, controller.signal);
    }
  } catch (error) {
    // The head is out: the stream just ends, and the client resumes with Last-Event-ID.
    log(`[${requestId}] an event stream ended early: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearInterval(keepAlive);
    response.off("close", stop);
    controller.abort();
    streams.remove(owner, controller);
    response.end();
  }
  return result.statusCode;
}

/** Resolves once the response can take more, or is gone. */
function drained(response: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    response.once("drain", done);
    signal.addEventListener("abort", done);
  });
}
