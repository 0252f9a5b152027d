/**
 * Issue #26, item 4: a run cannot reach its worker's channel to the service, and nothing a run
 * leaves behind (a channel listener, a patched send, a timer, a patched builtin, a global)
 * reaches a later run of the same version. Each attack is a hostile automation against the real
 * service and sandbox, in both sandbox modes; each succeeded against the worker that served many
 * runs in one process and spoke to the service over process.send.
 */
import { startTestService, type TestService } from "../helpers/localService";

const MODES = ["namespaces", "process"] as const;
const CARD = "4111111111111111";
const PIN = "8472-secret-pin";

/**
 * One function with a hostile mode and an honest one. In `listen` mode it installs, once, a
 * listener on the worker's channel and a patched `process.send` that rewrite the answer of
 * every later run of another caller, and stores what the listener sees in a global; in `collect` mode it answers what its
 * globals hold. The honest mode answers from its own parameters and secret.
 */
const EAVESDROPPER = `import { secrets } from "browserfn/runtime";
const g = globalThis as any;
export default async function run(mode: string, card: string = "") {
  if (mode === "listen") {
    if (!g.__hooked) {
      g.__hooked = true;
      g.__seen = [];
      process.on("message", (message: any) => {
        if (message?.type !== "run") return;
        const names = Object.keys(message.secrets ?? {}).map((name) => name + ":" + String(message.secrets[name]).length);
        g.__seen.push({ params: message.params, secrets: names });
        if (message.params?.mode !== "listen" && message.params?.mode !== "collect") g.__victims.push(message.runId);
      });
      g.__victims = [];
      const send = (process as any).send?.bind(process);
      const forged = { status: "succeeded", result_json: JSON.stringify({ tampered: "by an earlier run" }), logs: "", browser_ms: 0 };
      (process as any).send = (message: any, ...rest: any[]) =>
        send?.(message?.type === "done" && g.__victims.includes(message.runId) ? { ...message, outcome: forged } : message, ...rest);
    }
    return "listening";
  }
  if (mode === "collect") return { seen: g.__seen ?? null, hooked: g.__hooked ?? false };
  return { card_last4: card.slice(-4), pin_length: (secrets.get("PIN") ?? "").length };
}`;

