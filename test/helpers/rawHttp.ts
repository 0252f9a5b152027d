import { connect } from "node:net";

export interface RawResponse {
  status: number;
  /** Header names in lowercase. */
  headers: Record<string, string>;
  text: string;
  /** The whole answer as it came over the wire. */
  raw: string;
}

/**
 * Sends bytes exactly as given over a TCP connection to `url`'s host and port (for requests
 * fetch refuses to build: odd request targets, broken headers, invalid UTF-8, chunked bodies)
 * and reads the answer until the server closes the connection. Send `Connection: close`.
 */
export function rawRequest(url: string, request: Buffer | string, timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms: ${Buffer.concat(chunks).toString("latin1").slice(0, 300)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(request);
  });
}

/** Parses one HTTP/1.1 answer (Content-Length, chunked, or read to the end). */
export function parseResponse(data: Buffer): RawResponse {
  const raw = data.toString("utf8");
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd < 0) throw new Error(`not an HTTP answer: ${JSON.stringify(raw.slice(0, 300))}`);
  const [statusLine = "", ...headerLines] = data.subarray(0, headEnd).toString("latin1").split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  if (!status) throw new Error(`bad status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.subarray(headEnd + 4);
  if (headers["transfer-encoding"]?.toLowerCase() === "chunked") body = unchunk(body);
  else if (headers["content-length"] !== undefined) body = body.subarray(0, Number(headers["content-length"]));
  return { status: Number(status), headers, text: body.toString("utf8"), raw };
}

function unchunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) throw new Error("truncated chunked body");
    const size = parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size)) throw new Error("bad chunk size");
    if (size === 0) return Buffer.concat(out);
    out.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}
