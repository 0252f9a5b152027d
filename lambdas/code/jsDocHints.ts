import ts from "typescript";

/** Longest description kept from a JSDoc comment (a longer one is cut, with `…`). */
export const MAX_DESCRIPTION_CHARS = 1000;

function clean(text: string | undefined): string | undefined {
  // `@param url - the page`: the dash separates the name from the text.
  const trimmed = text?.replace(/^\s*-\s+/, "").replace(/\s+/g, " ").trim();
  if (!trimmed) return undefined;
  return trimmed.length > MAX_DESCRIPTION_CHARS ? `${trimmed.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : trimmed;
}

/** The JSDoc blocks the parser attached to a declaration (a parameter's, on its line or the lines before). */
function attachedDocs(node: ts.Node): ts.JSDoc[] {
  return ts.getJSDocCommentsAndTags(node).filter((doc): doc is ts.JSDoc => ts.isJSDoc(doc) && doc.parent === node);
}

/** memberDoc's answers, by member node: a compilation's nodes, dropped with it. */
const memberDocCache = new WeakMap<ts.Node, ts.JSDoc | undefined>();

/**
 * The JSDoc block written before an object type's member, its last one when there are several
 * (as the parser takes a declaration's last for its tags): on the lines before it, or on its own
 * line after the `{` or `;` before it (`{ /** The URL. *\/ url: string; … }`), which the parser
 * attaches to parameters but not to members. A block that ends the line of the member before
 * (`a: string; /** … *\/` and a line break) is not the next member's, as for the parser.
 *
 * Only that one block is parsed, and once per member (memberDocCache): a member's type is
 * expanded wherever it is used, and its code can hold thousands of comments.
 */
function memberDoc(member: ts.Node): ts.JSDoc | undefined {
  if (memberDocCache.has(member)) return memberDocCache.get(member);
  const text = member.getSourceFile().text;
  const sameLine = ts.getTrailingCommentRanges(text, member.pos) ?? [];
  const ranges = [...sameLine, ...(ts.getLeadingCommentRanges(text, member.pos) ?? [])];
  const isDoc = (range: ts.CommentRange) => text.startsWith("/**", range.pos) && !text.startsWith("/**/", range.pos);
  const index = ranges.findLastIndex(isDoc);
  const last = ranges[index];
  // A block on the line before the member's (a line break after it) is the member before's.
  const ownLine = last !== undefined && (index >= sameLine.length || !/[\r\n\u2028\u2029]/.test(text.slice(last.end, member.getStart())));
  const doc = last && ownLine ? parseDoc(text.slice(last.pos, last.end)) : undefined;
  memberDocCache.set(member, doc);
  return doc;
}

/** A `/** … *\/` block as the parser reads it, by parsing it before a statement of its own. */
function parseDoc(comment: string): ts.JSDoc | undefined {
  const sf = ts.createSourceFile("comment.ts", `${comment}\nvar _;`, ts.ScriptTarget.Latest, true);
  const [statement] = sf.statements;
  return statement ? attachedDocs(statement).at(-1) : undefined;
}

function docText(docs: ts.JSDoc[]): string | undefined {
  return clean(docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? "").filter(Boolean).join(" "));
}

/** A `@type {integer}` or `@integer` tag. */
function isIntegerTag(tag: ts.JSDocTag): boolean {
  if (tag.tagName.text === "integer") return true;
  return ts.isJSDocTypeTag(tag) && tag.typeExpression.type.getText() === "integer";
}

/** What a JSDoc says of one parameter or property: its description, and whether its numbers are integers. */
export interface Hints {
  description?: string;
  integer: boolean;
}

/**
 * Hints of an object type's property: its own JSDoc block (`/** The URL. @integer *\/`). For a
 * property of the destructured parameter, `paramTags` are the function's `@param` tags, read
 * when the property has no comment of its own (`@param url …` or `@param opts.url …`).
 */
export function propertyHints(member: ts.Node | undefined, name: string, paramTags: readonly ts.JSDocParameterTag[] = []): Hints {
  const tag = paramTags.find((t) => {
    const tagName = t.name;
    return ts.isIdentifier(tagName) ? tagName.text === name : tagName.right.text === name;
  });
  const doc = member ? memberDoc(member) : undefined;
  const docs = doc ? [doc] : [];
  const own = docText(docs);
  const integer = docs.some((doc) => doc.tags?.some(isIntegerTag)) || tag?.typeExpression?.type.getText() === "integer";
  const description = own ?? clean(ts.getTextOfJSDocComment(tag?.comment));
  return description === undefined ? { integer } : { description, integer };
}

/**
 * Hints of a positional parameter: the function's `@param name text` (with `{integer}` as its
 * type for an integer), or a JSDoc block written before the parameter itself.
 */
export function parameterHints(param: ts.ParameterDeclaration): Hints {
  const tags = ts.getJSDocParameterTags(param);
  const own = docText(attachedDocs(param));
  const fromTag = tags.map((tag) => clean(ts.getTextOfJSDocComment(tag.comment))).find(Boolean);
  const integer =
    tags.some((tag) => tag.typeExpression?.type.getText() === "integer") ||
    ts.getJSDocTags(param).some((t) => !ts.isJSDocParameterTag(t) && isIntegerTag(t));
  const description = fromTag ?? own;
  return description === undefined ? { integer } : { description, integer };
}

/** The `@param` tags of the exported function's JSDoc (a destructured parameter's properties are described there too). */
export function functionParamTags(fn: ts.SignatureDeclaration): ts.JSDocParameterTag[] {
  return ts.getJSDocTags(fn).filter(ts.isJSDocParameterTag);
}
