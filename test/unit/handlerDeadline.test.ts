import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { DEFAULT_PLANS } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import type { Deps } from "../../lambdas/deps";
import { defineRoute } from "../../lambdas/http/defineRoute";
import { json } from "../../lambdas/http/response";
import { lambdaContext } from "../../lambdas/local/lambdaContext";

// A handler still busy when its Lambda's time runs out (middy answers for it just before) is the
// service's own failure: never reported as a store that cannot be reached.

const event = {
  version: "2.0", routeKey: "$default", rawPath: "/slow", rawQueryString: "", isBase64Encoded: false, headers: {},
  requestContext: { requestId: "req-deadline", domainName: "api.example.com", stage: "$default", http: { method: "GET", path: "/slow" } },
} as unknown as APIGatewayProxyEventV2;

describe("a handler that outlasts its Lambda's time", () => {
  it("answers 500 internal_error, logged as such, not 503 for an unreachable store", async () => {
    const lines: string[] = [];
    const deps = { config: { plans: DEFAULT_PLANS, publicUrl: "http://127.0.0.1", syncWaitSeconds: 1, maxBodyBytes: MAX_BODY_BYTES }, log: (line: string) => void lines.push(line) } as unknown as Deps;
    let timer: NodeJS.Timeout | undefined;
    const handler = defineRoute({ auth: false }, () => new Promise((resolve) => (timer = setTimeout(() => resolve(json(200, {})), 1000))))(deps);
    try {
      const answer = await handler(event, lambdaContext("slow", "req-deadline", 100));
      expect(answer.statusCode).toBe(500);
      expect(JSON.parse(answer.body ?? "{}").error).toMatchObject({ code: "internal_error", request_id: "req-deadline" });
      expect(lines).toEqual([expect.stringMatching(/^\[req-deadline\] internal error: .*did not answer within its Lambda's time/)]);
    } finally {
      clearTimeout(timer);
    }
  });

  it("gives the route its deadline from the Lambda context", async () => {
    const deps = { config: { plans: DEFAULT_PLANS, publicUrl: "http://127.0.0.1", syncWaitSeconds: 1, maxBodyBytes: MAX_BODY_BYTES }, log: () => undefined } as unknown as Deps;
    const before = Date.now();
    const handler = defineRoute({ auth: false }, async (request) => json(200, { deadline: request.deadline }))(deps);
    const { deadline } = JSON.parse((await handler(event, lambdaContext("slow", "req-deadline", 29_000))).body ?? "{}") as { deadline: number };
    expect(deadline).toBeGreaterThanOrEqual(before + 29_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 29_000);
  });
});
