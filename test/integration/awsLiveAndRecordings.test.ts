import type { S3Client } from "@aws-sdk/client-s3";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import { longPolled } from "../../lambdas/aws/longPoll";
import { runLiveRoute } from "../../lambdas/handlers/getRunLive";
import { putSecret } from "../../lambdas/handlers/putSecret";
import type { HttpResult } from "../../lambdas/http/response";
import { liveFrameKey, liveWatchKey } from "../../lambdas/live/aws/liveUploads";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import type { RunUploads } from "../../lambdas/runner/lambdaPackage";
import { artifactKey } from "../../lambdas/runtime/aws/outcomeBucket";
import { FINAL_STATUSES, type RunItem } from "../../lambdas/runs/types";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { apiEvent, type AwsRunWorld, runIdOf, startAwsRunWorld } from "../helpers/awsRunWorld";

// The live view and recordings on AWS (docs/deploy.md, "Live view on AWS", "Recordings on AWS"),
// through the in-process AWS stand-ins with the real run workflow, the real Lambda runner and
// real Chromium behind them, the real recorder after it, and a stand-in S3 on 127.0.0.1 that
// checks presigned POST policies as S3 does. The S3 calls of the live route and the recorder
// are watched as the SDK makes them.

const BUCKET = "bfn-run-bucket";
/** A page that changes four times a second for `ticks` ticks. */
const TICKER = `import { Session } from "browserfn/runtime";
export default async (ticks: number) => {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setViewport({ width: 400, height: 300 });
  await page.setContent('<body style="margin:0;font:48px sans-serif"><div id="n">tick 0</div></body>');
  for (let i = 1; i <= ticks; i++) {
    await page.evaluate((n: number) => {
      (document.getElementById("n") as HTMLElement).textContent = "tick " + n;
      document.body.style.background = n % 2 ? "#fc0" : "#0cf";
    }, i);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { ticks };
};`;
const TOKEN = "tok-3f9a-NEVER-SHOWN-7c21";
/** A run that keeps forged recordings: one with the secret planted (and a field of its own), one nested too deep, one no array. */
const FORGER = `import { artifacts, secrets } from "browserfn/runtime";
export default async () => {
  const token = secrets.get("TOKEN") as string;
  const planted = [
    { type: 4, timestamp: 1, data: { href: "https://example.test/?t=" + token, width: 800, height: 600 } },
    { type: 3, timestamp: 2, data: { source: 5, text: token, id: 7 }, forged: token },
  ];
  await artifacts.save("recording-1.json", JSON.stringify(planted));
  await artifacts.save("recording-2.json", "[".repeat(700) + "]".repeat(700));
  await artifacts.save("recording-3.json", JSON.stringify({ events: planted }));
  await artifacts.save("notes.txt", "kept as it came");
  return "saved";
};`;
/** A run that keeps two well-formed recordings of 12 MB each: 24 MB in all, over the 20 MB a run's recordings may hold. */
const BLOATER = `import { artifacts } from "browserfn/runtime";
export default async () => {
  const events = JSON.stringify(Array.from({ length: 12 }, (_, i) => ({ type: 3, timestamp: i, data: { source: 0, text: "x".repeat(1024 * 1024 - 64) } })));
  await artifacts.save("recording-1.json", events);
  await artifacts.save("recording-2.json", events);
  return events.length;
};`;
/** A real page recorded by rrweb (recording: "all"), the secret in its text. */
const RECORDED = `import { Session, secrets } from "browserfn/runtime";
export default async () => {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.evaluate((token: string) => void (document.body.innerHTML = "<main><h1>Orders</h1><p>token " + token + "</p></main>"), secrets.get("TOKEN") as string);
  // Long enough for the recorder to begin (after the page's next frame and an idle moment, rrweb
  // evaluated over CDP then): more than 300 ms on a machine busy with other suites.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  // A change after the recorder's snapshot (it starts after the page's first frame): an incremental event.
  await page.evaluate(() => void document.querySelector("main")?.append(Object.assign(document.createElement("p"), { textContent: "shipped" })));
  await new Promise((resolve) => setTimeout(resolve, 300));
  return "recorded";
};`;

