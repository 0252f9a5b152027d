import { inspect } from "node:util";
import { jsonTextDeeperThan } from "../runner/jsonDepth";
import { MAX_JSON_DEPTH } from "../runner/outputLimits";

/** What a secret value becomes wherever the service keeps or sends text (shared/API.md). */
export const SECRET_MARK = "[secret]";

/**
 * Replaces a function's secret values with `[secret]`: in text (logs, error messages, stacks),
 * in JSON text (a run's result: each string and key of the parsed value, so escaped forms are
 * caught too), in values (a run's parameters) and in a stream of text (live logs). Idempotent:
 * a mark already in the text is never taken apart again, so each side of a boundary (the runner,
 * then the service) may redact the same text.
 */
export class Redactor {
  /**
   * Each value and the forms it takes in text that quotes it (JSON's escapes, util.inspect's
   * as console.log prints strings inside objects): longest first, so a secret that contains
   * another is replaced whole.
   */
  private readonly values: string[];
  /** A multi-line value as util.inspect splits it inside an object (`'line\n' +\n    'line'`). */
  private readonly splitForms: RegExp[];
  /** The first line of each split multi-line value (without its new line): text without any of them holds no split form. */
  private readonly splitFirstLines: string[];

  constructor(values: Iterable<string>) {
    const secrets = [...new Set(values)].filter((value) => value !== "");
    const forms = new Set<string>();
    for (const value of secrets) {
      forms.add(value);
      forms.add(JSON.stringify(value).slice(1, -1));
      forms.add(inspect(value, { breakLength: Infinity }).slice(1, -1));
    }
    this.values = [...forms].filter((form) => form !== "").sort((a, b) => b.length - a.length);
    const multiLine = secrets.filter((value) => /\n./s.test(value));
    this.splitForms = multiLine.map(splitFormOf);
    this.splitFirstLines = multiLine.map((value) => inspect(value.slice(0, value.indexOf("\n") + 1), { breakLength: Infinity }).slice(1, -1));
  }

  get empty(): boolean {
    return this.values.length === 0;
  }

  text(text: string): string {
    if (this.values.length === 0 || text === "" || !this.mayHold(text)) return text;
    return text
      .split(SECRET_MARK)
      .map((piece) =>
        this.redactSplitForms(piece)
          .split(SECRET_MARK)
          .map((part) => this.redactPiece(part, 0))
          .join(SECRET_MARK),
      )
      .join(SECRET_MARK);
  }

  /** Whether `text` may hold a value: one of its forms, or a multi-line value as util.inspect splits it (which holds the value's first line). */
  private mayHold(text: string): boolean {
    for (const form of this.values) if (text.includes(form)) return true;
    for (const first of this.splitFirstLines) if (text.includes(first)) return true;
    return false;
  }

  /** `piece` with each multi-line value that util.inspect split over lines replaced (its outer quotes kept). */
  private redactSplitForms(piece: string): string {
    let text = piece;
    for (const form of this.splitForms) text = text.replace(form, (match) => `${match[0]}${SECRET_MARK}${match[match.length - 1]}`);
    return text;
  }

  /** `piece` with values[from…] replaced; the parts between are redacted on their own, so no mark is ever taken apart. */
  private redactPiece(piece: string, from: number): string {
    for (let i = from; i < this.values.length; i++) {
      const value = this.values[i] as string;
      if (piece.includes(value)) return piece.split(value).map((part) => this.redactPiece(part, i + 1)).join(SECRET_MARK);
    }
    return piece;
  }

