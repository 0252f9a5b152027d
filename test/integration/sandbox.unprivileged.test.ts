/**
 * The service run by an ordinary user (as on a developer's machine): in the process sandbox its
 * workers run as that same user, so what keeps automations from the store and the data dir is
 * the store's per-start secret and the browser's CDP guard, not file permissions. (When the test
 * runs as root, the service is started under a uid of its own.)
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { chmod, chown, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type ChildService, startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";
import { FILE_READER } from "../helpers/sandboxProbes";

const UID = process.getuid?.() === 0 ? 1_799_000_001 : undefined;

let dir: string;
let dataDir: string;
let service: ChildService;
const key = generateApiKey();
const call = (method: string, urlPath: string, body?: unknown) => requestJson(service.url, method, urlPath, { body, token: key });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "browserfn-unprivileged-"));
  dataDir = path.join(dir, "data");
  if (UID !== undefined) {
    await chmod(dir, 0o755);
    await chown(dir, UID, UID);
  }
  service = await startChildService(dataDir, key, { BROWSERFN_SANDBOX: "process", HOME: dir }, UID);
});
afterAll(async () => {
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("the service run by an ordinary user, process sandbox", () => {
  it("says how weak its sandbox is at start-up", () => {
    expect(service.output()).toMatch(/Sandbox: process \(as set\)\. WARNING: weaker isolation: runs share the host's network and file system view, under this user/);
  });

  it("keeps automations from its store, though they run as the store's own user", async () => {
    const port = storePort();
    expect(port).not.toBe("");
    await call("POST", "/functions", {
      name: "store-thief",
      code: `export default async function run(port: string) {
        const response = await fetch("http://127.0.0.1:" + port + "/", { method: "POST", body: "{}", headers: { "x-amz-target": "DynamoDB_20120810.ListTables", "content-type": "application/x-amz-json-1.0", "x-amz-date": "20260101T000000Z", authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00" } });
        return response.status + " " + (await response.text());
      }`,
    });
    const answer = await call("POST", "/functions/store-thief", { port });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/^403 .*UnrecognizedClientException/);
  });

  it("keeps its browser from the data dir: no file:// reads, no downloads into it", async () => {
    await writeFile(path.join(dataDir, "secret.txt"), key); // the service's user can read it, so its browser could
    if (UID !== undefined) await chown(path.join(dataDir, "secret.txt"), UID, UID);
    await call("POST", "/functions", { name: "file-reader", code: FILE_READER });
    const answer = await call("POST", "/functions/file-reader", { file: path.join(dataDir, "secret.txt"), dir: dataDir, controlName: "control.txt" });
    expect(answer.status).toBe(200);
    expect(answer.body.read).toMatch(/^error: .*browserfn refused Page\.navigate: local files/);
    expect(JSON.stringify(answer.body)).not.toContain(key);
    // The downloads happened, into the browser's own profile.
    expect(answer.body.control).toMatch(/^allowed \["completed"\]$/);
    expect(answer.body.download).toMatch(/^allowed \["completed"\]$/);
    expect(await readdir(dataDir)).not.toContain("planted.txt");
  });
});

/** dynalite's port: the one its child process listens on (read from /proc/net/tcp by its pid). */
function storePort(): string {
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    let args = "";
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!args.includes("dynaliteChild.cjs") || !args.includes(dataDir)) continue;
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed meanwhile
      }
    }
    for (const line of readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns[3] === "0A" && inodes.has(columns[9] ?? "")) return String(parseInt((columns[1] ?? ":0").split(":")[1] ?? "0", 16));
    }
  }
  return "";
}
