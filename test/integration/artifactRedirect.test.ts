import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { BrowserfnClient } from "../../client";
import { cliEnv, runCli } from "../fixtures/cli/runCli";

// On AWS `GET /runs/{id}/artifacts/{name}` answers 302 to a presigned S3 URL on another origin.
// S3 refuses a presigned request that also carries an Authorization header, and the API key must
// not reach another origin: here an API on one 127.0.0.1 port redirects to a "bucket" on another,
// which fails any request with an Authorization header (as S3 does) and serves the bytes otherwise.

const KEY = "bfn_redirect_test_key_0123456789abcdef";
const RUN_ID = "run_01aaaaaaaaaaaaaaaaaaaaaaaa";
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");
const CSV = Buffer.from("a,b\n1,2\n");
const FILES: Record<string, { type: string; body: Buffer }> = { "shot.png": { type: "image/png", body: PNG }, "table.csv": { type: "text/csv", body: CSV } };

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });

let api: Server;
let bucket: Server;
let apiUrl: string;
let bucketUrl: string;
/** The headers of every request the bucket got, and of every artifact request the API got. */
const bucketRequests: { url: string; headers: IncomingHttpHeaders }[] = [];
const apiArtifactRequests: { url: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  bucket = createServer((request, response) => {
    bucketRequests.push({ url: request.url ?? "", headers: request.headers });
    const url = new URL(request.url ?? "/", "http://bucket");
    const file = FILES[url.pathname.split("/").pop() ?? ""];
    if (request.headers.authorization !== undefined) {
      response.writeHead(400, { "content-type": "application/xml" });
      return response.end("<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>");
    }
    if (!file || url.searchParams.get("X-Amz-Signature") !== "sig") {
      response.writeHead(403, { "content-type": "application/xml" });
      return response.end("<Error><Code>AccessDenied</Code></Error>");
    }
    response.writeHead(200, { "content-type": file.type, "content-length": file.body.length });
    response.end(file.body);
  });
  api = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://api");
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.headers.authorization !== `Bearer ${KEY}`) return json(401, { error: { code: "invalid_token", message: "no", request_id: "r", details: {} } });
    if (url.pathname === `/runs/${RUN_ID}`) {
      return json(200, { run_id: RUN_ID, function_id: "fn_1", function_name: "shots", version: "1", trigger: "http", status: "succeeded", params: {}, result: null, error: null, queued_at: "2026-01-02T03:04:05.000Z", started_at: "2026-01-02T03:04:05.000Z", finished_at: "2026-01-02T03:04:06.000Z", duration_ms: 1000 });
    }
    if (url.pathname === `/runs/${RUN_ID}/artifacts`) {
      const items = Object.entries(FILES).map(([name, { type, body }]) => ({ name, content_type: type, bytes: body.length, created_at: "2026-01-02T03:04:05.000Z", url: `${apiUrl}${url.pathname}/${name}` }));
      return json(200, { items });
    }
    const name = url.pathname.startsWith(`/runs/${RUN_ID}/artifacts/`) ? url.pathname.split("/").pop() ?? "" : "";
    if (name in FILES) {
      apiArtifactRequests.push({ url: url.pathname, authorization: request.headers.authorization });
      response.writeHead(302, { location: `${bucketUrl}/bucket/${RUN_ID}/${name}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=sig` });
      return response.end();
    }
    json(404, { error: { code: "route_not_found", message: "no", request_id: "r", details: {} } });
  });
  [apiUrl, bucketUrl] = await Promise.all([listen(api), listen(bucket)]);
});

afterAll(async () => {
  await Promise.all([close(api), close(bucket)]);
});

beforeEach(() => {
  bucketRequests.length = 0;
  apiArtifactRequests.length = 0;
});

/** No header the bucket got holds the key, and none is Authorization. */
function expectNoKeyAtTheBucket(): void {
  expect(bucketRequests.length).toBeGreaterThan(0);
  for (const { headers } of bucketRequests) {
    expect(headers.authorization).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain(KEY);
  }
}

describe("an artifact download redirected to another origin (S3 on AWS)", () => {
  it("the client follows the 302 without the Authorization header and returns the bucket's bytes and type", async () => {
    const client = new BrowserfnClient({ baseUrl: apiUrl, apiKey: KEY, maxRetries: 0 });
    const png = await client.downloadArtifact(RUN_ID, "shot.png");
    expect(png.contentType).toBe("image/png");
    expect(Buffer.from(png.bytes).equals(PNG)).toBe(true);
    // The API itself was asked with the key; the bucket was asked once, at the presigned URL, without it.
    expect(apiArtifactRequests).toEqual([{ url: `/runs/${RUN_ID}/artifacts/shot.png`, authorization: `Bearer ${KEY}` }]);
    expect(bucketRequests.map((request) => request.url)).toEqual([`/bucket/${RUN_ID}/shot.png?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=sig`]);
    expectNoKeyAtTheBucket();
  });

  it("`browserfn runs get --artifacts DIR` saves the bucket's exact bytes, the key never sent to the bucket", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "browserfn-artifact-redirect-"));
    try {
      const dir = path.join(home, "out");
      const result = await runCli(["runs", "get", RUN_ID, "--artifacts", dir, "--json"], cliEnv(home, { BROWSERFN_URL: apiUrl, BROWSERFN_API_KEY: KEY }));
      expect([result.code, result.stderr]).toEqual([0, ""]);
      expect(JSON.parse(result.stdout).artifacts.map((artifact: { name: string; bytes: number }) => [artifact.name, artifact.bytes])).toEqual([
        ["shot.png", PNG.length],
        ["table.csv", CSV.length],
      ]);
      expect((await readFile(path.join(dir, "shot.png"))).equals(PNG)).toBe(true);
      expect((await readFile(path.join(dir, "table.csv"))).equals(CSV)).toBe(true);
      expect(bucketRequests.map((request) => request.url.split("?")[0])).toEqual([`/bucket/${RUN_ID}/shot.png`, `/bucket/${RUN_ID}/table.csv`]);
      expectNoKeyAtTheBucket();
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 30_000);
});
