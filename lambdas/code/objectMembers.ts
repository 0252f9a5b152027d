import ts from "typescript";
import { acceptsUndefined } from "./literalTypes";

/** A property of an object type, as declared, and whether the type lets it be left out. */
export interface ObjectMember {
  /** Its declaration (`url?: string`): its type node is the type ParameterInfo reports. */
  signature: ts.PropertySignature;
  optional: boolean;
}

/**
 * The properties an object type declares, by name, as far as syntax shows them. `rest` says what
 * a property not among them is: "absent" when every part of the type is known (it is not a
 * member), "optional" when the parts not known are under `Partial<…>`, "unknown" otherwise
 * (an imported base type, a generic, a mapped type …).
 */
export interface ObjectMembers {
  byName: Map<string, ObjectMember>;
  rest: "absent" | "optional" | "unknown";
}

type Declaration = ts.InterfaceDeclaration | ts.TypeAliasDeclaration;

/** How many members one resolution may visit (copies into merged types included); past it, the rest is unknown. */
export const MAX_MEMBER_STEPS = 20000;

const UNKNOWN: ObjectMembers = Object.freeze({ byName: new Map<string, ObjectMember>(), rest: "unknown" });

/**
 * The members of the object type `node`: a type literal, an interface or type alias declared at
 * the top level of `sf` (an interface with its local `extends` bases, on any number of levels),
 * an intersection of those, or `Partial`, `Required` or `Readonly` of those. The first
 * declaration of a name is followed, as TypeToSchema does.
 */
export function objectMembers(node: ts.TypeNode | undefined, sf: ts.SourceFile): ObjectMembers {
  return node ? new MemberResolver(sf).membersOf(node) : UNKNOWN;
}

class MemberResolver {
  private readonly declarations = new Map<string, Declaration>();
  /** Each declaration's members, resolved once (a name used many times is not resolved again). */
  private readonly resolved = new Map<string, ObjectMembers>();
  private readonly resolving = new Set<string>();
  private steps = 0;

  constructor(sf: ts.SourceFile) {
    for (const statement of sf.statements) {
      if ((ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) && !this.declarations.has(statement.name.text)) {
        this.declarations.set(statement.name.text, statement);
      }
    }
  }

  membersOf(node: ts.TypeNode): ObjectMembers {
    if (++this.steps > MAX_MEMBER_STEPS) return UNKNOWN;
    if (ts.isParenthesizedTypeNode(node)) return this.membersOf(node.type);
    if (ts.isTypeLiteralNode(node)) return this.fromLiteral(node.members);
    if (ts.isIntersectionTypeNode(node)) return this.merge(node.types.map((part) => this.membersOf(part)));
    if (!ts.isTypeReferenceNode(node) || !ts.isIdentifier(node.typeName)) return UNKNOWN;
    const name = node.typeName.text;
    const [only, ...more] = node.typeArguments ?? [];
    if (!only) return this.declared(name);
    if (more.length > 0) return UNKNOWN;
    if (name === "Readonly") return this.membersOf(only);
    if (name === "Partial") return this.everyMember(this.membersOf(only), true);
    if (name === "Required") return this.everyMember(this.membersOf(only), false);
    return UNKNOWN; // other generics
  }

  /** The members of an interface (with those of its local bases) or type alias declared in the module. */
  private declared(name: string): ObjectMembers {
    const done = this.resolved.get(name);
    if (done) return done;
    const declaration = this.declarations.get(name);
    if (!declaration || declaration.typeParameters || this.resolving.has(name)) return UNKNOWN;
    this.resolving.add(name);
    try {
      let members: ObjectMembers;
      if (ts.isTypeAliasDeclaration(declaration)) members = this.membersOf(declaration.type);
      else {
        const bases = (declaration.heritageClauses ?? []).flatMap((clause) =>
          clause.types.map((base) => (ts.isIdentifier(base.expression) && !base.typeArguments ? this.declared(base.expression.text) : UNKNOWN)),
        );
        members = this.merge([...bases, this.fromLiteral(declaration.members)]);
      }
      this.resolved.set(name, members);
      return members;
    } finally {
      this.resolving.delete(name);
    }
  }

  /**
   * The properties of a type literal or interface body; one marked `?` or typed `… | undefined`
   * is optional. Index signatures, methods and computed names make the rest unknown.
   */
  private fromLiteral(members: readonly ts.TypeElement[]): ObjectMembers {
    this.steps += members.length;
    if (this.steps > MAX_MEMBER_STEPS) return UNKNOWN;
    const byName = new Map<string, ObjectMember>();
    let rest: ObjectMembers["rest"] = "absent";
    for (const member of members) {
      const name = ts.isPropertySignature(member) ? propertyName(member.name) : undefined;
      if (!ts.isPropertySignature(member) || name === undefined) rest = "unknown";
      else byName.set(name, { signature: member, optional: !!member.questionToken || acceptsUndefined(member.type) });
    }
    return { byName, rest };
  }

  /** The members of all parts: one is optional only when every part that declares it says so; a later part's type wins. */
  private merge(parts: ObjectMembers[]): ObjectMembers {
    this.steps += parts.reduce((sum, part) => sum + part.byName.size, 0);
    if (this.steps > MAX_MEMBER_STEPS) return UNKNOWN;
    const byName = new Map<string, ObjectMember>();
    for (const part of parts) {
      for (const [name, member] of part.byName) {
        const earlier = byName.get(name);
        byName.set(name, { signature: member.signature, optional: member.optional && (earlier?.optional ?? true) });
      }
    }
    const rests = parts.map((part) => part.rest);
    const rest = rests.includes("unknown") ? "unknown" : rests.includes("optional") ? "optional" : "absent";
    return { byName, rest };
  }

  /** `Partial<T>` (every member optional) or `Required<T>` (none). */
  private everyMember(inner: ObjectMembers, optional: boolean): ObjectMembers {
    this.steps += inner.byName.size;
    if (this.steps > MAX_MEMBER_STEPS) return UNKNOWN;
    const byName = new Map([...inner.byName].map(([name, member]) => [name, { signature: member.signature, optional }]));
    const rest = inner.rest === "absent" ? "absent" : optional ? "optional" : "unknown";
    return { byName, rest };
  }
}

export function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) {
    return name.text;
  }
  return undefined;
}
