import { createHash, createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { S3Client } from "@aws-sdk/client-s3";
import { createRunBucketClient } from "../../lambdas/aws/awsDeps";

/** The secret the stand-in's clients sign with (checked on presigned POSTs). */
const SIGNING_SECRET = "SIGNING-SECRET-NEVER-SHOWN";

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
  /** User metadata (`x-amz-meta-*`) of objects uploaded with some, by key. */
  readonly metadata = new Map<string, Record<string, string>>();
  /** When each object was last written (what HEAD and GET answer as Last-Modified). */
  readonly written = new Map<string, Date>();
  /** Every request: method and path. */
  readonly requests: string[] = [];
  /** How each object uploaded through a POST form asked S3 to encrypt it: its `x-amz-server-side-encryption` fields. */
  readonly encryption = new Map<string, { algorithm: string | null; keyId: string | null }>();
  /** The keys of each DeleteObjects call, in order. */
  readonly deletes: string[][] = [];
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
        if (request.method === "PUT" && typeof request.headers["x-amz-copy-source"] === "string") {
          // CopyObject (the SDK, signed by the client): `<bucket>/<key>` to this key.
          const source = this.objects.get(decodeURIComponent(request.headers["x-amz-copy-source"].replace(/^\//, "")));
          if (!source) return fail(404, "NoSuchKey");
          this.objects.set(key, Buffer.from(source));
          const type = this.types.get(decodeURIComponent(request.headers["x-amz-copy-source"].replace(/^\//, "")));
          if (type) this.types.set(key, type);
          response.writeHead(200, { "content-type": "application/xml" });
          return response.end(`<?xml version="1.0" encoding="UTF-8"?><CopyObjectResult><ETag>"etag"</ETag></CopyObjectResult>`);
        }
        if (request.method === "POST" && url.searchParams.has("delete")) {
          // DeleteObjects (the SDK): every <Key> of the body, under this bucket.
          const bucket = key.split("/")[0] ?? "";
          const keys = [...Buffer.concat(chunks).toString("utf8").matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) => unescapeXml(match[1] ?? ""));
          this.deletes.push(keys);
          for (const deleted of keys) {
            this.objects.delete(`${bucket}/${deleted}`);
            this.encryption.delete(`${bucket}/${deleted}`);
            this.types.delete(`${bucket}/${deleted}`);
          }
          response.writeHead(200, { "content-type": "application/xml" });
          return response.end(`<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>`);
        }
        if (request.method === "PUT" && String(request.headers.authorization ?? "").startsWith("AWS4-HMAC-SHA256 ")) {
          // PutObject by the SDK (signed in its Authorization header, not checked here).
          this.store(key, Buffer.concat(chunks), request.headers["content-type"], metadataOf(Object.entries(request.headers)));
          response.writeHead(200, { etag: this.etagOf(key) });
          return response.end();
        }
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
          this.store(key, Buffer.concat(chunks));
          response.writeHead(200, { etag: '"etag"' });
          return response.end();
        }
        if (request.method === "POST") return void this.post(request.headers["content-type"] ?? "", Buffer.concat(chunks)).then(
          ({ status, code }) => (code ? fail(status, code) : (response.writeHead(status), response.end())),
          () => fail(400, "MalformedPOSTRequest"),
        );
        if (request.method === "HEAD") {
          const object = this.objects.get(key);
          // A presigned HEAD (the runner's look at a live-view marker) must carry its signature, unexpired.
          if (!request.headers.authorization && !this.presignedValid(url)) {
            response.writeHead(403);
            return response.end();
          }
          if (!object) {
            response.writeHead(403);
            return response.end();
          }
          response.writeHead(200, { ...this.objectHeaders(key), "content-type": this.types.get(key) ?? "application/octet-stream", "content-length": String(object.length) });
          return response.end();
        }
        if (request.method === "GET") {
          // A presigned GET (a runner's): refused once expired, as S3 does.
          const signedAt = url.searchParams.get("X-Amz-Date");
          if (url.searchParams.has("X-Amz-Signature") && signedAt) {
            const at = Date.parse(signedAt.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
            if (!(Date.now() <= at + Number(url.searchParams.get("X-Amz-Expires")) * 1000)) return fail(403, "AccessDenied");
          }
          const object = this.objects.get(key);
          // As S3 answers a caller without s3:ListBucket (the recorder): 403, not 404.
          if (!object) return fail(403, "AccessDenied");
          if (request.headers["if-none-match"] !== undefined && request.headers["if-none-match"] === this.etagOf(key)) {
            response.writeHead(304, this.objectHeaders(key));
            return response.end();
          }
          const type = url.searchParams.get("response-content-type") ?? this.types.get(key) ?? "application/octet-stream";
          const disposition = url.searchParams.get("response-content-disposition");
          response.writeHead(200, { ...this.objectHeaders(key), "content-type": type, "content-length": String(object.length), ...(disposition ? { "content-disposition": disposition } : {}) });
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
   * A browser-style upload through a presigned POST, checked as S3 checks one: the signature
   * (SigV4 of the base64 policy with this stand-in's signing secret and the form's credential
   * scope), the policy unexpired, its `eq`/`starts-with` conditions on the key and on every
   * field it names (object conditions are `eq`), and the size (`content-length-range`).
   */
  private async post(contentType: string, body: Buffer): Promise<{ status: number; code?: string }> {
    const form = await new Request("http://s3.local/", { method: "POST", headers: { "content-type": contentType }, body: new Uint8Array(body) }).formData();
    const policyText = form.get("Policy");
    const key = String(form.get("key") ?? "");
    const file = form.get("file");
    if (typeof policyText !== "string" || !form.get("X-Amz-Signature") || !(file instanceof Blob)) return { status: 403, code: "AccessDenied" };
    const policy = JSON.parse(Buffer.from(policyText, "base64").toString("utf8")) as { expiration: string; conditions: unknown[] };
    if (Date.parse(policy.expiration) < Date.now()) return { status: 403, code: "AccessDenied" };
    if (form.get("X-Amz-Signature") !== postSignature(String(form.get("X-Amz-Credential") ?? ""), policyText)) return { status: 403, code: "SignatureDoesNotMatch" };
    const bytes = Buffer.from(await file.arrayBuffer());
    const field = (name: string) => {
      for (const [formName, value] of form.entries()) if (formName.toLowerCase() === name.toLowerCase() && typeof value === "string") return value;
      return undefined;
    };
    // As S3 does: every field of the form but the signature, the file, the policy and
    // `x-ignore-*` must be named by a condition ("Invalid according to Policy: Extra input fields").
    const named = new Set(
      policy.conditions.flatMap((condition) =>
        Array.isArray(condition)
          ? typeof condition[1] === "string" && condition[1].startsWith("$") ? [condition[1].slice(1).toLowerCase()] : []
          : Object.keys(condition as Record<string, string>).map((name) => name.toLowerCase()),
      ),
    );
    for (const name of new Set([...form.keys()].map((formName) => formName.toLowerCase()))) {
      if (["x-amz-signature", "file", "policy"].includes(name) || name.startsWith("x-ignore-")) continue;
      if (!named.has(name)) return { status: 403, code: "AccessDenied" };
    }
    for (const condition of policy.conditions) {
      if (!Array.isArray(condition)) {
        for (const [name, value] of Object.entries(condition as Record<string, string>)) {
          if (name !== "bucket" && field(name) !== value) return { status: 403, code: "AccessDenied" };
        }
        continue;
      }
      const value = typeof condition[1] === "string" && condition[1].startsWith("$") ? field(condition[1].slice(1)) ?? "" : "";
      if (condition[0] === "eq" && value !== String(condition[2])) return { status: 403, code: "AccessDenied" };
      if (condition[0] === "starts-with" && !value.startsWith(String(condition[2]))) return { status: 403, code: "AccessDenied" };
      if (condition[0] === "content-length-range" && (bytes.length < Number(condition[1]) || bytes.length > Number(condition[2]))) return { status: 400, code: "EntityTooLarge" };
    }
    this.requests.push(`POST ${key}`);
    const type = form.get("Content-Type");
    const fields = [...form.entries()].filter((entry): entry is [string, string] => typeof entry[1] === "string");
    this.store(`bfn-run-bucket/${key}`, bytes, typeof type === "string" ? type : undefined, metadataOf(fields));
    this.encryption.set(`bfn-run-bucket/${key}`, { algorithm: field("x-amz-server-side-encryption") ?? null, keyId: field("x-amz-server-side-encryption-aws-kms-key-id") ?? null });
    return { status: 204 };
  }

  /** Writes an object as S3 keeps it: its bytes, type, user metadata and time. */
  private store(key: string, bytes: Buffer, type?: string | string[], metadata: Record<string, string> = {}): void {
    this.objects.set(key, bytes);
    if (typeof type === "string") this.types.set(key, type);
    else this.types.delete(key);
    this.metadata.set(key, metadata);
    this.written.set(key, new Date());
  }

  /** An object's ETag: the MD5 of its bytes, quoted (as S3's for a single-part upload). */
  etagOf(key: string): string {
    return `"${createHash("md5").update(this.objects.get(key) ?? Buffer.alloc(0)).digest("hex")}"`;
  }

  /** What S3 answers about an object besides its body: ETag, Last-Modified, Date (S3's clock) and its user metadata. */
  private objectHeaders(key: string): Record<string, string> {
    const written = this.written.get(key) ?? new Date(0);
    const metadata = Object.fromEntries(Object.entries(this.metadata.get(key) ?? {}).map(([name, value]) => [`x-amz-meta-${name}`, value]));
    return { etag: this.etagOf(key), "last-modified": written.toUTCString(), date: new Date().toUTCString(), ...metadata };
  }

  /** A presigned URL's query: signed, its date and expiry read, not expired. */
  private presignedValid(url: URL): boolean {
    const date = url.searchParams.get("X-Amz-Date") ?? "";
    const expires = Number(url.searchParams.get("X-Amz-Expires"));
    const at = Date.parse(date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
    return url.searchParams.has("X-Amz-Signature") && Number.isFinite(at) && expires > 0 && Date.now() <= at + expires * 1000;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** An S3 client of this stand-in, built by the service's own builder (awsDeps.createRunBucketClient). */
  client(): S3Client {
    return createRunBucketClient("eu-west-1", { endpoint: this.endpoint, forcePathStyle: true, credentials: { accessKeyId: "AKIDTEST", secretAccessKey: SIGNING_SECRET } });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The SigV4 signature S3 expects of a POST policy signed with this stand-in's secret under `credential`'s scope. */
function postSignature(credential: string, policy: string): string {
  const [, day, region, service] = credential.split("/");
  const hmac = (key: Buffer, data: string) => createHmac("sha256", key).update(data, "utf8").digest();
  const signingKey = [day ?? "", region ?? "", service ?? "", "aws4_request"].reduce(hmac, Buffer.from(`AWS4${SIGNING_SECRET}`, "utf8"));
  return hmac(signingKey, policy).toString("hex");
}

/** The `x-amz-meta-*` entries of headers or form fields, by their name after the prefix (lower case). */
function metadataOf(entries: Iterable<[string, unknown]>): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (lower.startsWith("x-amz-meta-") && typeof value === "string") metadata[lower.slice("x-amz-meta-".length)] = value;
  }
  return metadata;
}

function unescapeXml(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
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
