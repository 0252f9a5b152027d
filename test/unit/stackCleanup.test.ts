import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DeleteFunctionCommand, ListFunctionsCommand } from "@aws-sdk/client-lambda";
import type { CloudFormationCustomResourceEvent } from "aws-lambda";
import { AWS_ENV } from "../../lambdas/aws/awsConfig";
import { CLEANUP_PREFIX_ENV, makeStackCleanupHandler, removeFunctionLambdas, respondToCloudFormation, type CleanupLambda } from "../../lambdas/stack/removeFunctionLambdas";
import { readFileSync } from "node:fs";
import path from "node:path";
import { synthStack } from "../helpers/testStack";

// `cdk destroy` leaves nothing that runs or bills but the data kept on purpose (#23.7): the
// per-function Lambdas the deploy job made are deleted by the stack's cleanup custom resource,
// and the schedule group (with its schedules) goes with the stack.

/** Lambda's control plane for the cleanup: pages of functions, and a record of every call. */
function lambdaStandIn(pages: string[][], gone: string[] = []): CleanupLambda & { calls: { command: string; input: unknown }[] } {
  const calls: { command: string; input: unknown }[] = [];
  return {
    calls,
    async send(command) {
      calls.push({ command: command.constructor.name, input: command.input });
      if (command instanceof ListFunctionsCommand) {
        const index = command.input.Marker === undefined ? 0 : Number(command.input.Marker);
        const next = index + 1 < pages.length ? String(index + 1) : undefined;
        return { Functions: (pages[index] ?? []).map((FunctionName) => ({ FunctionName })), NextMarker: next };
      }
      if (command instanceof DeleteFunctionCommand && gone.includes(String(command.input.FunctionName))) {
        throw Object.assign(new Error("Function not found"), { name: "ResourceNotFoundException" });
      }
      return {};
    },
  };
}

