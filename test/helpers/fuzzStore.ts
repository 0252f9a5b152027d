import { createHash } from "node:crypto";
import { fromParts } from "../../lambdas/store/blobParts";
import { createDocumentClient, scanAll } from "../../lambdas/store/dynamo";
import { MAIN_TABLE, tableName } from "../../lambdas/store/tables";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";
import type { LocalService } from "../../lambdas/local/localService";
import type { TestService } from "./localService";

/** What a test made through the API, to hold the table against. */
export interface Expected {
  /** Every account that exists (the bootstrap account `local` included). */
  accounts: Set<string>;
  /** How many API keys exist (created and not revoked, the bootstrap key included). */
  keys: number;
  /** function_id of every function whose create (or fork) answered 201, deleted or not. */
  everCreated: Set<string>;
  /** `account/name` of every function that exists now (201 and no 204 since). */
  functions: Set<string>;
}

/** Every item of the service's table, read directly from its dynalite (with the store's secret). */
export async function scanTable(
  service: Pick<LocalService, "dynamoEndpoint" | "storeSecret">,
  tablePrefix = "browserfn",
): Promise<Record<string, unknown>[]> {
  const { client, doc } = createDocumentClient(dynaliteClientConfig(service.dynamoEndpoint, service.storeSecret));
  try {
    return await scanAll(doc, { TableName: tableName(tablePrefix, MAIN_TABLE), ConsistentRead: true });
  } finally {
    client.destroy();
  }
}

/**
 * Checks the table against what the test made and against itself; returns every problem
 * found (empty: consistent). Each function record has all its versions, each version its
 * code parts (which decode to the source whose SHA-256 it names); no version, code part,
 * run, usage or firing item belongs to a function that was never created; no account, key or
 * function exists beyond those the test made; nothing of an unknown kind is there.
 */
