import type { IncomingMessage } from "node:http";
import { ApiError } from "../../http/errors";

/**
 * Reads the body as UTF-8 up to `limit` bytes; past it, 413 without reading the rest. A body
 * that stops arriving for `idleMs` fails with 408 `request_timeout` (the caller then closes the
 * connection): a stalled body is never held for Node's minutes-long request timeout.
 */
export function readBody(request: IncomingMessage, limit: number, idleMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > limit) {
      request.resume();
      reject(new ApiError("payload_too_large", `Body is ${declared} bytes; the limit is ${limit}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const fail = (error: ApiError) => {
      clearTimeout(timer);
      request.removeAllListeners("data");
      reject(error);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => fail(new ApiError("request_timeout", `The request body stopped arriving for ${Math.round(idleMs / 1000)} s`, { received_bytes: size })),
        idleMs,
      );
    };
    arm();
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        fail(new ApiError("payload_too_large", `Body is over the limit of ${limit} bytes`));
        request.resume();
        return;
      }
      chunks.push(chunk);
      arm();
    });
    request.on("end", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    // A client that goes away mid-body made a bad request, not the service an internal error.
    const cut = () => fail(new ApiError("invalid_request", "The request body ended before its declared length"));
    request.on("error", cut);
    request.on("close", () => {
      if (!request.complete) cut();
      clearTimeout(timer);
    });
  });
}
