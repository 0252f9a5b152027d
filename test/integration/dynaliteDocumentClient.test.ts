import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GetCommand, PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { DynaliteDocumentClient, STORE_SECRET_HEADER } from "../../lambdas/local/dynaliteDocumentClient";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";
import { startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient, type DocumentSender, isStoreUnavailable, scanAll } from "../../lambdas/store/dynamo";
import { ECHO_FN, NO_PARAMS_FN } from "../helpers/code";
import { startTestService } from "../helpers/localService";

type Answer = { ok: true; value: unknown } | { ok: false; name: string; message: string };

function sortedItems(items: Record<string, unknown>[]): Record<string, unknown>[] {
  const key = (item: Record<string, unknown>) => `${String(item.pk)}\u0000${String(item.sk)}`;
  return [...items].sort((a, b) => key(a).localeCompare(key(b)));
}

/** What a send gave, without what differs by nature ($metadata: request ids, retry counts). */
async function answerOf(send: () => Promise<unknown>): Promise<Answer> {
  try {
    const { $metadata, ...value } = (await send()) as Record<string, unknown>;
    expect($metadata).toMatchObject({ httpStatusCode: 200 });
    return { ok: true, value };
  } catch (error) {
    return { ok: false, name: (error as Error).name, message: (error as Error).message };
  }
}

/**
 * A document client that sends each command to the local service's own client (the lean one,
 * on the service's dynalite) and to the SDK's client (on a second dynalite that gets the very
 * same writes), one command at a time so that both stores see one order, and records every
 * command whose answers differ. The service goes on with the lean client's answer.
 */
function comparingClient(sdk: DocumentSender) {
  const differences: { command: string; input: unknown; lean: Answer; sdk: Answer }[] = [];
  const commands = new Map<string, number>();
  let queue: Promise<unknown> = Promise.resolve();
  const wrap = (lean: DocumentSender): DocumentSender => ({
    send: ((command: { constructor: { name: string }; input: unknown }) => {
      const turn = queue.then(async () => {
        const name = command.constructor.name;
        commands.set(name, (commands.get(name) ?? 0) + 1);
        const leanAnswer = await answerOf(() => lean.send(command as PutCommand));
        const sdkAnswer = await answerOf(() => sdk.send(command as PutCommand));
        // BatchGetItem answers its items in no particular order (DynamoDB's own says so): compared as sets.
        if (name === "BatchGetCommand") [leanAnswer, sdkAnswer].forEach(sortBatchGetItems);
        if (!equalAnswers(leanAnswer, sdkAnswer)) differences.push({ command: name, input: command.input, lean: leanAnswer, sdk: sdkAnswer });
        if (leanAnswer.ok) return { ...(leanAnswer.value as object), $metadata: { httpStatusCode: 200 } };
        throw Object.assign(new Error(leanAnswer.message), { name: leanAnswer.name });
      });
      queue = turn.catch(() => undefined);
      return turn;
    }) as DocumentSender["send"],
  });
  return { wrap, differences, commands };
}

