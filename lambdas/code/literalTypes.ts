import ts from "typescript";
import type { LiteralValue } from "./jsonSchema";

// The JSON values of literal types (`"a"`, `-1`, `true`, `null`, unions of those), by syntax.

/** `undefined` or `void`: no JSON value. */
export function isUndefinedType(node: ts.TypeNode): boolean {
  return node.kind === ts.SyntaxKind.UndefinedKeyword || node.kind === ts.SyntaxKind.VoidKeyword;
}

/**
 * `T | undefined` (or `void`), `undefined` or `void` alone, in parentheses or not: a parameter or
 * property of such a type may be left out (no JSON value is `undefined`).
 */
export function acceptsUndefined(node: ts.TypeNode | undefined): boolean {
  if (!node) return false;
  if (ts.isParenthesizedTypeNode(node)) return acceptsUndefined(node.type);
  return isUndefinedType(node) || (ts.isUnionTypeNode(node) && node.types.some(acceptsUndefined));
}

export function literalExpressionValue(expr: ts.Expression): LiteralValue | undefined {
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) return expr.text;
  if (ts.isNumericLiteral(expr)) return finite(Number(expr.text.replace(/_/g, "")));
  if (ts.isPrefixUnaryExpression(expr) && expr.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(expr.operand)) {
    return finite(-Number(expr.operand.text.replace(/_/g, "")));
  }
  if (expr.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (expr.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (expr.kind === ts.SyntaxKind.NullKeyword) return null;
  return undefined;
}

function finite(value: number): number | undefined {
  return Number.isFinite(value) ? value : undefined;
}

export function literalValue(node: ts.LiteralTypeNode): LiteralValue | undefined {
  return literalExpressionValue(node.literal as ts.Expression);
}

/** The values of a literal type, `boolean` (true, false), or a union/parentheses of those; undefined otherwise. */
export function literalsOf(node: ts.TypeNode): LiteralValue[] | undefined {
  if (ts.isParenthesizedTypeNode(node)) return literalsOf(node.type);
  if (node.kind === ts.SyntaxKind.BooleanKeyword) return [true, false];
  if (ts.isLiteralTypeNode(node)) {
    const value = literalValue(node);
    return value === undefined ? undefined : [value];
  }
  if (ts.isUnionTypeNode(node)) {
    const all = node.types.filter((t) => !isUndefinedType(t)).map(literalsOf);
    return all.every((v): v is LiteralValue[] => v !== undefined) ? all.flat() : undefined;
  }
  return undefined;
}
