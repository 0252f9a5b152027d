import { createHash } from "node:crypto";
import { ApiError } from "../../http/errors";

/**
 * The `cursor` of GET /runs: opaque text naming where the previous page stopped (a run id) and
 * whose list it is (a digest of the account). A cursor of another account, or one that was
 * changed, is 400 `invalid_cursor`; even a forged one can only place the caller in their own
 * runs (every page is read from the caller's account alone).
 */
const VERSION = 1;
const RUN_ID = /^run_[0-9a-z]{26}$/;

const accountTag = (accountId: string) => createHash("sha256").update(`runs-cursor:${accountId}`).digest("base64url").slice(0, 16);
const check = (accountId: string, runId: string) => createHash("sha256").update(`${VERSION}|${accountTag(accountId)}|${runId}`).digest("base64url").slice(0, 8);

/** The cursor of the next page: runs older than `runId`, of `accountId`. */
export function encodeRunCursor(accountId: string, runId: string): string {
  return Buffer.from(JSON.stringify({ v: VERSION, a: accountTag(accountId), r: runId, c: check(accountId, runId) }), "utf8").toString("base64url");
}

/** The run id a cursor of this account names; 400 `invalid_cursor` for anything else. */
export function decodeRunCursor(accountId: string, cursor: string): string {
  const invalid = () => new ApiError("invalid_cursor", "cursor is not a next_cursor GET /runs returned to this account", { field: "cursor" });
  if (cursor.length > 400 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (typeof parsed !== "object" || parsed === null) throw invalid();
  const { v, a, r, c } = parsed as Record<string, unknown>;
  if (v !== VERSION || a !== accountTag(accountId) || typeof r !== "string" || !RUN_ID.test(r) || c !== check(accountId, r)) throw invalid();
  return r;
}
