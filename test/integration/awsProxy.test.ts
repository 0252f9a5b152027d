/**
 * A function's proxy on AWS, through the in-process pipeline (Lambda, Step Functions, S3 and
 * KMS stand-ins, the real runner on a real Chromium): the event carries the setting and never
 * the password, which the function's Lambda reads from the secrets it opens itself; the
 * browser's requests go through the authenticating proxy, with either driver.
 */
import { putSecret } from "../../lambdas/handlers/putSecret";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { type AuthProxy, startAuthProxy } from "../helpers/authProxy";
import { answerJson, apiEvent, runIdOf, startAwsRunWorld } from "../helpers/awsRunWorld";
import { type PageServer, startPageServer } from "../helpers/pageServer";

jest.setTimeout(120_000);

const PASSWORD = "aws-proxy-pw-5e4d3c2b1a";
let pages: PageServer;
let proxy: AuthProxy;
beforeAll(async () => {
  pages = await startPageServer();
  proxy = await startAuthProxy("lambda-user", PASSWORD, pages.url);
});
afterAll(async () => {
  await proxy?.close();
  await pages?.close();
});

it("runs the function's sessions through its proxy on AWS, the password opened by the function's own Lambda and never in the event or the workflow", async () => {
  const world = await startAwsRunWorld();
  try {
    const code = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  return { title: await page.title() };
}`;
    await world.create("acct", "via-proxy", code, { proxy: { server: proxy.server, username: "lambda-user", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] } });
    const put = await putSecret(world.deps)(
      apiEvent("acct", "PUT", "/functions/via-proxy/secrets/PROXY_PASSWORD", { value: PASSWORD }, { ref: "via-proxy", name: "PROXY_PASSWORD" }),
      lambdaContext("putSecret", "req"),
    );
    expect(put.statusCode).toBe(204);
    const answer = await world.invoke("acct", "via-proxy", { url: "http://shop.test/title/lambda-through-proxy" });
    await world.pipeline.settled();
    const run = await world.run(runIdOf(answer));
    expect(run).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ title: "lambda-through-proxy" }) });
    expect(proxy.seen).toContain("GET http://shop.test/title/lambda-through-proxy");
    const event = world.pipeline.lambda.events.at(-1) as { proxy: unknown };
    expect(event.proxy).toEqual({ server: proxy.server, username: "lambda-user", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] });
    const execution = world.pipeline.stepFunctions.executions.get(runIdOf(answer));
    for (const text of [JSON.stringify(event), JSON.stringify(execution), JSON.stringify(run), JSON.stringify(answerJson(answer))]) expect(text).not.toContain(PASSWORD);

    // The Playwright driver on the Lambda runner: its context goes through the same proxy.
    await world.create("acct", "pw-via-proxy", code.replace("Session.start()", 'Session.start({ driver: "playwright" })'), {
      proxy: { server: proxy.server, username: "lambda-user", password_secret: "PROXY_PASSWORD", bypass: ["<-loopback>"] },
    });
    const pwPut = await putSecret(world.deps)(
      apiEvent("acct", "PUT", "/functions/pw-via-proxy/secrets/PROXY_PASSWORD", { value: PASSWORD }, { ref: "pw-via-proxy", name: "PROXY_PASSWORD" }),
      lambdaContext("putSecret", "req"),
    );
    expect(pwPut.statusCode).toBe(204);
    const pwAnswer = await world.invoke("acct", "pw-via-proxy", { url: "http://shop.test/title/lambda-playwright-through-proxy" });
    await world.pipeline.settled();
    const pwRun = await world.run(runIdOf(pwAnswer));
    expect(pwRun).toMatchObject({ status: "succeeded", result_json: JSON.stringify({ title: "lambda-playwright-through-proxy" }) });
    expect(proxy.seen).toContain("GET http://shop.test/title/lambda-playwright-through-proxy");
    expect(JSON.stringify(pwRun)).not.toContain(PASSWORD);
  } finally {
    await world.close();
  }
});
