import fc from "fast-check";
import { MAX_LOG_BYTES, capBytes } from "../../lambdas/runner/outputLimits";

const NOTE = "…[output truncated]\n";
const NOTE_BYTES = Buffer.byteLength(NOTE, "utf8");

const bytesOf = (text: string) => Buffer.byteLength(text, "utf8");
/** True when `text` survives UTF-8 encoding unchanged (no lone surrogate). */
const reencodes = (text: string) => Buffer.from(text, "utf8").toString("utf8") === text;

describe("capBytes", () => {
  it("returns text within the cap as it is", () => {
    expect(capBytes("", 0)).toBe("");
    expect(capBytes("short", 100)).toBe("short");
  });

  it("returns text that fits exactly as it is, counting UTF-8 bytes", () => {
    expect(capBytes("abc", 3)).toBe("abc");
    expect(capBytes("€€€", 9)).toBe("€€€");
    expect(capBytes("😀😀", 8)).toBe("😀😀");
    const logs = "é".repeat(MAX_LOG_BYTES / 2);
    expect(capBytes(logs, MAX_LOG_BYTES)).toBe(logs);
  });

  it("cuts text one byte over the cap and ends it with the note, within the cap", () => {
    const cut = capBytes("a".repeat(101), 100);
    expect(cut.endsWith(NOTE)).toBe(true);
    expect(bytesOf(cut)).toBeLessThanOrEqual(100);
    expect("a".repeat(101).startsWith(cut.slice(0, -NOTE.length))).toBe(true);
  });

  it("counts characters as bytes: 3-byte characters under the cap in length but over it in bytes are cut", () => {
    const text = "€".repeat(40);
    expect(text.length).toBeLessThan(100);
    const cut = capBytes(text, 100);
    expect(bytesOf(cut)).toBeLessThanOrEqual(100);
    expect(cut.endsWith(NOTE)).toBe(true);
    expect(cut.slice(0, -NOTE.length)).toMatch(/^€*$/);
  });

  it("leaves just the note when the cap is exactly the note's size", () => {
    expect(capBytes("a".repeat(100), NOTE_BYTES)).toBe(NOTE);
  });

  it("never cuts inside a surrogate pair: the output re-encodes to the same bytes", () => {
    // 1 emoji (4 bytes) + half of the next one would be counted as 3 bytes (U+FFFD) and fit in 7.
    const cut = capBytes("😀".repeat(10), NOTE_BYTES + 7);
    expect(bytesOf(cut)).toBeLessThanOrEqual(NOTE_BYTES + 7);
    expect(cut).toBe(`😀${NOTE}`);
    expect(reencodes(cut)).toBe(true);
  });

  it("for any well-formed text and cap, keeps a prefix of the text within the cap that re-encodes to the same bytes (property, fixed seed)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 120 }), fc.integer({ min: NOTE_BYTES, max: 300 }), (text, cap) => {
        const cut = capBytes(text, cap);
        expect(bytesOf(cut)).toBeLessThanOrEqual(Math.max(cap, 0));
        expect(reencodes(cut)).toBe(true);
        if (cut !== text) {
          expect(cut.endsWith(NOTE)).toBe(true);
          expect(text.startsWith(cut.slice(0, -NOTE.length))).toBe(true);
        }
      }),
      { seed: 424242, numRuns: 500 },
    );
  });

  it("keeps the longest prefix that fits, as documented", () => {
    // 30000 × "€" is 90000 bytes; room for text is MAX_LOG_BYTES - NOTE_BYTES = 65514 bytes = 21838 characters.
    const cut = capBytes("€".repeat(30_000), MAX_LOG_BYTES);
    expect(cut.endsWith(NOTE)).toBe(true);
    expect(/^€*$/.test(cut.slice(0, -NOTE.length))).toBe(true);
    // Compared by length so a failure prints a number, not 60 KB of text.
    expect(cut.length - NOTE.length).toBe(Math.floor((MAX_LOG_BYTES - NOTE_BYTES) / 3));
  });

  it("never returns more bytes than the cap, even a cap smaller than the note", () => {
    const sizes = [0, 1, 10, NOTE_BYTES - 1].map((cap) => ({ cap, bytes: bytesOf(capBytes("x".repeat(100), cap)) }));
    expect(sizes.filter(({ cap, bytes }) => bytes > cap)).toEqual([]);
  });
});