const TYPED = "hunter2-typed-on-lambda";
/** Opens a popup (window.open, its document written by the opener), types a password into it, and fails: recording "failures". */
const POPUPS = `import { Session } from "browserfn/runtime";
export default async () => {
  await using session = await Session.start();
  const page: any = await session.newPage();
  await page.setContent("<main><h1>the opener on lambda</h1></main>");
  const [popup] = await Promise.all([
    new Promise<any>((resolve) => page.once("popup", resolve)),
    page.evaluate(() => {
      const opened = window.open("", "_blank") as Window;
      opened.document.write("<!doctype html><title>popup</title><body><p id=popup-text>popup written on lambda</p><input type=password id=popup-password></body>");
      opened.document.close();
    }),
  ]);
  await popup.waitForSelector("#popup-text");
  await popup.type("#popup-password", ${JSON.stringify(TYPED)});
  await new Promise((resolve) => setTimeout(resolve, 300));
  throw new Error("failed with a popup open");
};`;

interface S3Call {
  command: string;
  input: Record<string, unknown>;
}

interface SseEvent {
  event: string;
  id: string | undefined;
  data: Record<string, unknown>;
}

function sseEvents(body: string): SseEvent[] {
  return body
    .split("\n\n")
    .map((block) => block.split("\n"))
    .filter((lines) => lines.some((line) => line.startsWith("event: ")))
    .map((lines) => ({
      event: (lines.find((line) => line.startsWith("event: ")) ?? "").slice(7),
      id: lines.find((line) => line.startsWith("id: "))?.slice(4),
      data: JSON.parse((lines.find((line) => line.startsWith("data: ")) ?? "data: null").slice(6)) as Record<string, unknown>,
    }));
}

