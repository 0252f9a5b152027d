import { z } from "zod";
import { principalContext } from "../../lambdas/aws/authorizerContext";
import { readAwsEnv } from "../../lambdas/aws/awsConfig";
import { LAMBDA_EVENT_LIMIT_BYTES } from "../../lambdas/aws/lambdaEnvelope";
import { defineRoute } from "../../lambdas/http/defineRoute";
import { json } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";
import { createRouteBase } from "../../lambdas/aws/routeDeps/routeBase";
import { apiGatewayEvent } from "../helpers/apiGatewayEvent";
import { SERVICE_LAMBDA_ENV } from "../helpers/awsEnv";

// #23.13: a request body reaches a route Lambda inside API Gateway's event, JSON with the body
// escaped in it, and Lambda takes at most 6 MiB of event. The AWS body limit is one a client can
// meet: a body one byte over it, of the characters that escape worst, still reaches the handler,
// which answers 413 payload_too_large in the API's shape; one at the limit is taken. (The 6 MiB
// check it had could never fire: such a body never reached the handler.)

const principal = principalContext({ account_id: "acme", plan: "pro", admin: false, key_id: "key_1" });
/** API Gateway's headers at their largest (HTTP APIs take 10 KiB of request line and headers). */
const BIG_HEADERS = { "user-agent": "u".repeat(10 * 1024) };

/** `{"text":"\"\"…"}` of exactly `bytes` bytes: each quote of the value is 2 bytes of body and 4 in the event. */
function worstBody(bytes: number): string {
  const prefix = '{"text":"';
  const room = bytes - prefix.length - 2;
  return `${prefix}${'\\"'.repeat(Math.floor(room / 2))}${room % 2 === 1 ? "x" : ""}"}`;
}

describe("the request body limit on AWS", () => {
  // Every route Lambda's settings come from the base its group's deps are built on (lambdas/aws/routeDeps).
  const awsDeps = createRouteBase(readAwsEnv(SERVICE_LAMBDA_ENV), "body limit test");
  const limit = awsDeps.config.maxBodyBytes;
  const echo = defineRoute({ body: z.object({ text: z.string() }) }, async (request) => json(200, { chars: request.body.text.length }))(awsDeps);

  const call = (body: string) => {
    const event = apiGatewayEvent(principal, "POST", "/echo", undefined, undefined, BIG_HEADERS);
    event.body = body;
    // What Lambda is handed: within its event limit, so the handler sees the body.
    expect(Buffer.byteLength(JSON.stringify(event))).toBeLessThanOrEqual(LAMBDA_EVENT_LIMIT_BYTES);
    return echo(event, lambdaContext("echo", "req"));
  };

  it("refuses, with 413 from the handler, a body one byte over it that escapes at its worst", async () => {
    const body = worstBody(limit + 1);
    expect(Buffer.byteLength(body)).toBe(limit + 1);
    const answer = await call(body);
    expect(answer.statusCode).toBe(413);
    expect(JSON.parse(answer.body ?? "{}")).toMatchObject({ error: { code: "payload_too_large" } });
  });

  it("takes a body exactly at the limit that escapes at its worst", async () => {
    const body = worstBody(limit);
    expect(Buffer.byteLength(body)).toBe(limit);
    const answer = await call(body);
    expect(answer.statusCode).toBe(200);
  });
});