describe("removing the per-function Lambdas", () => {
  it("lists every page, then deletes exactly the Lambdas named with the function prefix (one already gone is fine)", async () => {
    const lambda = lambdaStandIn([["bfn-test-fn-fn_1", "bfn-test-api-getRun", "other-app"], ["bfn-test-fn-fn_2", "bfn-test-fn-fn_3"]], ["bfn-test-fn-fn_3"]);
    expect(await removeFunctionLambdas({ lambda, functionPrefix: "bfn-test-fn-" })).toEqual(["bfn-test-fn-fn_1", "bfn-test-fn-fn_2", "bfn-test-fn-fn_3"]);
    expect(lambda.calls.slice(0, 2)).toEqual([
      { command: "ListFunctionsCommand", input: { Marker: undefined, MaxItems: 50 } },
      { command: "ListFunctionsCommand", input: { Marker: "1", MaxItems: 50 } },
    ]);
    expect(lambda.calls.slice(2).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      ["bfn-test-fn-fn_1", "bfn-test-fn-fn_2", "bfn-test-fn-fn_3"].map((FunctionName) => ({ command: "DeleteFunctionCommand", input: { FunctionName } })),
    );
  });

  describe("as CloudFormation's custom resource", () => {
    let server: Server;
    let url: string;
    const answers: { method?: string; contentType?: string; body: Record<string, unknown> }[] = [];
    beforeAll(async () => {
      server = createServer((request, response) => {
        let text = "";
        request.on("data", (chunk: Buffer) => (text += chunk.toString()));
        request.on("end", () => {
          answers.push({ method: request.method, contentType: request.headers["content-type"], body: JSON.parse(text) as Record<string, unknown> });
          response.end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/response?X-Amz-Signature=x`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    beforeEach(() => (answers.length = 0));

    const event = (RequestType: "Create" | "Update" | "Delete") =>
      ({
        RequestType,
        ResponseURL: url,
        StackId: "arn:aws:cloudformation:eu-west-1:123456789012:stack/Test/guid",
        RequestId: "req-1",
        LogicalResourceId: "CleanupFunctionLambdas",
        ResourceType: "Custom::BrowserfnFunctionLambdas",
        ServiceToken: "arn",
        ResourceProperties: { ServiceToken: "arn" },
        ...(RequestType === "Create" ? {} : { PhysicalResourceId: "CleanupFunctionLambdas-function-lambdas" }),
      }) as CloudFormationCustomResourceEvent;
    const handler = (lambda: CleanupLambda) => makeStackCleanupHandler({ lambda, functionPrefix: "bfn-test-fn-", respond: respondToCloudFormation, log: () => undefined });

    it("deletes nothing on Create and Update, and answers SUCCESS", async () => {
      const lambda = lambdaStandIn([["bfn-test-fn-fn_1"]]);
      await handler(lambda)(event("Create"));
      await handler(lambda)(event("Update"));
      expect(lambda.calls).toEqual([]);
      expect(answers.map((a) => [a.method, a.body.Status, a.body.PhysicalResourceId])).toEqual([
        ["PUT", "SUCCESS", "CleanupFunctionLambdas-function-lambdas"],
        ["PUT", "SUCCESS", "CleanupFunctionLambdas-function-lambdas"],
      ]);
    });

    it("on Delete removes the function Lambdas and answers SUCCESS to the presigned URL (no content type)", async () => {
      const lambda = lambdaStandIn([["bfn-test-fn-fn_1", "bfn-test-scheduled-run"]]);
      await handler(lambda)(event("Delete"));
      expect(lambda.calls).toEqual([
        { command: "ListFunctionsCommand", input: { Marker: undefined, MaxItems: 50 } },
        { command: "DeleteFunctionCommand", input: { FunctionName: "bfn-test-fn-fn_1" } },
      ]);
      expect(answers).toEqual([
        {
          method: "PUT",
          contentType: "",
          body: {
            Status: "SUCCESS",
            Reason: "removed 1 function Lambda(s) named bfn-test-fn-*",
            PhysicalResourceId: "CleanupFunctionLambdas-function-lambdas",
            StackId: "arn:aws:cloudformation:eu-west-1:123456789012:stack/Test/guid",
            RequestId: "req-1",
            LogicalResourceId: "CleanupFunctionLambdas",
          },
        },
      ]);
    });

    it("answers FAILED with the reason when a delete fails (the stack's deletion stops there, nothing left unnoticed)", async () => {
      const lambda = lambdaStandIn([["bfn-test-fn-fn_1"]]);
      const failing: CleanupLambda = {
        send: async (command) => {
          if (command instanceof DeleteFunctionCommand) throw Object.assign(new Error("Rate exceeded"), { name: "TooManyRequestsException" });
          return lambda.send(command);
        },
      };
      await handler(failing)(event("Delete"));
      expect(answers.map((a) => [a.body.Status, a.body.Reason])).toEqual([["FAILED", "could not remove the function Lambdas named bfn-test-fn-*: Rate exceeded"]]);
    });
  });
});

describe("the stack on destroy", () => {
  const template = synthStack();
  const resources = template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string; DependsOn?: string[]; Properties?: Record<string, unknown> }>;
  const idOf = (type: string, prefix: string) => {
    const ids = Object.keys(resources).filter((id) => resources[id]?.Type === type && id.startsWith(prefix));
    if (ids.length !== 1) throw new Error(`${ids.length} ${type} ${prefix}*`);
    return ids[0] as string;
  };

  it("deletes the schedule group (and so its schedules), even when the tables are kept", () => {
    expect(resources[idOf("AWS::Scheduler::ScheduleGroup", "SchedulingGroup")]?.DeletionPolicy).toBe("Delete");
    expect(resources[idOf("AWS::DynamoDB::GlobalTable", "Datamain")]?.DeletionPolicy).toBe("Retain");
  });

  it("has a cleanup custom resource, deleted before the execution role, whose Lambda may delete only the prefixed function Lambdas", () => {
    const cleanupId = idOf("Custom::BrowserfnFunctionLambdas", "CleanupFunctionLambdas");
    const cleanup = resources[cleanupId];
    expect(cleanup?.DependsOn).toContain(idOf("AWS::IAM::Role", "FunctionRuntimeExecutionRole"));
    const fnId = idOf("AWS::Lambda::Function", "CleanupFunction");
    expect(cleanup?.Properties?.ServiceToken).toEqual({ "Fn::GetAtt": [fnId, "Arn"] });
    expect(CLEANUP_PREFIX_ENV).toBe(AWS_ENV.functionPrefix);
    expect((resources[fnId]?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables[CLEANUP_PREFIX_ENV]).toBe("bfn-test-fn-");
    const roleId = idOf("AWS::IAM::Role", "CleanupRole");
    const statements = Object.values(resources)
      .filter((r) => r.Type === "AWS::IAM::Policy" && (r.Properties?.Roles as { Ref: string }[]).some((ref) => ref.Ref === roleId))
      .flatMap((r) => (r.Properties?.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement);
    expect(statements.map((s) => s.Action)).toEqual(["lambda:ListFunctions", "lambda:DeleteFunction", ["logs:CreateLogStream", "logs:PutLogEvents"]]);
    expect(JSON.stringify(statements[1]?.Resource)).toContain(":function:bfn-test-fn-*");
  });

  it("keeps only the data on delete (table, run bucket, secrets key, user pool); everything else with a fixed name goes", () => {
    const kept = Object.entries(resources)
      .filter(([, r]) => r.DeletionPolicy !== undefined && r.DeletionPolicy !== "Delete")
      .map(([, r]) => r.Type)
      .sort();
    expect(kept).toEqual(["AWS::Cognito::UserPool", "AWS::DynamoDB::GlobalTable", "AWS::KMS::Key", "AWS::S3::Bucket"]);
  });
});

describe("deploying again after a destroy", () => {
  it("re-adopts the kept table by its name: npm run deploy imports existing resources", () => {
    const scripts = (JSON.parse(readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.deploy).toBe("cdk deploy --import-existing-resources");
  });

  it("uses the kept secrets key when secretsKeyArn names it: no new key, the alias and every grant on it", () => {
    const keyArn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const template = synthStack({ secretsKeyArn: keyArn });
    const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
    expect(Object.values(json.Resources).filter((r) => r.Type === "AWS::KMS::Key")).toEqual([]);
    template.hasResourceProperties("AWS::KMS::Alias", { AliasName: "alias/bfn-test-secrets", TargetKeyId: keyArn });
    const kmsResources = Object.values(json.Resources)
      .filter((r) => r.Type === "AWS::IAM::Policy")
      .flatMap((r) => (r.Properties?.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement)
      .filter((s) => [s.Action].flat().some((a) => a.startsWith("kms:")))
      .map((s) => s.Resource);
    expect(kmsResources.length).toBeGreaterThan(5);
    for (const resource of kmsResources) expect(resource).toBe(keyArn);
    expect(() => synthStack({ secretsKeyArn: "alias/mine" })).toThrow(/secretsKeyArn/);
  });
});
