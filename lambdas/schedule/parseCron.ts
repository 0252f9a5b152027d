import { ApiError } from "../http/errors";

/**
 * Strict classic (Vixie/cronie) 5-field cron: `minute hour day-of-month month day-of-week`.
 *
 * Each field is a comma list of items; an item is `*`, a value, a range `a-b`, or one of those
 * with a step: `*\/n`, `a-b/n`, or `a/n`, which (as in cronie) means `a-<field max>/n`.
 * Values are numbers or, for month and day-of-week, three-letter names (any case).
 * Day-of-week takes 0-7 (0 and 7 are Sunday; SUN ending a range is 7, so FRI-SUN works); its `*`
 * and `a/n` run up to 7, as in cronie, so `1/2` is MON,WED,FRI,SUN. Nothing else is accepted: no `?`, `L`, `W`, `#`, seconds or years.
 *
 * A field counts as restricted unless it is exactly `*`. When both day fields are restricted
 * a day matching either of them fires (classic OR); otherwise both must match.
 */

export type CronFieldName = "minute" | "hour" | "day-of-month" | "month" | "day-of-week";

/** One comma-separated item: the values start, start+step, … up to end (as written; day-of-week 7 kept). */
export interface CronPart {
  text: string;
  start: number;
  end: number;
  step: number;
}

export interface CronField {
  name: CronFieldName;
  /** The field as written. */
  text: string;
  /** True when the field is exactly `*` (unrestricted). */
  star: boolean;
  /** Every value the field allows, sorted and unique; day-of-week normalized to 0-6 (0 = Sunday). */
  values: number[];
  parts: CronPart[];
  /** The smallest and largest value the field accepts as written (day-of-week: 0-7). */
  min: number;
  max: number;
}

export interface CronFields {
  /** The 5-field form: the schedule itself, or what its nickname stands for. */
  expression: string;
  minute: CronField;
  hour: CronField;
  dayOfMonth: CronField;
  month: CronField;
  dayOfWeek: CronField;
}

/** `@yearly`/`@annually` are accepted too: standard in cronie, and every scheduler here can run them. */
export const NICKNAMES: Readonly<Record<string, string>> = {
  "@hourly": "0 * * * *",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@weekly": "0 0 * * 0",
  "@monthly": "0 0 1 * *",
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
};

interface FieldSpec {
  name: CronFieldName;
  min: number;
  max: number;
  names?: { list: readonly string[]; first: number; label: string };
}

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const SPECS: readonly FieldSpec[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: { list: MONTHS, first: 1, label: "JAN-DEC" } },
  { name: "day-of-week", min: 0, max: 7, names: { list: DAYS, first: 0, label: "SUN-SAT" } },
];

/** Parses a schedule; throws 400 `invalid_schedule` naming the field and value at fault. */
export function parseCron(schedule: string): CronFields {
  const fail = (message: string, field?: CronFieldName, value?: string): never => {
    throw new ApiError("invalid_schedule", message, {
      schedule,
      ...(field === undefined ? {} : { field }),
      ...(value === undefined ? {} : { value }),
    });
  };
  const trimmed = schedule.trim();
  let expression = trimmed;
  if (trimmed.startsWith("@")) {
    const expanded = NICKNAMES[trimmed.toLowerCase()];
    if (expanded === undefined) {
      fail(`'${trimmed}' is not a supported nickname; use one of ${Object.keys(NICKNAMES).join(", ")} or a 5-field cron expression`);
    }
    expression = expanded as string;
  }
  const texts = expression === "" ? [] : expression.split(/\s+/);
  if (texts.length !== 5) {
    fail(`expected 5 fields (minute hour day-of-month month day-of-week), got ${texts.length}`);
  }
  const [minute, hour, dayOfMonth, month, dayOfWeek] = SPECS.map((spec, i) => parseField(spec, texts[i] as string, fail)) as [
    CronField,
    CronField,
    CronField,
    CronField,
    CronField,
  ];
  return { expression: texts.join(" "), minute, hour, dayOfMonth, month, dayOfWeek };
}