describe.each(MODES)("what a run leaves behind, in %s mode", (mode) => {
  let t: TestService;
  beforeAll(async () => {
    // One worker per function: a second run of a version goes to the worker of the first.
    t = await startTestService({ config: { sandbox: mode, allowLocalNetwork: false, workers: { perFunction: 1, total: 4, idleSeconds: 60 } } });
    expect(t.service.sandbox.mode).toBe(mode);
  });
  afterAll(async () => {
    await t.destroy();
  });

  it("cannot read or answer for a later run of another caller through the worker's channel", async () => {
    const owner = await t.newAccount(`owner-${mode}`, "pro");
    const caller = await t.call("POST", "/api-keys", { token: owner, body: { name: "second caller" } });
    expect(caller.status).toBe(201);
    const callerKey = String(caller.body.key);
    await t.deploy("eavesdropper", EAVESDROPPER, { timeout_seconds: 10 }, owner);
    expect((await t.call("PUT", "/functions/eavesdropper/secrets/PIN", { token: owner, body: { value: PIN } })).status).toBe(204);

    const hook = await t.call("POST", "/functions/eavesdropper", { token: owner, body: { mode: "listen" } });
    expect([hook.status, hook.body]).toEqual([200, "listening"]);
    // Another key of the account calls the same version, with a card number and the secret.
    const victim = await t.call("POST", "/functions/eavesdropper", { token: callerKey, body: { mode: "victim", card: CARD } });
    // The hostile caller comes back for what its hooks kept: nothing, as nothing of its run is left.
    const collected = await t.call("POST", "/functions/eavesdropper", { token: owner, body: { mode: "collect" } });
    expect(collected.status).toBe(200);
    expect(JSON.stringify(collected.body)).not.toContain(CARD);
    expect(JSON.stringify(collected.body)).not.toContain(`PIN:${PIN.length}`);
    expect(collected.body).toEqual({ seen: null, hooked: false });
    // And the second caller's answer is its own.
    expect([victim.status, victim.body]).toEqual([200, { card_last4: "1111", pin_length: PIN.length }]);
  });

  it("cannot answer for itself with a forged done, through process.send or the channel's fd", async () => {
    await t.deploy(
      "self-forger",
      `import { artifacts } from "browserfn/runtime";
      import { writeSync } from "node:fs";
      export default async function run() {
        const saved = await artifacts.save("probe.txt", Buffer.from("x"));
        const runId = /\\/runs\\/([^/]+)\\//.exec(saved.url)?.[1];
        const done = { type: "done", runId, outcome: { status: "succeeded", result_json: JSON.stringify("forged"), logs: "", browser_ms: 0 } };
        const tried: string[] = [];
        try { (process as any).send(done); tried.push("send"); } catch (error) { tried.push("no send: " + (error as Error).message); }
        // The IPC channel's descriptor, written directly: a line of JSON is a message.
        for (const fd of [3, 4, 5]) { try { writeSync(fd, JSON.stringify(done) + "\\n"); tried.push("fd " + fd); } catch { /* not open */ } }
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { real: true, tried: tried.length };
      }`,
      { timeout_seconds: 10 },
    );
    const response = await t.call("POST", "/functions/self-forger");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ real: true, tried: expect.any(Number) });
    // The worker that answered is still sound: a second run answers too.
    const again = await t.call("POST", "/functions/self-forger");
    expect([again.status, again.body?.real]).toEqual([200, true]);
  });

  it("never runs a timer of an earlier run, unref'd or not, inside a later run", async () => {
    await t.deploy(
      "timer-planter",
      `const g = globalThis as any;
      export default async function run(mode: string) {
        if (mode === "plant") {
          const fire = () => { g.__fired = (g.__fired ?? 0) + 1; console.log("a timer of an earlier run fired"); };
          setTimeout(fire, 300).unref();
          globalThis.setTimeout(fire, 300).unref();
          return "planted";
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return { fired: g.__fired ?? 0 };
      }`,
      { timeout_seconds: 10 },
    );
    const planted = await t.call("POST", "/functions/timer-planter", { body: { mode: "plant" } });
    expect([planted.status, planted.body]).toEqual([200, "planted"]);
    const later = await t.call("POST", "/functions/timer-planter", { body: { mode: "wait" } });
    expect([later.status, later.body]).toEqual([200, { fired: 0 }]);
    const runId = later.headers.get("x-run-id") as string;
    const run = (await t.call("GET", `/runs/${runId}`)).body;
    expect(run.logs ?? "").not.toContain("a timer of an earlier run fired");
  });

  it("never shows a later run the builtins an earlier run patched", async () => {
    await t.deploy(
      "patcher",
      `export default async function run(mode: string) {
        if (mode === "patch") {
          const stringify = JSON.stringify;
          const map = Array.prototype.map;
          (JSON as any).stringify = (value: unknown, ...rest: any[]) =>
            value && typeof value === "object" && (value as any).probe === 1 ? stringify({ patched: "JSON.stringify" }) : stringify(value, ...rest);
          Array.prototype.map = function (this: unknown[], ...args: any[]) {
            return this.length === 3 && this[0] === "probe" ? ["patched Array.prototype.map"] : map.apply(this, args as any);
          } as any;
          (globalThis as any).fetch = async () => { throw new Error("fetch patched by an earlier run"); };
          return "patched";
        }
        return { json: JSON.stringify({ probe: 1 }), mapped: ["probe", "b", "c"].map((x) => x.toUpperCase()), fetch: String(globalThis.fetch).includes("earlier run") };
      }`,
      { timeout_seconds: 10 },
    );
    const patched = await t.call("POST", "/functions/patcher", { body: { mode: "patch" } });
    expect([patched.status, patched.body]).toEqual([200, "patched"]);
    const later = await t.call("POST", "/functions/patcher", { body: { mode: "use" } });
    expect([later.status, later.body]).toEqual([200, { json: '{"probe":1}', mapped: ["PROBE", "B", "C"], fetch: false }]);
  });
});
