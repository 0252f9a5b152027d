import ts from "typescript";

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Sentinel for "this expression is not a JSON literal". */
const NOT_JSON = Symbol("not-json");

/** Strips wrappers that do not change a literal's value: `(x)`, `x as const`, `x satisfies T`, `<T>x`. */
export function unwrapExpression(expr: ts.Expression): ts.Expression {
  let node = expr;
  while (
    ts.isParenthesizedExpression(node) ||
    ts.isAsExpression(node) ||
    ts.isSatisfiesExpression(node) ||
    ts.isTypeAssertionExpression(node)
  ) {
    node = node.expression;
  }
  return node;
}

function numericValue(node: ts.NumericLiteral): number {
  // Number() understands 0x/0o/0b and exponents; numeric separators (1_000) it does not.
  return Number(node.text.replace(/_/g, ""));
}

function propertyKey(name: ts.PropertyName): string | typeof NOT_JSON {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  if (ts.isNumericLiteral(name)) return String(numericValue(name));
  return NOT_JSON; // computed ([k]: ...), private names, bigint keys
}

/** How deeply a default's arrays and objects may nest to be reported as JSON (deeper: not a JSON literal). */
export const MAX_LITERAL_DEPTH = 64;

function evaluate(expr: ts.Expression, depth = 0): JsonValue | typeof NOT_JSON {
  if (depth > MAX_LITERAL_DEPTH) return NOT_JSON;
  const node = unwrapExpression(expr);
  if (ts.isNumericLiteral(node)) {
    const value = numericValue(node);
    return Number.isFinite(value) ? value : NOT_JSON;
  }
  if (
    ts.isPrefixUnaryExpression(node) &&
    (node.operator === ts.SyntaxKind.MinusToken || node.operator === ts.SyntaxKind.PlusToken)
  ) {
    const operand = unwrapExpression(node.operand);
    if (!ts.isNumericLiteral(operand)) return NOT_JSON;
    const value = numericValue(operand);
    if (!Number.isFinite(value)) return NOT_JSON;
    return node.operator === ts.SyntaxKind.MinusToken ? -value : value;
  }
  // .text is the cooked value: escapes are already resolved, whatever the quote style.
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (node.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isArrayLiteralExpression(node)) {
    const items: JsonValue[] = [];
    for (const element of node.elements) {
      if (ts.isSpreadElement(element) || ts.isOmittedExpression(element)) return NOT_JSON;
      const value = evaluate(element, depth + 1);
      if (value === NOT_JSON) return NOT_JSON;
      items.push(value);
    }
    return items;
  }
  if (ts.isObjectLiteralExpression(node)) {
    const object: { [key: string]: JsonValue } = {};
    for (const property of node.properties) {
      if (!ts.isPropertyAssignment(property)) return NOT_JSON; // shorthand, spread, methods, accessors
      const key = propertyKey(property.name);
      if (key === NOT_JSON) return NOT_JSON;
      const value = evaluate(property.initializer, depth + 1);
      if (value === NOT_JSON) return NOT_JSON;
      // defineProperty so that a "__proto__" key is an ordinary property, as in JSON.
      Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return object;
  }
  return NOT_JSON;
}

/**
 * The JSON text of a default value written as a literal (numbers, strings in any quote style,
 * booleans, null, and arrays/objects of those, nested at most MAX_LITERAL_DEPTH levels), or
 * undefined when the expression is anything else (a call, an identifier, `undefined`, a template with substitutions, a bigint, ...).
 */
export function literalToJson(expr: ts.Expression): string | undefined {
  const value = evaluate(expr);
  return value === NOT_JSON ? undefined : JSON.stringify(value);
}

/** The type of an undeclared parameter, guessed from the syntax of its default value. */
export function inferTypeFromDefault(expr: ts.Expression): string {
  const node = unwrapExpression(expr);
  if (ts.isNumericLiteral(node)) return "number";
  if (ts.isPrefixUnaryExpression(node) && ts.isNumericLiteral(unwrapExpression(node.operand))) return "number";
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
    return "string";
  }
  if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) return "boolean";
  if (ts.isArrayLiteralExpression(node)) return "unknown[]";
  return "unknown";
}