type Fail = (message: string, field?: CronFieldName, value?: string) => never;

function parseField(spec: FieldSpec, text: string, fail: Fail): CronField {
  const parts = text.split(",").map((item) => {
    if (item === "") fail(`${spec.name} has an empty list item in '${text}'`, spec.name, text);
    return parsePart(spec, item, fail);
  });
  const values = new Set<number>();
  for (const part of parts) {
    for (let v = part.start; v <= part.end; v += part.step) values.add(spec.name === "day-of-week" ? v % 7 : v);
  }
  return {
    name: spec.name,
    text,
    star: text === "*",
    values: [...values].sort((a, b) => a - b),
    parts,
    min: spec.min,
    max: spec.max,
  };
}

function parsePart(spec: FieldSpec, item: string, fail: Fail): CronPart {
  const slashes = item.split("/");
  if (slashes.length > 2) fail(`${spec.name} item '${item}' has more than one '/'`, spec.name, item);
  const [base = "", stepText] = slashes;
  let step = 1;
  if (stepText !== undefined) {
    if (stepText === "") fail(`${spec.name} item '${item}' is missing a step`, spec.name, item);
    if (!/^\d+$/.test(stepText)) fail(`${spec.name} step '${stepText}' in '${item}' is not a number`, spec.name, stepText);
    step = Number(stepText);
    if (step < 1) fail(`${spec.name} step ${step} in '${item}' must be at least 1`, spec.name, stepText);
  }
  if (base === "*") return { text: item, start: spec.min, end: spec.max, step };
  const bounds = base.split("-");
  if (bounds.length > 2) fail(`${spec.name} range '${base}' has more than one '-'`, spec.name, base);
  const start = parseValue(spec, bounds[0] ?? "", item, fail);
  if (bounds.length === 1) return { text: item, start, end: stepText === undefined ? start : spec.max, step };
  // SUN ending a range is day 7 (as in croner), so FRI-SUN reads as 5-7.
  const endText = bounds[1] ?? "";
  const end = spec.name === "day-of-week" && endText.toUpperCase() === "SUN" ? 7 : parseValue(spec, endText, item, fail);
  if (start > end) {
    const hint = spec.name === "day-of-week" && end === 0 ? "; use 7 for Sunday at the end of a range" : "";
    fail(`${spec.name} range '${base}' starts after it ends (${start} > ${end})${hint}`, spec.name, base);
  }
  return { text: item, start, end, step };
}

function parseValue(spec: FieldSpec, text: string, item: string, fail: Fail): number {
  if (text === "") fail(`${spec.name} item '${item}' is missing a value`, spec.name, item);
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max) {
      fail(`${spec.name} value ${text} is out of range ${spec.min}-${spec.max}`, spec.name, text);
    }
    return value;
  }
  const index = spec.names?.list.indexOf(text.toUpperCase()) ?? -1;
  if (spec.names && index >= 0) return spec.names.first + index;
  const expected = spec.names ? `a number or a name (${spec.names.label})` : "a number";
  return fail(`${spec.name} value '${text}' is not ${expected}`, spec.name, text);
}

/**
 * A 5-field pattern croner reads with the same meaning: each restricted field as its explicit
 * value list (croner rejects `a/n`, and lists keep cronie's day-of-week rules out of its way),
 * `*` kept as `*` so croner sees the same restricted/unrestricted day fields. Use with
 * croner's `domAndDow: false` (OR when both day fields are restricted).
 */
export function cronForCroner(fields: CronFields): string {
  return [fields.minute, fields.hour, fields.dayOfMonth, fields.month, fields.dayOfWeek]
    .map((field) => (field.star ? "*" : field.values.join(",")))
    .join(" ");
}