  /**
   * A JSON-like value with every string and key redacted (plain objects and arrays copied); a
   * number whose digits hold a secret (a PIN, an account number) becomes its redacted text.
   * Walked with a stack of its own, never the call stack: no nesting makes it overflow.
   */
  value<T>(value: T): T {
    if (this.values.length === 0) return value;
    const root: { value?: unknown } = {};
    // Each entry: where the copy goes (a container and a key), and what is copied there.
    const pending: [object, string | number, unknown][] = [[root, "value", value]];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [into, key, item] = next;
      if (Array.isArray(item)) {
        const copy: unknown[] = new Array<unknown>(item.length);
        setOwn(into, key, copy);
        for (let i = item.length - 1; i >= 0; i--) pending.push([copy, i, item[i]]);
      } else if (typeof item === "object" && item !== null) {
        const copy = {};
        setOwn(into, key, copy);
        const entries = Object.entries(item);
        const names = entries.map(([name]) => this.text(name));
        // Keys in their order; where two redact to the same key, the later value wins (as Object.fromEntries).
        for (const name of names) setOwn(copy, name, undefined);
        for (let i = entries.length - 1; i >= 0; i--) pending.push([copy, names[i] as string, (entries[i] as [string, unknown])[1]]);
      } else {
        setOwn(into, key, this.scalar(item));
      }
    }
    return root.value as T;
  }

  /** A string or number redacted (a number whose digits hold a secret becomes its redacted text); anything else as it is. */
  private scalar(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (typeof value === "number" || typeof value === "bigint") {
      const digits = String(value);
      const redacted = this.text(digits);
      return redacted === digits ? value : redacted;
    }
    return value;
  }

  /**
   * JSON text redacted as its value (text that does not parse, or nests more than
   * MAX_JSON_DEPTH levels, is redacted as text).
   */
  json(json: string): string {
    if (this.values.length === 0 || !this.values.some((value) => json.includes(value) || json.includes(JSON.stringify(value).slice(1, -1)))) return json;
    if (jsonTextDeeperThan(json, MAX_JSON_DEPTH)) return this.text(json);
    try {
      return JSON.stringify(this.value(JSON.parse(json) as unknown));
    } catch {
      return this.text(json);
    }
  }

  /**
   * Redacts text that arrives in pieces: a piece's end that could be the start of a secret is
   * held back until the next piece (or `end`) shows whether it is one.
   */
  stream(): { push(piece: string): string; end(): string; held(): string } {
    let held = "";
    return {
      push: (piece) => {
        const raw = held + piece;
        const cut = this.safeCut(raw);
        held = raw.slice(cut);
        return this.text(raw.slice(0, cut));
      },
      end: () => {
        const rest = this.text(held);
        held = "";
        return rest;
      },
      /** What is held back, redacted as if the text ended here (the text so far, for a run cut short). */
      held: () => this.text(held),
    };
  }

  /**
   * Where text that may go on can be cut so that what comes before it is redacted as it will
   * be once the rest is known: before its longest end that could start a value (a shorter
   * value whole included: it may be the start of a longer one), and never inside an
   * occurrence of a value.
   */
  private safeCut(text: string): number {
    let cut = text.length - this.heldBack(text);
    for (let moved = true; moved; ) {
      moved = false;
      for (const value of this.values) {
        for (let start = text.lastIndexOf(value, cut - 1); start >= 0 && start + value.length > cut; start = text.lastIndexOf(value, start - 1)) {
          if (start < cut) {
            cut = start;
            moved = true;
          }
          if (start === 0) break;
        }
      }
    }
    return cut;
  }

  /** The length of the longest end of `text` that is the start of some value (but not all of it). */
  private heldBack(text: string): number {
    let longest = 0;
    for (const value of this.values) {
      for (let length = Math.min(value.length - 1, text.length); length > longest; length--) {
        if (text.endsWith(value.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}

/**
 * The pattern of `value` as util.inspect writes a long multi-line string inside an object: each
 * line quoted on its own (the quote chosen per line), joined by ` +` and a new, indented line.
 */
function splitFormOf(value: string): RegExp {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const lines = value.split(/(?<=\n)/).map((line) => escape(inspect(line, { breakLength: Infinity })));
  return new RegExp(lines.join(" \\+\\n *"), "g");
}

/** Sets an own, enumerable property (also one named `__proto__`, which assignment would take for the prototype). */
function setOwn(into: object, key: string | number, value: unknown): void {
  if (key !== "__proto__") {
    (into as Record<string | number, unknown>)[key] = value;
    return;
  }
  Object.defineProperty(into, key, { value, writable: true, enumerable: true, configurable: true });
}

/** No secrets: every method gives back what it was given. */
export const NO_SECRETS = new Redactor([]);
