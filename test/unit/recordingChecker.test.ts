/**
 * Recordings a run kept are checked on the result thread (ResultParser.checkRecording), in the
 * account's turn, not on the thread that serves requests: the file is read, checked, redacted
 * and written back there.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { threadId } from "node:worker_threads";
import { ResultParser } from "../../lambdas/runtime/local/resultParsing/resultParser";

let dir: string;
const parser = new ResultParser();
const checker = { check: (file: string, secrets: string[]) => parser.checkRecording("acct", file, secrets) };
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "browserfn-recording-check-"));
});
afterAll(async () => {
  await parser.close();
  await rm(dir, { recursive: true, force: true });
});

it("rewrites a recording as checked, field by field and redacted, on its thread", async () => {
  const file = path.join(dir, "recording-1.json");
  const events = [{ type: 4, timestamp: 1, data: { href: "https://example.test/?token=s3cr3t-value" }, extra: "dropped" }];
  await writeFile(file, JSON.stringify(events));
  const reply = await checker.check(file, ["s3cr3t-value"]);
  const kept = await readFile(file, "utf8");
  expect(reply).toEqual({ keep: true, bytes: Buffer.byteLength(kept) });
  expect(parser.stats.recordings).toBe(1);
  expect(parser.stats.threadId).not.toBe(threadId);
  expect(JSON.parse(kept)).toEqual([{ type: 4, timestamp: 1, data: { href: "https://example.test/?token=[secret]" } }]);
});

it("refuses what is no recording, and goes on with the next", async () => {
  const bad = path.join(dir, "recording-2.json");
  await writeFile(bad, JSON.stringify({ not: "an array" }));
  expect(await checker.check(bad, [])).toMatchObject({ keep: false, why: "not a recording: not an array of events" });
  const deep = path.join(dir, "recording-3.json");
  await writeFile(deep, `[${"[".repeat(5000)}${"]".repeat(5000)}]`);
  expect(await checker.check(deep, [])).toMatchObject({ keep: false });
  const missing = path.join(dir, "recording-4.json");
  expect(await checker.check(missing, [])).toMatchObject({ keep: false, why: expect.stringContaining("could not be checked") });
  const good = path.join(dir, "recording-5.json");
  await writeFile(good, JSON.stringify([{ type: 2, timestamp: 2, data: {} }]));
  expect(await checker.check(good, [])).toMatchObject({ keep: true });
});
