import { GetFunctionConfigurationCommand, InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { CONTROL_PLANE_MAX_ATTEMPTS, createLambdaClients } from "../../lambdas/runtime/aws/lambdaClient";

// The clients the service builds (createLambdaClients, as awsDeps does), with the real SDK
// stack — serializing, signing, retry, deserializing — and only the HTTP transport replaced by
// one that answers as Lambda does: a 503, or a 429 "Rate exceeded".

type Answer = 200 | 429 | 503;

/** Answers each request with the next of `answers` (200 once they run out); returns the requests seen. */
function answer(client: LambdaClient, answers: Answer[]): string[] {
  const seen: string[] = [];
  client.config.requestHandler = {
    handle: async (request: { method: string; path: string }) => {
      seen.push(`${request.method} ${request.path}`);
      const status = answers.shift() ?? 200;
      if (status === 200) return { response: { statusCode: 200, headers: {}, body: Buffer.from("{}") } };
      const type = status === 429 ? "TooManyRequestsException" : "ServiceException";
      const headers = { "x-amzn-errortype": type, "content-type": "application/json" };
      return { response: { statusCode: status, headers, body: Buffer.from(JSON.stringify({ Type: "Service", message: "Rate exceeded" })) } };
    },
  };
  return seen;
}

const CONFIGURATION = "GET /2015-03-31/functions/fn/configuration";
const INVOCATION = "POST /2015-03-31/functions/fn/invocations";

describe("the AWS runtime's Lambda clients (createLambdaClients)", () => {
  let clients: ReturnType<typeof createLambdaClients>;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeEach(() => {
    // Requests are signed before the transport sees them: any credentials will do.
    process.env.AWS_ACCESS_KEY_ID = "AKIDEXAMPLE";
    process.env.AWS_SECRET_ACCESS_KEY = "example";
    clients = createLambdaClients("eu-central-1");
  });

  afterEach(() => {
    clients.controlPlane.destroy();
    clients.invoke.destroy();
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  });

  it("control plane: the SDK's standard retries, up to CONTROL_PLANE_MAX_ATTEMPTS attempts", async () => {
    expect([clients.controlPlane.config.retryMode, await clients.controlPlane.config.maxAttempts()]).toEqual(["standard", CONTROL_PLANE_MAX_ATTEMPTS]);
    const seen = answer(clients.controlPlane, Array<Answer>(9).fill(503));
    const error: unknown = await clients.controlPlane.send(new GetFunctionConfigurationCommand({ FunctionName: "fn" })).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: "ServiceException", $metadata: { httpStatusCode: 503, attempts: 5 } });
    expect(seen).toEqual(Array(5).fill(CONFIGURATION));
  });

  it("control plane: a throttled call (Rate exceeded) is sent again and succeeds", async () => {
    const seen = answer(clients.controlPlane, [429]);
    await clients.controlPlane.send(new GetFunctionConfigurationCommand({ FunctionName: "fn" }));
    expect(seen).toEqual([CONFIGURATION, CONFIGURATION]);
  });

  it("invoke: one attempt, whatever Lambda answers (a second could run the automation twice)", async () => {
    expect(await clients.invoke.config.maxAttempts()).toBe(1);
    const seen = answer(clients.invoke, [503, 429]);
    const invoke = () => clients.invoke.send(new InvokeCommand({ FunctionName: "fn", InvocationType: "Event", Payload: "{}" }));
    await expect(invoke()).rejects.toMatchObject({ name: "ServiceException", $metadata: { attempts: 1 } });
    await expect(invoke()).rejects.toMatchObject({ name: "TooManyRequestsException", $metadata: { attempts: 1 } });
    expect(seen).toEqual([INVOCATION, INVOCATION]);
  });
});
