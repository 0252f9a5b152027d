import type fc from "fast-check";
import { ERROR_STATUS } from "../../lambdas/http/errors";
import { sendRequest } from "./http";

/**
 * fast-check settings of the fuzz tests: a fixed seed (FUZZ_SEED to change it; fast-check
 * prints seed and path of a failure to replay it), and `runs` cases per property, or
 * FUZZ_RUNS for a longer run (`FUZZ_RUNS=2000 npx jest test/integration/fuzz`).
 */
export function fuzzSettings(runs: number): fc.Parameters<unknown> {
  const override = Number(process.env.FUZZ_RUNS ?? "");
  return {
    seed: Number(process.env.FUZZ_SEED ?? 20261122),
    numRuns: Number.isInteger(override) && override > 0 ? override : runs,
  };
}

/** Outcomes per property (status or error code → cases), for FUZZ_REPORT=1. */
const tallies = new Map<string, Map<string, number>>();

export function tally(property: string, outcome: string): void {
  const counts = tallies.get(property) ?? new Map<string, number>();
  counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  tallies.set(property, counts);
}

/** With FUZZ_REPORT=1, writes the cases each property ran and how they were answered. */
export function writeTallies(): void {
  if (process.env.FUZZ_REPORT !== "1") return;
  const lines = [...tallies].map(([property, counts]) => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const outcomes = [...counts].sort((a, b) => b[1] - a[1]).map(([outcome, n]) => `${outcome} ${n}`);
    return `${property}: ${total} cases (${outcomes.join(", ")})`;
  });
  process.stderr.write(`${lines.join("\n")}\n`);
}

export interface Answer {
  status: number;
  /** Header lookup (lowercase names). */
  header(name: string): string | null | undefined;
  text: string;
}

export function fromFetch(response: { status: number; headers: Headers; text: string }): Answer {
  return { status: response.status, header: (name) => response.headers.get(name), text: response.text };
}

export function fromRaw(response: { status: number; headers: Record<string, string>; text: string }): Answer {
  return { status: response.status, header: (name) => response.headers[name], text: response.text };
}

/**
 * Checks one answer to a bad (or possibly bad) request: a success status from `ok`, or the
 * one JSON error shape with a code from `codes` whose status is the code's status. Never a
 * 5xx. Returns the error code, or null for a success. Throws a message naming the request.
 */
export function checkAnswer(
  what: string,
  answer: Answer,
  codes: readonly string[],
  ok: readonly number[] = [],
  property?: string,
): string | null {
  const fail = (problem: string): never => {
    throw new Error(`${what}: ${problem}; got ${answer.status} ${answer.text.slice(0, 500)}`);
  };
  if (property) tally(property, ok.includes(answer.status) ? String(answer.status) : `${answer.status} ${(answer.text.match(/"code":"(\w+)"/) ?? [])[1] ?? "?"}`);
  if (ok.includes(answer.status)) return null;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return fail("the answer is not JSON");
  }
  if (!(answer.header("content-type") ?? "").startsWith("application/json")) fail("content-type is not JSON");
  const error = (body as { error?: Record<string, unknown> }).error;
  if (!error || Object.keys(body as object).join() !== "error") fail("not the error shape");
  const { code, message, request_id, details } = error as Record<string, unknown>;
  if (Object.keys(error as object).sort().join() !== "code,details,message,request_id") fail("error has other members");
  if (typeof code !== "string" || !(code in ERROR_STATUS)) return fail(`unknown code ${String(code)}`);
  if (ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== answer.status) fail(`status does not match code ${code}`);
  if (answer.status >= 500) fail("a 5xx for bad input");
  if (!codes.includes(code)) fail(`code ${code} is not one of ${codes.join(", ")}`);
  if (typeof message !== "string" || message === "") fail("empty message");
  if (typeof request_id !== "string" || request_id !== answer.header("x-request-id")) fail("request_id is not X-Request-Id");
  if (typeof details !== "object" || details === null || Array.isArray(details)) fail("details is not an object");
  if (answer.status === 429 && !answer.header("retry-after")) fail("429 without Retry-After");
  return code;
}

/** An answer with its body parsed when it is JSON (undefined otherwise). */
export interface FetchedAnswer extends Answer {
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One request over loopback HTTP, body sent as is; the answer is not assumed to be JSON. */
export async function fetchAnswer(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<FetchedAnswer> {
  const { response, text } = await sendRequest(baseUrl, method, path, options);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, header: (name) => response.headers.get(name), text, body };
}

/** A jest timeout for a property of `runs` cases (or FUZZ_RUNS) that take up to `msPerCase` each. */
export function fuzzTimeout(runs: number, msPerCase: number): number {
  return Math.max(30_000, (fuzzSettings(runs).numRuns ?? runs) * msPerCase);
}
