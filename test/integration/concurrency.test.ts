import { createHash } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";
import { ECHO_FN, NO_PARAMS_FN } from "../helpers/code";
import { startTestService, type TestService } from "../helpers/localService";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.destroy());

async function scanAll(): Promise<Record<string, unknown>[]> {
  const client = new DynamoDBClient(dynaliteClientConfig(t.service.dynamoEndpoint, t.service.storeSecret));
  try {
    const doc = DynamoDBDocumentClient.from(client);
    const { Items } = await doc.send(new ScanCommand({ TableName: "browserfn-main" }));
    return Items ?? [];
  } finally {
    client.destroy();
  }
}

/** Function ids that own versions or code but have no record: what a failed write would leave. */
async function orphanFunctionIds(): Promise<string[]> {
  const items = await scanAll();
  const records = new Set(items.filter((i) => String(i.sk).startsWith("FN#")).map((i) => String(i.function_id)));
  const owners = new Set(items.filter((i) => String(i.pk).startsWith("FNID#")).map((i) => String(i.pk).slice(5)));
  return [...owners].filter((id) => !records.has(id));
}

describe("concurrent writes", () => {
  it("gives exactly one 201 and nineteen 409s for 20 concurrent creates of one name, and leaves nothing behind", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.call("POST", "/functions", { body: { name: "contested", code: `${NO_PARAMS_FN}// writer ${i}\n` } }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const r of responses.filter((r) => r.status === 409)) expect(r.body.error.code).toBe("function_exists");
    const winner = responses.find((r) => r.status === 201)?.body;
    const versions = await t.call("GET", "/functions/contested/versions");
    expect(versions.body.items).toHaveLength(1);
    expect(await orphanFunctionIds()).toEqual([]);
    const code = await t.call("GET", "/functions/contested/versions/1");
    expect(code.body.code_sha256).toBe(versions.body.items[0].code_sha256);
    expect(winner.function_id).toMatch(/^fn_/);
  });

  it("loses no update when 10 code changes race on one function", async () => {
    await t.call("POST", "/functions", { body: { name: "raced", code: ECHO_FN } });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.call("PATCH", "/functions/raced", { body: { code: `${ECHO_FN}// change ${i}\n` } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    const info = (await t.call("GET", "/functions/raced/info")).body;
    expect(info.latest_version).toBe("11");
    expect(info.versions).toEqual(Array.from({ length: 11 }, (_, i) => String(i + 1)));
    const versions = (await t.call("GET", "/functions/raced/versions")).body.items;
    expect(versions.map((v: { version: string }) => v.version)).toEqual(info.versions);
    expect(new Set(versions.map((v: { code_sha256: string }) => v.code_sha256)).size).toBe(11);
    // Each version's stored code is the code its hash names.
    for (const v of versions) {
      const { body } = await t.call("GET", `/functions/raced/versions/${v.version}`);
      expect(createHash("sha256").update(body.code).digest("hex")).toBe(v.code_sha256);
    }
    expect(await orphanFunctionIds()).toEqual([]);
  });

  it("removes every version and code part on delete, and a failed fork leaves nothing", async () => {
    await t.call("POST", "/functions", { body: { name: "doomed", code: ECHO_FN } });
    const id = (await t.call("PATCH", "/functions/doomed", { body: { code: `${ECHO_FN}//2\n`, shared: true } })).body.function_id;
    expect((await t.call("POST", `/functions/${id}/fork`, { body: { name: "raced" } })).status).toBe(409);
    expect(await orphanFunctionIds()).toEqual([]);
    await t.call("DELETE", "/functions/doomed");
    const left = (await scanAll()).filter((i) => String(i.pk) === `FNID#${id}`);
    expect(left).toEqual([]);
  });
});
