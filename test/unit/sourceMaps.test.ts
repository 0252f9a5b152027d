import { compileCode } from "../../lambdas/code/compileCode";
import { composeMaps, decodeMappings, encodeMappings, INLINE_MAP_PREFIX, takeInlineMap, withInlineMap } from "../../lambdas/code/sourceMaps";

const inline = (map: unknown) => `${INLINE_MAP_PREFIX}${Buffer.from(JSON.stringify(map)).toString("base64")}\n`;

describe("source maps", () => {
  it("decodes and encodes mappings again, dropping names; refuses a segment of no source", () => {
    const mappings = "AAAA,IAAIA;;AACA,SAAS";
    const lines = decodeMappings(mappings, 1);
    expect(lines).toEqual([
      [{ column: 0, source: 0, line: 0, sourceColumn: 0 }, { column: 4, source: 0, line: 0, sourceColumn: 4 }],
      [],
      // The generated column starts again on each line; the source column carries on (as the spec has it).
      [{ column: 0, source: 0, line: 1, sourceColumn: 4 }, { column: 9, source: 0, line: 1, sourceColumn: 13 }],
    ]);
    expect(encodeMappings(lines)).toBe("AAAA,IAAI;;AACA,SAAS");
    expect(() => decodeMappings("ACAA", 1)).toThrow("segment out of range");
    expect(() => decodeMappings("A!", 1)).toThrow("bad VLQ");
  });

  it("composes: each position goes on to the inner map's source, or keeps the outer one where the inner says nothing", () => {
    const outer = { sources: ["automation.ts"], lines: [[{ column: 2, source: 0, line: 0, sourceColumn: 10 }, { column: 8, source: 0, line: 5, sourceColumn: 0 }]] };
    const inner = { sources: ["user.ts"], lines: [[{ column: 9, source: 0, line: 11, sourceColumn: 8 }]] };
    expect(composeMaps(outer, inner)).toEqual({
      sources: ["user.ts", "automation.ts"],
      lines: [[{ column: 2, source: 0, line: 11, sourceColumn: 8 }, { column: 8, source: 1, line: 5, sourceColumn: 0 }]],
    });
  });

  it("takes a module's trailing inline map off; one that is not a valid map, or names a source unfit for a stack, is dropped", () => {
    const code = "export default async () => 1;\n";
    const map = { sources: ["user.ts"], lines: [[{ column: 0, source: 0, line: 3, sourceColumn: 2 }]] };
    expect(takeInlineMap(withInlineMap(code, map))).toEqual({ code, map });
    for (const bad of [{ version: 2, sources: [], mappings: "" }, { version: 3, sources: ["x) at evil (y.ts"], mappings: "AAAA" }, { version: 3, sources: ["a.ts"], mappings: "AEAA" }]) {
      expect(takeInlineMap(`${code}${inline(bad)}`)).toEqual({ code, map: undefined });
    }
    expect(takeInlineMap(`${code}${INLINE_MAP_PREFIX}bm90IGpzb24=\n`)).toEqual({ code, map: undefined });
    // compileCode then maps to the module as sent alone.
    expect(compileCode(`${code}${inline({ version: 3, sources: ["x) at evil (y.ts"], mappings: "AAAA" })}`).js).toBe(compileCode(code).js);
  });
});
