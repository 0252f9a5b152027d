import { startTestService, type TestService } from "../helpers/localService";

// Review findings: secret values that reached the API in a form the redactor did not know.
// shared/API.md: "Secret values never appear in logs, results, errors or the API (replaced by [secret])".

/** A PEM key: the usual multi-line secret (newlines make util.inspect and JSON escape it). */
const PEM = [
  "-----BEGIN EC PRIVATE KEY-----",
  "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oK4FAKEKEYmoAoGCCqGSM49",
  "AwEHoUQDQgAE3dMQgSPnt4pfvG0jgV3rYIV1NtvbhhYz8ISC3gOJ3I8iX0m3vsbs",
  "-----END EC PRIVATE KEY-----",
].join("\n");
/** A password with a backslash and a quote (util.inspect and JSON.stringify escape both). */
const PASSWORD = String.raw`c0rrect\horse"battery'staple`;
/** A numeric secret (a PIN, an account number) that the automation returns as a number. */
const PIN = "73194628";

const LOGS_SECRETS = `import { secrets } from "browserfn/runtime";
export default async function run({ mode = "inspect" }: { mode?: string }) {
  const config = { pem: secrets.get("PEM"), password: secrets.get("PASSWORD") };
  if (mode === "inspect") console.log("config", config);
  if (mode === "json") console.log("config " + JSON.stringify(config));
  if (mode === "throw") throw new Error("bad config " + JSON.stringify(config));
  if (mode === "number") return { pin: Number(secrets.get("PIN")) };
  return { ok: true };
}`;

/** The PEM's body lines, the password in any of its escaped forms, or the PIN. */
function leaked(text: string): string[] {
  const found: string[] = [];
  for (const line of PEM.split("\n").slice(1, -1)) if (text.includes(line)) found.push(`PEM line ${line.slice(0, 8)}…`);
  if (text.includes("c0rrect") && text.includes("staple")) found.push("PASSWORD");
  if (text.includes(PIN)) found.push("PIN");
  return found;
}

describe("secret values in escaped forms (review)", () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
    await t.deploy("leaky", LOGS_SECRETS, { timeout_seconds: 10 });
    for (const [name, value] of [
      ["PEM", PEM],
      ["PASSWORD", PASSWORD],
      ["PIN", PIN],
    ]) {
      expect((await t.call("PUT", `/functions/leaky/secrets/${name}`, { body: { value } })).status).toBe(204);
    }
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  it("does not keep a multi-line or escaped secret that console.log printed inside an object", async () => {
    const answer = await t.call("POST", "/functions/leaky", { body: { mode: "inspect" } });
    expect(answer.status).toBe(200);
    const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
    expect(leaked(run.text)).toEqual([]);
  }, 30_000);

  it("does not keep a secret that was logged as JSON text", async () => {
    const answer = await t.call("POST", "/functions/leaky", { body: { mode: "json" } });
    expect(answer.status).toBe(200);
    const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
    expect(leaked(run.text)).toEqual([]);
  }, 30_000);

  it("does not answer a secret that was JSON text in an error message", async () => {
    const answer = await t.call("POST", "/functions/leaky", { body: { mode: "throw" } });
    expect(answer.status).toBe(500);
    expect(leaked(answer.text)).toEqual([]);
    const logs = await t.call("GET", "/functions/leaky/logs");
    expect(leaked(logs.text)).toEqual([]);
  }, 30_000);

  it("does not answer a numeric secret returned as a number", async () => {
    const answer = await t.call("POST", "/functions/leaky", { body: { mode: "number" } });
    expect(answer.status).toBe(200);
    expect(leaked(answer.text)).toEqual([]);
    const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
    expect(leaked(run.text)).toEqual([]);
  }, 30_000);

  it("does not keep a numeric secret that was passed as a number parameter", async () => {
    await t.deploy("pinned", "export default async function run({ pin }: { pin: number }) { return { ok: pin > 0 }; }");
    expect((await t.call("PUT", "/functions/pinned/secrets/PIN", { body: { value: PIN } })).status).toBe(204);
    const answer = await t.call("POST", "/functions/pinned", { body: { pin: Number(PIN) } });
    expect(answer.status).toBe(200);
    const run = await t.call("GET", `/runs/${answer.headers.get("x-run-id")}`);
    expect(leaked(run.text)).toEqual([]);
  }, 30_000);
});
