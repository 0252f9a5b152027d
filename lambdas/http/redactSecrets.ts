/**
 * Bearer secrets as they look in text: API keys (`bfn_` and at least 16 more characters; a
 * listing's 10-character prefix stays readable) and JWTs (three base64url parts, the first
 * starting `eyJ`, the encoding of `{"`).
 */
const SECRET = /bfn_[A-Za-z0-9_-]{16,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;

export const REDACTED = "[redacted]";

/** The text with every API key and JWT in it replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, REDACTED);
}

/** A JSON-like value with every string in it redacted (objects and arrays copied). */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => redactDeep(item)) as T;
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[redactSecrets(key)] = redactDeep(item);
    return copy as T;
  }
  return value;
}
