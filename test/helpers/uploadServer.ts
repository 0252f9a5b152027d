import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the upload server received. */
export interface ReceivedUpload {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface UploadServer {
  /** `http://127.0.0.1:<port>/outcome?X-Amz-Signature=test`, as a presigned PUT URL looks. */
  url: string;
  received: ReceivedUpload[];
  close(): Promise<void>;
}

/**
 * Stands in for S3 behind a presigned PUT URL, on 127.0.0.1 (ephemeral port): it keeps every
 * request it reads and answers `status` (with an S3-like error body when it is not 2xx), or
 * never answers when `status` is "hang".
 */
export async function startUploadServer(status: number | "hang" = 200): Promise<UploadServer> {
  const received: ReceivedUpload[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (status === "hang") return;
      const body = status < 300 ? "" : "<Error><Code>InternalError</Code></Error>";
      res.writeHead(status, { "content-type": "application/xml" }).end(body);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/outcome?X-Amz-Signature=test`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A URL on 127.0.0.1 where nothing listens (a port that was free a moment ago). */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/outcome`;
}