/** A BatchGet answer's items of each table sorted by their JSON text, in place. */
function sortBatchGetItems(answer: Answer): void {
  if (!answer.ok) return;
  const responses = (answer.value as { Responses?: Record<string, unknown[]> }).Responses ?? {};
  for (const items of Object.values(responses)) items.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function equalAnswers(a: Answer, b: Answer): boolean {
  try {
    expect(a).toStrictEqual(b);
    return true;
  } catch {
    return false;
  }
}

describe("the local document client (DynaliteDocumentClient)", () => {
  it("answers every store call of a service at work exactly as the SDK's document client does", async () => {
    const second = await startDynalite(null);
    const sdk = createDocumentClient(dynaliteClientConfig(second.endpoint, second.secret));
    await createTablesIfMissing(sdk.client, "browserfn");
    const comparing = comparingClient(sdk.doc);
    const t = await startTestService({ serviceOptions: { wrapStoreClient: comparing.wrap } });
    try {
      // Code over 16 KB goes to binary (gzipped) part items; params over 16 KB too.
      const bigCode = `${ECHO_FN}\n// ${"padding ".repeat(4000)}\n`;
      await t.deploy("echo", bigCode, { description: "ü ✓ \u0000-free", timeout_seconds: 30 });
      await t.deploy("plain", NO_PARAMS_FN, { schedule: "0 3 * * *", schedule_timezone: "Europe/Berlin" });
      expect((await t.call("POST", "/functions", { body: { name: "echo", code: NO_PARAMS_FN } })).status).toBe(409);
      for (const times of [1, 2, 3]) {
        expect((await t.call("POST", "/functions/echo", { body: { message: "m".repeat(times === 3 ? 40_000 : 5), times } })).status).toBe(200);
      }
      expect((await t.call("POST", "/functions/plain")).status).toBe(200);
      expect((await t.call("PATCH", "/functions/echo", { body: { code: ECHO_FN, memory_mb: 1024 } })).status).toBe(200);
      const reads = ["/functions?limit=1", "/functions/echo/info", "/functions/echo/versions", "/functions/echo/logs?limit=2", "/functions/echo/metrics", "/usage", "/api-keys"];
      for (const path of reads) expect((await t.call("GET", path)).status).toBe(200);
      const run = (await t.call("POST", "/functions/echo", { body: { message: "x", times: 1 } })).headers.get("x-run-id");
      expect((await t.call("GET", `/runs/${run}`)).status).toBe(200);
      // A batch: its runs written by BatchWrite, its counts and runs read by BatchGet.
      const batch = await t.call("POST", "/functions/echo/batch", { body: { items: [{ message: "b1" }, { message: "b2", times: 2 }] } });
      expect(batch.status).toBe(202);
      for (let i = 0; i < 100 && (await t.call("GET", `/batches/${batch.body.batch_id}`)).body.finished_at === null; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await t.call("GET", `/batches/${batch.body.batch_id}/runs`)).body.items).toHaveLength(2);
      const other = await t.newAccount("acct-other", "free");
      const fnId = (await t.call("GET", "/functions/plain/info")).body.function_id as string;
      expect((await t.call("PATCH", "/functions/plain", { body: { shared: true } })).status).toBe(200);
      expect((await t.call("POST", `/functions/${fnId}/fork`, { token: other })).status).toBe(201);
      const keys = (await t.call("GET", "/api-keys")).body.items as { key_id: string }[];
      const created = await t.call("POST", "/api-keys", { body: {} });
      expect(created.status).toBe(201);
      expect((await t.call("DELETE", `/api-keys/${(created.body as { key_id: string }).key_id}`)).status).toBe(204);
      expect(keys.length).toBeGreaterThan(0);
      expect((await t.call("DELETE", "/functions/echo")).status).toBe(204);
      expect((await t.call("GET", "/functions/echo/info")).status).toBe(404);
      // The second store, written through the SDK's client, is item for item the service's.
      const own = createDocumentClient(dynaliteClientConfig(t.service.dynamoEndpoint, t.service.storeSecret));
      try {
        const scan = (doc: DocumentSender) => scanAll(doc, { TableName: "browserfn-main" }).then(sortedItems);
        const [mine, theirs] = await Promise.all([scan(own.doc), scan(sdk.doc)]);
        expect(mine.length).toBeGreaterThan(10);
        expect(theirs).toEqual(mine);
      } finally {
        own.client.destroy();
      }
    } finally {
      await t.destroy();
      sdk.client.destroy();
      await second.close();
    }
    expect(comparing.differences.slice(0, 2)).toEqual([]); // the first two, if any
    const kinds = ["GetCommand", "PutCommand", "UpdateCommand", "DeleteCommand", "QueryCommand", "ScanCommand", "BatchWriteCommand", "BatchGetCommand"];
    const used = (name: string) => (comparing.commands.get(name) ?? 0) > 0;
    expect(kinds.filter((name) => !used(name))).toEqual([]); // every kind of call the stores make went through both
  }, 120_000);

  describe("failures, as the SDK reports them", () => {
    let server: Server | undefined;
    afterEach(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
      server = undefined;
    });

    const SECRET = "scripted-store-secret";

    /**
     * An HTTP server on 127.0.0.1 that answers request n with answers[n] (or never, for "hang");
     * `secrets()` is the store-secret header of each request it got.
     */
    async function scripted(
      answers: ({ status: number; body: string } | "hang")[],
    ): Promise<{ endpoint: string; requests: () => number; secrets: () => unknown[] }> {
      let count = 0;
      const secrets: unknown[] = [];
      server = createServer((req, res) => {
        secrets.push(req.headers[STORE_SECRET_HEADER]);
        const answer = answers[Math.min(count++, answers.length - 1)];
        req.resume();
        if (answer === "hang" || answer === undefined) return;
        res.writeHead(answer.status, { "content-type": "application/x-amz-json-1.0" }).end(answer.body);
      });
      await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
      return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => count, secrets: () => secrets };
    }

    it("names DynamoDB's errors by their type and keeps the message", async () => {
      const dynamo = await startDynalite(null);
      const lean = new DynaliteDocumentClient(dynamo.endpoint, dynamo.secret, { requestTimeoutMs: 5000, maxAttempts: 3 });
      try {
        const error = await lean.send(new GetCommand({ TableName: "missing", Key: { pk: "a" } })).catch((e: unknown) => e as Error);
        expect(error).toMatchObject({ name: "ResourceNotFoundException", message: "Requested resource not found", $fault: "client" });
        expect(isStoreUnavailable(error)).toBe(false);
      } finally {
        lean.destroy();
        await dynamo.close();
      }
    });

    it("tries a 5xx or a throttled request again, up to maxAttempts", async () => {
      const throttled = { status: 400, body: JSON.stringify({ __type: "com.amazonaws.dynamodb.v20120810#ThrottlingException", message: "slow down" }) };
      const ok = { status: 200, body: JSON.stringify({ Item: { pk: { S: "a" }, n: { N: "2" }, b: { B: Buffer.from("hi").toString("base64") } } }) };
      const { endpoint, requests, secrets } = await scripted([{ status: 500, body: "oops" }, throttled, ok]);
      const lean = new DynaliteDocumentClient(endpoint, SECRET, { requestTimeoutMs: 5000, maxAttempts: 3 });
      try {
        const answer = await lean.send(new GetCommand({ TableName: "t", Key: { pk: "a" } }));
        expect(answer.Item).toEqual({ pk: "a", n: 2, b: new Uint8Array(Buffer.from("hi")) });
        expect(answer.$metadata).toMatchObject({ attempts: 3 });
        expect(requests()).toBe(3);
        expect(secrets()).toEqual([SECRET, SECRET, SECRET]); // the first request and each retry carry the store's secret
      } finally {
        lean.destroy();
      }
    });

    it("gives up after maxAttempts with the last error, which counts as the store being unavailable", async () => {
      const { endpoint, requests } = await scripted([{ status: 503, body: "" }]);
      const lean = new DynaliteDocumentClient(endpoint, SECRET, { requestTimeoutMs: 5000, maxAttempts: 2 });
      try {
        const error = await lean.send(new PutCommand({ TableName: "t", Item: { pk: "a" } })).catch((e: unknown) => e as Error);
        expect(error).toMatchObject({ name: "InternalServerError", $fault: "server" });
        expect(requests()).toBe(2);
      } finally {
        lean.destroy();
      }
    });

    it("fails a request that is not answered in time with TimeoutError, and a refused connection by its code", async () => {
      const { endpoint, requests } = await scripted(["hang"]);
      const lean = new DynaliteDocumentClient(endpoint, SECRET, { requestTimeoutMs: 100, maxAttempts: 2 });
      try {
        const timedOut = await lean.send(new ScanCommand({ TableName: "t" })).catch((e: unknown) => e as Error);
        expect(timedOut).toMatchObject({ name: "TimeoutError" });
        expect(isStoreUnavailable(timedOut)).toBe(true);
        expect(requests()).toBe(2);
      } finally {
        lean.destroy();
      }
      const refused = new DynaliteDocumentClient("http://127.0.0.1:1", SECRET, { requestTimeoutMs: 100, maxAttempts: 1 });
      const error = await refused.send(new ScanCommand({ TableName: "t" })).catch((e: unknown) => e as Error);
      expect(error).toMatchObject({ code: "ECONNREFUSED" });
      expect(isStoreUnavailable(error)).toBe(true);
      refused.destroy();
    });
  });
});