async function until<T>(find: () => Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the live view and recordings on AWS", () => {
  let world: AwsRunWorld;
  const calls: S3Call[] = [];
  const spy = (real: Pick<S3Client, "send">): Pick<S3Client, "send"> => ({
    send: ((command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      calls.push({ command: command.constructor.name, input: command.input });
      return (real.send as (command: unknown) => Promise<unknown>)(command);
    }) as S3Client["send"],
  });
  beforeAll(async () => void (world = await startAwsRunWorld({ spyS3: spy })), 60_000);
  afterAll(async () => await world?.close());

  /** GET /runs/{id}/live as its route Lambda answers on AWS (long-polled), with a Last-Event-ID when given. */
  const live = (account: string, runId: string, lastEventId?: string): Promise<HttpResult> => {
    const principal = principalContext({ account_id: account, plan: "pro", admin: false, key_id: `key_${account}` });
    const event = apiGatewayEvent(principal, "GET", `/runs/${runId}/live`, undefined, { run_id: runId }, lastEventId ? { "last-event-id": lastEventId } : {});
    return longPolled(runLiveRoute({ pollMs: 1_000 }))(world.deps)(event, lambdaContext("getRunLive", "req")) as Promise<HttpResult>;
  };
  const ended = (runId: string) => until(async () => {
    const run = await world.run(runId);
    return run && FINAL_STATUSES.includes(run.status) ? run : undefined;
  }, `the end of ${runId}`);
  const eventOf = (runId: string) => world.pipeline.lambda.events.find((event) => (event as { run_id?: string }).run_id === runId) as { uploads: RunUploads } | undefined;
  const postsOf = (key: string) => world.pipeline.s3.requests.filter((request) => request === `POST ${key}`).length;

  it("sends a watcher frames of a page that changes: the run's Lambda screencasts once watched, uploads through its one-key JPEG form, and the stream ends with the run", async () => {
    await world.create("acme", "ticker", TICKER);
    const started = Date.now();
    const runId = runIdOf(await world.invoke("acme", "ticker", { ticks: 40 }));
    const first = await live("acme", runId);
    expect([first.statusCode, first.headers?.["content-type"]]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
    const frames = sseEvents(first.body ?? "").filter((event) => event.event === "frame");
    expect(frames.length).toBeGreaterThanOrEqual(1);
    const frame = frames[0] as SseEvent;
    expect(frame.data).toEqual({ data: expect.any(String), url: "about:blank", width: 400, height: 300, at: expect.any(String) });
    expect(Buffer.from(String(frame.data.data), "base64").subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(frame.id).toMatch(/^[0-9a-f]{32}$/);

    // Reconnected after the last frame it got: a newer one (the page changed), never that one again.
    const second = await live("acme", runId, (frames.at(-1) as SseEvent).id);
    const later = sseEvents(second.body ?? "").filter((event) => event.event === "frame");
    expect(later.length).toBeGreaterThanOrEqual(1);
    expect(later.map((event) => event.id)).not.toContain((frames.at(-1) as SseEvent).id);
    expect(later[0]?.data.data).not.toEqual(frame.data.data);

    // The route's S3 calls: the watch marker written, the latest frame read (If-None-Match once it has one).
    const mine = calls.filter((call) => String(call.input.Key).startsWith(`live/${runId}/`));
    expect(mine[0]).toEqual({ command: "PutObjectCommand", input: { Bucket: BUCKET, Key: liveWatchKey(runId), Body: "watched", ContentType: "text/plain" } });
    expect(mine).toContainEqual({ command: "GetObjectCommand", input: { Bucket: BUCKET, Key: liveFrameKey(runId) } });
    expect(mine).toContainEqual({ command: "GetObjectCommand", input: { Bucket: BUCKET, Key: liveFrameKey(runId), IfNoneMatch: `"${(frames.at(-1) as SseEvent).id}"` } });
    expect(new Set(mine.map((call) => call.command))).toEqual(new Set(["PutObjectCommand", "GetObjectCommand"]));

    const run = await ended(runId);
    expect(run.status).toBe("succeeded");
    // At most one frame a second went up, over the run's one key.
    const seconds = (Date.now() - started) / 1000;
    expect(postsOf(liveFrameKey(runId))).toBeGreaterThanOrEqual(2);
    expect(postsOf(liveFrameKey(runId))).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    const last = await live("acme", runId);
    expect(sseEvents(last.body ?? "")).toEqual([{ event: "end", id: undefined, data: { run_id: runId, status: "succeeded" } }]);
    // Another account's watcher: 404, and no marker written for it.
    const before = calls.length;
    expect((await live("globex", runId)).statusCode).toBe(404);
    expect(calls.length).toBe(before);
  }, 120_000);

  it("signs a frame form that takes only a JPEG of at most 200 KB under the run's one key, and a HEAD of its marker", async () => {
    await world.create("acme", "brief", TICKER);
    const runId = runIdOf(await world.invoke("acme", "brief", { ticks: 1 }));
    await ended(runId);
    const form = eventOf(runId)?.uploads.live?.frame;
    const policy = JSON.parse(Buffer.from(form?.fields.Policy ?? "", "base64").toString("utf8")) as { conditions: unknown[] };
    expect(policy.conditions).toEqual([
      ["content-length-range", 0, 200 * 1024],
      ["eq", "$Content-Type", "image/jpeg"],
      ["starts-with", "$x-amz-meta-url", ""],
      ["starts-with", "$x-amz-meta-width", ""],
      ["starts-with", "$x-amz-meta-height", ""],
      { bucket: BUCKET },
      { "X-Amz-Algorithm": "AWS4-HMAC-SHA256" },
      { "X-Amz-Credential": expect.stringMatching(/^AKIDTEST\/\d{8}\/eu-west-1\/s3\/aws4_request$/) },
      { "X-Amz-Date": expect.stringMatching(/^\d{8}T\d{6}Z$/) },
      { key: liveFrameKey(runId) },
    ]);
    const watched = new URL(eventOf(runId)?.uploads.live?.watched_url ?? "");
    expect(watched.pathname).toBe(`/${BUCKET}/${liveWatchKey(runId)}`);
    expect(watched.searchParams.get("X-Amz-SignedHeaders")).toBe("host");

    // What S3 does with the form: a JPEG passes; too big, another type or another key do not.
    const post = async (bytes: number, type: string, key?: string) => {
      const body = new FormData();
      for (const [field, value] of Object.entries(form?.fields ?? {})) body.append(field, field === "key" && key ? key : value);
      body.append("Content-Type", type);
      for (const name of ["url", "width", "height"]) body.append(`x-amz-meta-${name}`, "1");
      body.append("file", new Blob([Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(bytes - 3)])]), "latest.jpg");
      return (await fetch(form?.url ?? "", { method: "POST", body })).status;
    };
    expect(await post(1000, "image/jpeg")).toBe(204);
    expect(await post(200 * 1024 + 1, "image/jpeg")).toBe(400);
    expect(await post(1000, "text/html")).toBe(403);
    expect(await post(1000, "image/jpeg", liveFrameKey("run_someone_else"))).toBe(403);
  }, 60_000);

  it("lets a run nobody watches upload no frame: its Lambda only looks at the marker", async () => {
    await world.create("acme", "unwatched", TICKER);
    const runId = runIdOf(await world.invoke("acme", "unwatched", { ticks: 16 }));
    expect((await ended(runId)).status).toBe("succeeded");
    const looks = world.pipeline.s3.requests.filter((request) => request === `HEAD /${BUCKET}/${liveWatchKey(runId)}`).length;
    expect(looks).toBeGreaterThanOrEqual(2);
    expect(postsOf(liveFrameKey(runId))).toBe(0);
    expect(world.pipeline.s3.objects.has(`${BUCKET}/${liveFrameKey(runId)}`)).toBe(false);
  }, 60_000);

  it("re-checks the recordings a run uploaded before they are kept: forged ones dropped, the secret planted in one redacted, field by field", async () => {
    const fn = await world.create("acme", "forger", FORGER);
    const put = await putSecret(world.deps)(apiEvent("acme", "PUT", "/functions/forger/secrets/TOKEN", { value: TOKEN }, { ref: "forger", name: "TOKEN" }), lambdaContext("putSecret", "req"));
    expect(put.statusCode).toBeLessThan(300);
    const runId = runIdOf(await world.invoke("acme", "forger", {}));
    const run = await ended(runId);
    expect([run.status, run.function_id]).toEqual(["succeeded", fn.function_id]);
    const listed = await world.pipeline.memory.store.artifacts.list(runId);
    expect(listed.map((item) => [item.name, item.content_type]).sort()).toEqual([
      ["notes.txt", "text/plain; charset=utf-8"],
      ["recording-1.json", "application/json"],
    ]);
    const kept = world.pipeline.s3.objects.get(`${BUCKET}/${artifactKey(runId, "recording-1.json")}`)?.toString("utf8") ?? "";
    expect(kept).not.toContain(TOKEN);
    expect(JSON.parse(kept)).toEqual([
      { type: 4, data: { href: "https://example.test/?t=[secret]", width: 800, height: 600 }, timestamp: 1 },
      { type: 3, data: { source: 5, text: "[secret]", id: 7 }, timestamp: 2 },
    ]);
    expect(listed.find((item) => item.name === "recording-1.json")?.bytes).toBe(Buffer.byteLength(kept));
    expect(world.pipeline.logs).toEqual(
      expect.arrayContaining([
        `run recorder: recording recording-2.json of ${runId} dropped: not a recording: nested deeper than 600 levels`,
        `run recorder: recording recording-3.json of ${runId} dropped: not a recording: not an array of events`,
      ]),
    );
    // Read through the SDK from its slot, written back checked; never copied as it came.
    const mine = calls.filter((call) => String(call.input.Key).includes(runId));
    expect(mine.filter((call) => call.command === "GetObjectCommand").map((call) => call.input)).toEqual([0, 1, 2].map((slot) => ({ Bucket: BUCKET, Key: `outcomes/${runId}/artifact-${slot}` })));
    expect(mine.filter((call) => call.command === "PutObjectCommand").map((call) => ({ ...call.input, Body: Buffer.from(call.input.Body as Uint8Array).toString("utf8") }))).toEqual([
      { Bucket: BUCKET, Key: artifactKey(runId, "recording-1.json"), Body: kept, ContentType: "application/json" },
    ]);
    // Nothing of the forged ones is left: not kept, and the run's uploads swept (once its workflow is over).
    await world.pipeline.settled();
    expect([...world.pipeline.s3.objects.keys()].filter((key) => key.includes(runId)).sort()).toEqual([`${BUCKET}/${artifactKey(runId, "notes.txt")}`, `${BUCKET}/${artifactKey(runId, "recording-1.json")}`]);
  }, 60_000);

  it("checks at most 20 MB of a run's recordings in all: past it a recording is dropped unread", async () => {
    await world.create("acme", "bloater", BLOATER);
    const runId = runIdOf(await world.invoke("acme", "bloater", {}));
    const run = await ended(runId);
    expect(run.status).toBe("succeeded");
    const bytes = Number(JSON.parse(run.result_json ?? "0"));
    expect(bytes).toBeGreaterThan(12 * 1024 * 1024 - 4096);
    expect((await world.pipeline.memory.store.artifacts.list(runId)).map((item) => [item.name, item.bytes])).toEqual([["recording-1.json", bytes]]);
    expect(world.pipeline.logs).toContain(`run recorder: recording recording-2.json of ${runId} dropped: not a recording: the run's recordings are over ${20 * 1024 * 1024} bytes (this one ${bytes})`);
    // The second was not read: one GetObject of the run's slots only.
    expect(calls.filter((call) => call.command === "GetObjectCommand" && String(call.input.Key).includes(runId)).map((call) => call.input.Key)).toEqual([`outcomes/${runId}/artifact-0`]);
  }, 60_000);

  it("keeps a real page's rrweb recording through the check, the secret redacted", async () => {
    await world.create("acme", "recorded", RECORDED, { recording: "all" });
    await putSecret(world.deps)(apiEvent("acme", "PUT", "/functions/recorded/secrets/TOKEN", { value: TOKEN }, { ref: "recorded", name: "TOKEN" }), lambdaContext("putSecret", "req"));
    const runId = runIdOf(await world.invoke("acme", "recorded", {}));
    const run: RunItem = await ended(runId);
    expect(run.status).toBe("succeeded");
    const kept = world.pipeline.s3.objects.get(`${BUCKET}/${artifactKey(runId, "recording-1.json")}`)?.toString("utf8") ?? "";
    const events = JSON.parse(kept) as { type: number }[];
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining([4, 2, 3]));
    expect(kept).toContain("Orders");
    expect(kept).not.toContain(TOKEN);
  }, 60_000);

  it("records a popup on the Lambda runner too: each page its own recording, kept for a failed run, the typed password masked", async () => {
    await world.create("acme", "popups", POPUPS);
    const runId = runIdOf(await world.invoke("acme", "popups", {}));
    const run: RunItem = await ended(runId);
    expect(run.status).toBe("failed");
    const names = (await world.pipeline.memory.store.artifacts.list(runId)).map((item) => item.name).sort();
    // The failure's screenshot and HTML of each page too; one recording per page.
    expect(names.filter((name) => name.startsWith("recording-"))).toEqual(["recording-1.json", "recording-2.json"]);
    expect(names).toEqual(expect.arrayContaining(["failure-1.png", "failure-2.png"]));
    const [opener, popup] = [1, 2].map((n) => world.pipeline.s3.objects.get(`${BUCKET}/${artifactKey(runId, `recording-${n}.json`)}`)?.toString("utf8") ?? "");
    expect(opener).toContain("the opener on lambda");
    expect(popup).toContain("popup written on lambda");
    expect((JSON.parse(popup ?? "[]") as { type: number }[]).some((event) => event.type === 2)).toBe(true);
    for (const text of [opener, popup]) expect(text).not.toContain(TYPED);
  }, 90_000);
});
