/**
 * IAM's policy evaluation, small and strict, for the stand-ins that authorize calls by who makes
 * them (test/helpers/awsFacade.ts). A request is allowed when some statement allows it and none
 * denies it (an explicit Deny wins; nothing matching is an implicit deny). A statement matches
 * on Action or NotAction and Resource or NotResource (wildcards `*` and `?`; actions without
 * regard to case) and its Condition block. A key or policy variable the request has no value
 * for matches nothing (a negated operator, or …IfExists, holds). A statement that matches the
 * request but whose condition this evaluator cannot decide (an operator it does not model, such
 * as ForAnyValue:; ForAllValues: only over a key with one value in the request) throws
 * UndecidedPolicy rather than guess either way: a test fails loudly instead of passing on a deny
 * that IAM might not make.
 */

export interface PolicyStatement {
  Effect: "Allow" | "Deny";
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export interface AuthzRequest {
  action: string;
  resource: string;
  /** Condition keys and policy variables (`aws:userid`, `kms:EncryptionContext:runner`, …). */
  context: Record<string, string>;
}

export interface Decision {
  effect: "Allow" | "ExplicitDeny" | "ImplicitDeny";
  /** The statement that decided it (none for an implicit deny). */
  statement?: PolicyStatement;
}

const list = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

function wildcard(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern.split("").map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("");
  return new RegExp(`^${source}$`, ignoreCase ? "is" : "s").test(value);
}

/** `${aws:userid}` and its kin from the request's context; undefined when one has no value. */
function substitute(text: string, context: Record<string, string>): string | undefined {
  let missing = false;
  const out = text.replace(/\$\{([^}]+)\}/g, (_, key: string) => {
    if (key === "*" || key === "?" || key === "$") return key;
    const value = context[key];
    if (value === undefined) missing = true;
    return value ?? "";
  });
  return missing ? undefined : out;
}

type Test = (actual: string, expected: string) => boolean;
const STRING_TESTS: Record<string, Test> = {
  StringEquals: (a, e) => a === e,
  StringEqualsIgnoreCase: (a, e) => a.toLowerCase() === e.toLowerCase(),
  StringLike: (a, e) => wildcard(e, a, false),
  ArnEquals: (a, e) => a === e,
  ArnLike: (a, e) => wildcard(e, a, false),
  Bool: (a, e) => a.toLowerCase() === e.toLowerCase(),
  NumericEquals: (a, e) => Number(a) === Number(e),
  NumericLessThan: (a, e) => Number(a) < Number(e),
  NumericLessThanEquals: (a, e) => Number(a) <= Number(e),
  NumericGreaterThan: (a, e) => Number(a) > Number(e),
  NumericGreaterThanEquals: (a, e) => Number(a) >= Number(e),
};
const NEGATED: Record<string, string> = { StringNotEquals: "StringEquals", StringNotEqualsIgnoreCase: "StringEqualsIgnoreCase", StringNotLike: "StringLike", ArnNotEquals: "ArnEquals", ArnNotLike: "ArnLike", NumericNotEquals: "NumericEquals" };

/** One operator's block: true (satisfied), false (not), or undefined (cannot be evaluated). */
function conditionHolds(operator: string, block: Record<string, unknown>, context: Record<string, string>): boolean | undefined {
  if (operator.startsWith("ForAnyValue:")) return undefined; // multivalued keys: not modelled
  if (operator.startsWith("ForAllValues:")) {
    // A request's context holds one value per key here (dynamodb:LeadingKeys of a single-item
    // call has one): every value matches when that one does, and an absent key's empty set
    // satisfies ForAllValues, as in IAM. A negated inner operator is not modelled.
    const inner = operator.slice("ForAllValues:".length);
    if (NEGATED[inner] || inner.endsWith("IfExists") || !STRING_TESTS[inner]) return undefined;
    const present = Object.fromEntries(Object.keys(block).filter((key) => context[key] !== undefined).map((key) => [key, block[key]]));
    return conditionHolds(inner, present, context);
  }
  const ifExists = operator.endsWith("IfExists");
  const base = ifExists ? operator.slice(0, -"IfExists".length) : operator;
  for (const [key, expectedValue] of Object.entries(block)) {
    const actual = context[key];
    const expected = (Array.isArray(expectedValue) ? expectedValue : [expectedValue]).map(String);
    if (base === "Null") {
      if (expected.length !== 1 || !["true", "false"].includes(expected[0] ?? "")) return undefined;
      if ((actual === undefined) !== (expected[0] === "true")) return false;
      continue;
    }
    if (actual === undefined) {
      if (ifExists) continue;
      // A negated operator holds for a missing key in IAM; the others do not.
      if (NEGATED[base]) continue;
      if (STRING_TESTS[base]) return false;
      return undefined;
    }
    const values: string[] = [];
    for (const value of expected) {
      const resolved = substitute(value, context);
      // A policy variable with no value in the request matches nothing, as in IAM.
      if (resolved === undefined) return false;
      values.push(resolved);
    }
    const positive = STRING_TESTS[NEGATED[base] ?? base];
    if (!positive) return undefined;
    const any = values.some((value) => positive(actual, value));
    if (NEGATED[base] ? any : !any) return false;
  }
  return true;
}

/** Thrown for a statement this evaluator cannot decide: a test must not pass on a guess. */
export class UndecidedPolicy extends Error {}

function statementApplies(statement: PolicyStatement, request: AuthzRequest): boolean {
  const actionMatch = (patterns: string[]) => patterns.some((p) => wildcard(p, request.action, true));
  if (statement.Action !== undefined && !actionMatch(list(statement.Action))) return false;
  if (statement.NotAction !== undefined && actionMatch(list(statement.NotAction))) return false;
  if (statement.Action === undefined && statement.NotAction === undefined) return false;
  const resourceMatch = (patterns: string[]) =>
    patterns.some((p) => {
      const resolved = substitute(p, request.context);
      return resolved !== undefined && wildcard(resolved, request.resource, false);
    });
  if (statement.Resource !== undefined && !resourceMatch(list(statement.Resource))) return false;
  if (statement.NotResource !== undefined && resourceMatch(list(statement.NotResource))) return false;
  if (statement.Resource === undefined && statement.NotResource === undefined) return false;
  let undecided: string | undefined;
  for (const [operator, block] of Object.entries(statement.Condition ?? {})) {
    const holds = conditionHolds(operator, block, request.context);
    if (holds === false) return false;
    if (holds === undefined) undecided ??= operator;
  }
  if (undecided !== undefined) {
    throw new UndecidedPolicy(`The policy evaluator cannot decide ${request.action} on ${request.resource}: a ${statement.Effect} statement's condition ${undecided} is not modelled`);
  }
  return true;
}

/** The decision of IAM over `statements` (identity and resource policies of one account together). */
export function evaluate(statements: PolicyStatement[], request: AuthzRequest): Decision {
  const applying = statements.filter((statement) => statementApplies(statement, request));
  const deny = applying.find((statement) => statement.Effect === "Deny");
  if (deny) return { effect: "ExplicitDeny", statement: deny };
  const allow = applying.find((statement) => statement.Effect === "Allow");
  return allow ? { effect: "Allow", statement: allow } : { effect: "ImplicitDeny" };
}