export function tableProblems(items: Record<string, unknown>[], expected: Expected): string[] {
  const problems: string[] = [];
  const records = new Map<string, Record<string, unknown>>();
  const versions = new Map<string, Record<string, unknown>>();
  const parts = new Map<string, { part: number; data: Uint8Array }[]>();
  const runs = new Set<string>();
  const accounts = new Set<string>();
  let keyItems = 0;
  const later: (() => void)[] = [];

  for (const item of items) {
    const pk = String(item.pk);
    const sk = String(item.sk);
    const where = `${pk} ${sk}`;
    if (pk.startsWith("ACCOUNT#")) {
      const account = pk.slice("ACCOUNT#".length);
      if (sk === "ACCOUNT") accounts.add(account);
      else if (sk.startsWith("FN#")) records.set(String(item.function_id), item);
      else if (sk === "LIMITS" || sk === "STORAGE" || sk.startsWith("USAGE#")) {
        later.push(() => {
          if (!accounts.has(account)) problems.push(`${where}: belongs to an account that does not exist`);
          if (sk.startsWith("USAGE#") && !expected.everCreated.has(String(item.function_id))) {
            problems.push(`${where}: usage of a function that was never created`);
          }
        });
      } else problems.push(`${where}: unknown kind of item`);
    } else if (pk.startsWith("LIMITS#") && sk === "LIMITS") {
      const account = pk.slice("LIMITS#".length);
      later.push(() => {
        if (!accounts.has(account)) problems.push(`${where}: belongs to an account that does not exist`);
      });
    } else if (pk.startsWith("KEY#") && sk === "KEY") {
      keyItems++;
      if (item.key_hash !== pk.slice("KEY#".length)) problems.push(`${where}: key_hash does not match its key`);
      later.push(() => {
        if (!accounts.has(String(item.account_id))) problems.push(`${where}: key of an account that does not exist`);
      });
    } else if (pk.startsWith("FNID#")) {
      const functionId = pk.slice("FNID#".length);
      const [kind, version, token, field, part] = sk.split("#");
      if (kind === "VER") versions.set(`${functionId}#${Number(version)}`, item);
      else if (kind === "CODE" && token && field && part !== undefined) {
        const key = `${functionId}#${Number(version)}#${token}#${field}`;
        parts.set(key, [...(parts.get(key) ?? []), { part: Number(part), data: item.data as Uint8Array }]);
      } else if (kind === "FIRE") {
        if (!expected.everCreated.has(functionId)) problems.push(`${where}: firing of a function that was never created`);
      } else problems.push(`${where}: unknown kind of item`);
    } else if (pk.startsWith("RUN#")) {
      if (sk === "RUN") {
        runs.add(pk);
        if (!expected.everCreated.has(String(item.function_id))) problems.push(`${where}: run of a function that was never created`);
        later.push(() => {
          if (!accounts.has(String(item.account_id))) problems.push(`${where}: run of an account that does not exist`);
        });
      } else if (sk.startsWith("RESULT#") || sk.startsWith("PARAMS#")) {
        later.push(() => runs.has(pk) || problems.push(`${where}: ${sk.split("#")[0]?.toLowerCase()} part without its run`));
      }
      else problems.push(`${where}: unknown kind of item`);
    } else problems.push(`${where}: unknown kind of item`);
  }
  later.forEach((check) => check());

  const missing = [...expected.accounts].filter((a) => !accounts.has(a));
  const extra = [...accounts].filter((a) => !expected.accounts.has(a));
  if (missing.length > 0 || extra.length > 0) problems.push(`accounts: missing ${missing.join(", ") || "none"}; extra ${extra.join(", ") || "none"}`);
  if (keyItems !== expected.keys) problems.push(`api keys: ${keyItems} in the table, ${expected.keys} made`);

  const names = new Set([...records.values()].map((r) => `${String(r.account_id)}/${String(r.name)}`));
  const missingFns = [...expected.functions].filter((n) => !names.has(n));
  const extraFns = [...names].filter((n) => !expected.functions.has(n));
  if (missingFns.length > 0 || extraFns.length > 0) {
    problems.push(`functions: missing ${missingFns.join(", ") || "none"}; extra ${extraFns.join(", ") || "none"}`);
  }

  const usedParts = new Set<string>();
  for (const [functionId, record] of records) {
    const where = `function ${String(record.account_id)}/${String(record.name)} (${functionId})`;
    if (!expected.everCreated.has(functionId)) problems.push(`${where}: never answered 201`);
    const latest = Number(record.latest_version);
    for (let v = 1; v <= latest; v++) {
      const version = versions.get(`${functionId}#${v}`);
      if (!version) {
        problems.push(`${where}: version ${v} of ${latest} is missing`);
        continue;
      }
      for (const field of ["source", "js"]) {
        const key = `${functionId}#${v}#${String(version.code_token)}#${field}`;
        usedParts.add(key);
        const found = (parts.get(key) ?? []).sort((a, b) => a.part - b.part);
        if (found.length === 0 || found.some((p, i) => p.part !== i)) {
          problems.push(`${where}: version ${v} ${field} parts ${found.map((p) => p.part).join(",") || "none"}`);
          continue;
        }
        if (field === "source") {
          const source = fromParts(found.map((p) => p.data));
          const sha = createHash("sha256").update(source, "utf8").digest("hex");
          if (sha !== version.code_sha256) problems.push(`${where}: version ${v} source does not match its code_sha256`);
          if (v === latest && sha !== record.code_sha256) problems.push(`${where}: code_sha256 is not the latest version's`);
        }
      }
    }
    for (const key of versions.keys()) {
      const [id, v] = key.split("#");
      if (id === functionId && Number(v) > latest) problems.push(`${where}: version ${v} past latest ${latest}`);
    }
  }
  for (const key of versions.keys()) {
    const [id] = key.split("#");
    if (!records.has(id ?? "")) problems.push(`version ${key}: no function record`);
  }
  for (const key of parts.keys()) if (!usedParts.has(key)) problems.push(`code parts ${key}: no version points to them`);
  return problems;
}

/**
 * Asserts that the service's table holds exactly what `expected` says (see tableProblems) and
 * that each account's paged function list (by its token) names exactly its expected functions.
 */
export async function expectStoreHolds(t: TestService, expected: Expected, tokens: Record<string, string>): Promise<void> {
  expect(tableProblems(await scanTable(t.service), expected)).toEqual([]);
  for (const [account, token] of Object.entries(tokens)) {
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await t.call("GET", `/functions?limit=7${cursor ? `&cursor=${cursor}` : ""}`, { token });
      expect(page.status).toBe(200);
      listed.push(...page.body.items.map((item: { name: string }) => `${account}/${item.name}`));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(listed).toEqual([...expected.functions].filter((n) => n.startsWith(`${account}/`)).sort());
  }
}
