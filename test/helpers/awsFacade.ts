import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InvokeCommand } from "@aws-sdk/client-lambda";
import { evaluate, type PolicyStatement } from "./iamPolicy";
import type { InProcessLambda } from "./inProcessLambda";
import type { InProcessS3 } from "./inProcessS3";
import type { InProcessStepFunctions } from "./inProcessStepFunctions";
import { REGION } from "./stackPolicies";

/** Who a set of credentials belongs to: a role's session. */
export interface Caller {
  /** The role's statements (StackPolicies.roleStatements). */
  statements: PolicyStatement[];
  /** `aws:userid`: `<role id>:<session name>` (a Lambda's session is named after the function). */
  userid: string;
}

/** One call as CloudTrail would record it. */
export interface FacadeCall {
  userid: string;
  action: string;
  resource: string;
  effect: "Allow" | "ExplicitDeny" | "ImplicitDeny";
}

export interface Credentials {
  AWS_ACCESS_KEY_ID: string;
  AWS_SECRET_ACCESS_KEY: string;
  AWS_SESSION_TOKEN: string;
}

/**
 * The AWS APIs on 127.0.0.1, for code that holds a role's credentials (a function Lambda's
 * environment) and calls AWS itself: Lambda's Invoke (REST), Step Functions' StartExecution and
 * StopExecution (JSON protocol, X-Amz-Target) and S3's path-style GetObject and PutObject. Each
 * request's caller is the session its access key id was issued to (`credentials`; its session
 * token must come with it, standing in for the signature, which is not checked), and each call
 * is authorized by IAM's rules (iamPolicy.evaluate) over the caller's role statements and, for
 * S3, the bucket policy, as a TLS request (`aws:SecureTransport` true). Allowed calls reach the
 * in-process stand-ins; denied ones answer AccessDenied as each service does.
 */
export class AwsFacade {
  readonly calls: FacadeCall[] = [];
  private readonly sessions = new Map<string, { token: string; caller: Caller }>();
  private server?: Server;
  private port = 0;

  constructor(
    private readonly services: { lambda: InProcessLambda; stepFunctions: InProcessStepFunctions; s3: InProcessS3 },
    /** Resource policies of S3 buckets (the template's AWS::S3::BucketPolicy statements). */
    private readonly bucketPolicies: PolicyStatement[],
    private readonly account: string,
  ) {}

  /** Fresh credentials of `caller`'s session, as Lambda puts them in a function's environment. */
  credentials(caller: Caller): Credentials {
    const id = `ASIA${randomBytes(8).toString("hex").toUpperCase()}`;
    const token = randomBytes(24).toString("base64");
    this.sessions.set(id, { token, caller });
    return { AWS_ACCESS_KEY_ID: id, AWS_SECRET_ACCESS_KEY: randomBytes(20).toString("base64"), AWS_SESSION_TOKEN: token };
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        this.handle(request, Buffer.concat(chunks), response).catch((error: unknown) => {
          response.writeHead(500, { "content-type": "application/json" });
          response.end(JSON.stringify({ message: String((error as Error).message) }));
        });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private caller(request: IncomingMessage): Caller | undefined {
    const id = /Credential=([A-Z0-9]+)\//.exec(String(request.headers.authorization ?? ""))?.[1];
    const session = id === undefined ? undefined : this.sessions.get(id);
    return session && session.token === request.headers["x-amz-security-token"] ? session.caller : undefined;
  }

  private authorize(caller: Caller, action: string, resource: string, resourcePolicies: PolicyStatement[] = []): boolean {
    const context = { "aws:userid": caller.userid, "aws:SecureTransport": "true", "aws:RequestedRegion": REGION };
    // One account: the identity's policies and the resource's together (a resource policy here only denies).
    const { effect } = evaluate([...caller.statements, ...resourcePolicies], { action, resource, context });
    this.calls.push({ userid: caller.userid, action, resource, effect });
    return effect === "Allow";
  }

  private async handle(request: IncomingMessage, body: Buffer, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://aws.local");
    const caller = this.caller(request);
    const target = String(request.headers["x-amz-target"] ?? "");
    const send = (status: number, headers: Record<string, string>, text: string | Buffer) => {
      response.writeHead(status, headers);
      response.end(text);
    };
    if (!caller) return send(403, { "content-type": "application/json", "x-amzn-errortype": "UnrecognizedClientException" }, '{"message":"The security token included in the request is invalid."}');

    const invoke = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
    if (request.method === "POST" && invoke) {
      const named = decodeURIComponent(invoke[1] ?? "");
      const qualifier = url.searchParams.get("Qualifier");
      const arn = named.startsWith("arn:") ? named : `arn:aws:lambda:${REGION}:${this.account}:function:${named}`;
      const resource = qualifier ? `${arn}:${qualifier}` : arn;
      if (!this.authorize(caller, "lambda:InvokeFunction", resource)) {
        return send(403, { "content-type": "application/json", "x-amzn-errortype": "AccessDeniedException" }, JSON.stringify({ Message: `User: ${caller.userid} is not authorized to perform: lambda:InvokeFunction on resource: ${resource}` }));
      }
      const answer = (await this.services.lambda.send(new InvokeCommand({ FunctionName: named, ...(qualifier ? { Qualifier: qualifier } : {}), Payload: body }))) as { StatusCode?: number; Payload?: Uint8Array; FunctionError?: string };
      return send(answer.StatusCode ?? 200, { "content-type": "application/json", ...(answer.FunctionError ? { "x-amz-function-error": answer.FunctionError } : {}) }, Buffer.from(answer.Payload ?? new Uint8Array()).toString("utf8"));
    }

    const states = /^AWSStepFunctions\.(StartExecution|StopExecution)$/.exec(target);
    if (request.method === "POST" && states) {
      const input = JSON.parse(body.toString("utf8") || "{}") as { stateMachineArn?: string; executionArn?: string; name?: string; input?: string };
      const resource = String(states[1] === "StartExecution" ? input.stateMachineArn : input.executionArn);
      if (!this.authorize(caller, `states:${states[1]}`, resource)) {
        return send(400, { "content-type": "application/x-amz-json-1.0" }, JSON.stringify({ __type: "AccessDeniedException", message: `User: ${caller.userid} is not authorized to perform: states:${states[1]} on resource: ${resource}` }));
      }
      if (states[1] !== "StartExecution") throw new Error("the stand-in does not stop executions");
      const started = await this.services.stepFunctions.send({ constructor: { name: "StartExecutionCommand" }, input: { stateMachineArn: resource, name: input.name, input: input.input } });
      return send(200, { "content-type": "application/x-amz-json-1.0" }, JSON.stringify(started));
    }

    if ((request.method === "PUT" || request.method === "GET") && target === "") {
      const [bucket = "", ...rest] = url.pathname.slice(1).split("/");
      const key = decodeURIComponent(rest.join("/"));
      const action = request.method === "PUT" ? "s3:PutObject" : "s3:GetObject";
      const deny = () => send(403, { "content-type": "application/xml" }, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
      if (!this.authorize(caller, action, `arn:aws:s3:::${bucket}/${key}`, this.bucketPolicies)) return deny();
      const objects = this.services.s3.objects;
      if (request.method === "PUT") {
        objects.set(`${bucket}/${key}`, body);
        return send(200, { etag: '"etag"' }, "");
      }
      const object = objects.get(`${bucket}/${key}`);
      return object ? send(200, { "content-type": "application/octet-stream" }, object) : deny();
    }
    send(400, { "content-type": "application/json" }, JSON.stringify({ message: `the facade does not serve ${request.method} ${url.pathname} ${target}` }));
  }
}
