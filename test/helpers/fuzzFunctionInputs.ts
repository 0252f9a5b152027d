import fc from "fast-check";
import { ECHO_FN, NO_PARAMS_FN } from "./code";
import { mostly, oddJson, oddString, PROTO_KEYS } from "./fuzzInputs";

/** Inputs of the API fuzz tests that concern functions: automations, settings, names. */

/** Takes anything, starts no browser, returns little. */
export const ANY_PARAMS_FN = `export default async function run(a: unknown, b: number = 1) {
  return { a: typeof a, b };
}
`;

/** Every kind of parameter type the checker models; starts no browser. */
export const TARGET_FN = `export default async function run(text: string, count: number = 1, flag?: boolean, tags: string[] = [],
  mode: "fast" | "full" = "fast", options?: Record<string, unknown>, extra?: unknown, nums?: Array<number | null>) {
  return { kinds: [typeof text, typeof count, typeof flag, Array.isArray(tags), mode, typeof options, typeof extra, Array.isArray(nums)] };
}
`;
export const TARGET_PARAMS = ["text", "count", "flag", "tags", "mode", "options", "extra", "nums"];

/** Code of exactly 262,144 UTF-8 bytes (the limit), and one byte more. */
const codeOfBytes = (bytes: number) => {
  const head = "export default async () => 1;\n//";
  return head + "é".repeat(Math.floor((bytes - head.length) / 2)) + "x".repeat((bytes - head.length) % 2);
};
export const CODE_AT_LIMIT = codeOfBytes(262_144);
export const CODE_OVER_LIMIT = codeOfBytes(262_145);

export const CODES = [NO_PARAMS_FN, ECHO_FN, ANY_PARAMS_FN, `${NO_PARAMS_FN}// v2\n`, "export default function plain(a, b = 2) { return a; }\n"];
export const BAD_CODES = [
  "export default 42;",
  "export const x = 1;",
  "export default async function (a {\n}",
  "export default async function* gen() {}",
  "export default class A {}",
  "export = 1;",
  "export default async (...args) => args;",
  "export default async ([a, b]) => a;",
  "export default async ({ a: { b } }) => b;",
  'export { run as default } from "./other";',
  "",
  "\u0000",
];

/** Fields of create and update: mostly valid, sometimes at or past an edge, now and then anything. */
export const settingsFields = {
  code: fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...CODES) },
    { weight: 3, arbitrary: fc.constantFrom(...BAD_CODES) },
    { weight: 1, arbitrary: fc.constantFrom(CODE_AT_LIMIT, CODE_OVER_LIMIT) },
    { weight: 1, arbitrary: oddString },
    { weight: 1, arbitrary: oddJson },
  ),
  description: mostly(fc.oneof(fc.string({ maxLength: 40 }), fc.constant(null)), fc.oneof(oddString, fc.constantFrom("d".repeat(1000), "d".repeat(1001)))),
  schedule: mostly(
    fc.constantFrom(null, "@daily", "@yearly", "0 0 1 1 *", "@hourly", "0 9 * * MON-FRI", "30 4 1,15 * *"),
    fc.oneof(fc.constantFrom("* * * *", "61 * * * *", "0 0 31 2 *", "@every 1s", "*/0 * * * *", "0-99 * * * *", "1,,3 * * * *", "0 0 * * 8", "@reboot", "0 0 1 1 * 2030"), oddString),
  ),
  schedule_timezone: mostly(
    fc.constantFrom("UTC", "Europe/Paris", "Etc/GMT+14", "America/Argentina/Buenos_Aires", "Asia/Kathmandu"),
    fc.oneof(fc.constantFrom("Mars/Base", "", "../../etc/passwd", "utc", "EST5EDT", "Europe/Paris\u0000", "+05:00"), oddString),
  ),
  schedule_params: mostly(
    fc.oneof(fc.constant(null), fc.dictionary(fc.constantFrom("a", "b", "message", "times"), fc.oneof(fc.string(), fc.integer()), { maxKeys: 2 })),
    fc.dictionary(fc.oneof(oddString, fc.constantFrom(...PROTO_KEYS)), oddJson, { maxKeys: 3 }),
  ),
  timeout_seconds: mostly(fc.integer({ min: 1, max: 300 }), fc.constantFrom(-1, 0, 900, 901, 1.5, 1e300, "60")),
  memory_mb: mostly(fc.integer({ min: 128, max: 2048 }), fc.constantFrom(0, 127, 10240, 10241, 1024.5, "1024")),
  shared: mostly(fc.boolean(), fc.constantFrom(0, 1, "true", null)),
};

export const newName = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
export const nameField = mostly(
  newName,
  fc.constantFrom("plain", "anyp", "target", "a".repeat(63), "a".repeat(64), "Upper", "a_b", "1abc", "-x", "a/b", "a.b", "é", "a\u0000"),
  fc.oneof(oddString, oddJson),
);
