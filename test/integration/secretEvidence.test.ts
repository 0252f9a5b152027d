import { startTestService, type TestService } from "../helpers/localService";

// Review finding: a failed run keeps the HTML of its open pages as `failure-N.html`, served by
// GET /runs/{id}/artifacts/{name}. A page that shows one of the function's secrets (a settings
// page with the API key, a form with the token in a hidden field, a link carrying it) kept it
// in clear, although "secret values never appear in ... the API".

const TOKEN = "tok_live_R3v13wS3cr3tValue&More";

const FAILS_ON_A_PAGE = `import { Session, secrets } from "browserfn/runtime";
export default async () => {
  await using session = await Session.start();
  const page = await session.newPage();
  const token = secrets.get("API_TOKEN") ?? "";
  // What a site shows once logged in with the token (set here, so no network is needed).
  await page.setContent("<form><input type=hidden name=api_key value='" + token + "'></form><p>Your key: <code></code></p><a id=next>next</a>");
  await page.evaluate((value) => {
    document.querySelector("code")!.textContent = value;
    document.querySelector("#next")!.setAttribute("href", "/next?api_key=" + encodeURIComponent(value));
  }, token);
  throw new Error("the button was not there");
};`;

describe("failure evidence of a function with secrets (review)", () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService();
    await t.deploy("evidence", FAILS_ON_A_PAGE, { timeout_seconds: 20 });
    expect((await t.call("PUT", "/functions/evidence/secrets/API_TOKEN", { body: { value: TOKEN } })).status).toBe(204);
  }, 60_000);

  afterAll(async () => {
    await t?.destroy();
  });

  it("keeps the page's HTML with the secret redacted", async () => {
    const answer = await t.call("POST", "/functions/evidence", {});
    expect([answer.status, answer.body.error.code]).toEqual([500, "function_error"]);
    const runId = String(answer.body.error.details.run_id);
    const names = ((await t.call("GET", `/runs/${runId}/artifacts`)).body as { items: { name: string }[] }).items.map((item) => item.name);
    expect(names).toContain("failure-1.html");
    const html = await (await fetch(`${t.url}/runs/${runId}/artifacts/failure-1.html`, { headers: { authorization: `Bearer ${t.adminKey}` } })).text();
    expect(html).toContain("Your key:");
    // Neither as written, nor HTML-escaped (& → &amp;), nor URL-encoded in the link.
    expect(html).not.toContain("R3v13wS3cr3tValue");
    expect(html).toContain("[secret]");
  }, 60_000);
});
