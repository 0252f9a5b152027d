import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { S3Client } from "@aws-sdk/client-s3";
import { createRunBucketClient } from "../../lambdas/aws/awsDeps";

/**
 * S3, faked on 127.0.0.1 for path-style requests: a PUT through a presigned URL (its
 * signature's query parameters present and not expired: the signature itself is not
 * checked) stores the body; a GET by the SDK reads it back, or answers NoSuchKey. Enough for
 * the run pipeline's outcome bucket: the runner uploads with fetch, the recorder reads with
 * the real SDK client (`client()`). A missing key is 403 AccessDenied, as S3 answers a reader
 * without s3:ListBucket.
 */
export class InProcessS3 {
  readonly objects = new Map<string, Buffer>();
  /** Content types of objects uploaded with one (a POST's Content-Type field). */
  readonly types = new Map<string, string>();
  /** Every request: method and path. */
  readonly requests: string[] = [];
  private server?: Server;
  private port = 0;

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://s3.local");
      const key = decodeURIComponent(url.pathname.slice(1));
      this.requests.push(`${request.method} ${url.pathname}`);
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const fail = (status: number, code: string) => {
          response.writeHead(status, { "content-type": "application/xml" });
          response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
        };
        if (request.method === "PUT") {
          const signed = url.searchParams.get("X-Amz-Signature");
          const date = url.searchParams.get("X-Amz-Date") ?? "";
          const expires = Number(url.searchParams.get("X-Amz-Expires"));
          const at = Date.parse(date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
          if (!signed || !Number.isFinite(at) || !(expires > 0)) return fail(403, "AccessDenied");
          if (Date.now() > at + expires * 1000) return fail(403, "AccessDenied");
          // A checksum signed into the URL must match the body (the SDK's default signs the empty body's).
          const crc = url.searchParams.get("x-amz-checksum-crc32");
          if (crc !== null && crc !== crc32Base64(Buffer.concat(chunks))) return fail(400, "BadDigest");
          this.objects.set(key, Buffer.concat(chunks));
          response.writeHead(200, { etag: '"etag"' });
          return response.end();
        }
        if (request.method === "POST") return void this.post(request.headers["content-type"] ?? "", Buffer.concat(chunks)).then(
          ({ status, code }) => (code ? fail(status, code) : (response.writeHead(status), response.end())),
          () => fail(400, "MalformedPOSTRequest"),
        );
        if (request.method === "HEAD") {
          const object = this.objects.get(key);
          if (!object) {
            response.writeHead(403);
            return response.end();
          }
          response.writeHead(200, { "content-type": this.types.get(key) ?? "application/octet-stream", "content-length": String(object.length) });
          return response.end();
        }
        if (request.method === "GET") {
          const object = this.objects.get(key);
          // As S3 answers a caller without s3:ListBucket (the recorder): 403, not 404.
          if (!object) return fail(403, "AccessDenied");
          const type = url.searchParams.get("response-content-type") ?? this.types.get(key) ?? "application/octet-stream";
          const disposition = url.searchParams.get("response-content-disposition");
          response.writeHead(200, { "content-type": type, "content-length": String(object.length), ...(disposition ? { "content-disposition": disposition } : {}) });
          return response.end(object);
        }
        fail(405, "MethodNotAllowed");
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /**
   * A browser-style upload through a presigned POST: the form's policy (base64 JSON) must allow
   * the key (`starts-with $key`) and the size (`content-length-range`), and be unexpired.
   */
  private async post(contentType: string, body: Buffer): Promise<{ status: number; code?: string }> {
    const form = await new Request("http://s3.local/", { method: "POST", headers: { "content-type": contentType }, body: new Uint8Array(body) }).formData();
    const policyText = form.get("Policy");
    const key = String(form.get("key") ?? "");
    const file = form.get("file");
    if (typeof policyText !== "string" || !form.get("X-Amz-Signature") || !(file instanceof Blob)) return { status: 403, code: "AccessDenied" };
    const policy = JSON.parse(Buffer.from(policyText, "base64").toString("utf8")) as { expiration: string; conditions: unknown[] };
    if (Date.parse(policy.expiration) < Date.now()) return { status: 403, code: "AccessDenied" };
    const bytes = Buffer.from(await file.arrayBuffer());
    for (const condition of policy.conditions) {
      if (!Array.isArray(condition)) continue;
      if (condition[0] === "starts-with" && condition[1] === "$key" && !key.startsWith(String(condition[2]))) return { status: 403, code: "AccessDenied" };
      if (condition[0] === "content-length-range" && (bytes.length < Number(condition[1]) || bytes.length > Number(condition[2]))) return { status: 400, code: "EntityTooLarge" };
    }
    this.requests.push(`POST ${key}`);
    this.objects.set(`bfn-run-bucket/${key}`, bytes);
    const type = form.get("Content-Type");
    if (typeof type === "string") this.types.set(`bfn-run-bucket/${key}`, type);
    return { status: 204 };
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** An S3 client of this stand-in, built by the service's own builder (awsDeps.createRunBucketClient). */
  client(): S3Client {
    return createRunBucketClient("eu-west-1", { endpoint: this.endpoint, forcePathStyle: true, credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "SIGNING-SECRET-NEVER-SHOWN" } });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function crc32Base64(data: Buffer): string {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  const out = Buffer.alloc(4);
  out.writeUInt32BE((crc ^ 0xffffffff) >>> 0);
  return out.toString("base64");
}
