import { readFileSync } from "node:fs";
import path from "node:path";
import { FrameGate, MAX_DROPPED } from "../../lambdas/live/frameGate";
import { checkRecording } from "../../lambdas/recording/checkRecording";
import { replayHtml } from "../../lambdas/recording/replayHtml";
import { buildReplayPlayer } from "../../lambdas/recording/replayPlayerBuild";
import { Redactor } from "../../lambdas/secrets/redactor";

// What the service accepts of a recording and of live frames (both cross from a run: untrusted),
// and that the player the service serves is the build of the pinned rrweb-player.

const event = (type: number, data: unknown = { node: {} }, timestamp = 1) => ({ type, data, timestamp });

describe("checkRecording", () => {
  const none = new Redactor([]);

  it("keeps an array of events, each by its three fields, with secret values redacted", () => {
    const text = JSON.stringify([{ ...event(4, { href: "https://x/?t=s3cr3t-value" }), extra: "dropped", __proto__: { polluted: 1 } }, event(2)]);
    const checked = checkRecording(text, new Redactor(["s3cr3t-value"]));
    expect(checked).toEqual({ ok: true, events: 2, json: JSON.stringify([event(4, { href: "https://x/?t=[secret]" }), event(2)]) });
  });

  it.each([
    ["not JSON", "[{", "not JSON"],
    ["an object", JSON.stringify({ type: 2 }), "not an array of events"],
    ["a string item", JSON.stringify(["x"]), "an event that is not an object"],
    ["an unknown type", JSON.stringify([event(9)]), "an event of no known type"],
    ["a fractional type", JSON.stringify([event(2.5)]), "an event of no known type"],
    ["no timestamp", JSON.stringify([{ type: 2, data: {} }]), "an event without a timestamp"],
    ["data that is an array", JSON.stringify([event(2, [])]), "an event without data"],
  ])("refuses %s", (_, text, problem) => {
    expect(checkRecording(text, none)).toEqual({ ok: false, problem });
  });

  it("refuses nesting past its depth cap without parsing it, and text past its size cap", () => {
    const deep = `[{"type":2,"timestamp":1,"data":${"[".repeat(700)}${"]".repeat(700)}}]`;
    expect(checkRecording(deep, none)).toEqual({ ok: false, problem: "nested deeper than 600 levels" });
    expect(checkRecording(" ".repeat(20 * 1024 * 1024 + 1), none)).toEqual({ ok: false, problem: `over ${20 * 1024 * 1024} bytes` });
  });
});

describe("FrameGate", () => {
  it("passes a frame only while watched and at most one per 200 ms; past MAX_DROPPED drops the worker floods", () => {
    const gate = new FrameGate();
    expect(gate.accept(false, 0)).toBe("drop");
    expect(gate.accept(true, 1000)).toBe("pass");
    expect(gate.accept(true, 1100)).toBe("drop");
    expect(gate.accept(true, 1200)).toBe("pass");
    for (let i = 0; i < MAX_DROPPED - 2; i++) expect(gate.accept(true, 1200)).toBe("drop");
    expect(gate.accept(true, 1200)).toBe("flood");
  });
});

describe("the replay player", () => {
  it("served by the dashboard is the build of the pinned rrweb-player (npx tsx scripts/buildReplayPlayer.ts)", () => {
    const dir = path.join(__dirname, "..", "..", "lambdas", "dashboard");
    const built = buildReplayPlayer();
    expect(readFileSync(path.join(dir, "rrwebPlayer.js"), "utf8")).toBe(built.js);
    expect(readFileSync(path.join(dir, "rrwebPlayer.css"), "utf8")).toBe(built.css);
  });

  it("writes events into the self-contained HTML so that no text of theirs ends its script", () => {
    const html = replayHtml("Run <x>", JSON.stringify([event(2, { text: "</script><script>alert(1)</script>" })]), { js: "var a = '</script>';", css: "" });
    expect(html).not.toContain("</script><script>alert(1)");
    expect(html).toContain("\\u003c/script>\\u003cscript>alert(1)\\u003c/script>");
    expect(html).toContain("<title>Run &#60;x&#62;</title>");
    expect(html.match(/<\/script>/g)).toHaveLength(3);
  });
});
