import { AWS_ENV } from "../../lambdas/aws/awsConfig";
import { synthStack } from "../helpers/testStack";

// The KMS key of function secrets as synthesized: rotated, and granted by need with conditions
// on the encryption context (a function's Lambda opens only what was sealed for its session).
type Resource = { Properties: Record<string, unknown> };
interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

describe("the secrets key", () => {
  const template = synthStack();
  const [keyId] = Object.keys(template.findResources("AWS::KMS::Key"));
  const keyArn = { "Fn::GetAtt": [keyId, "Arn"] };

  /** Every statement that grants a KMS action on the key, by the role it is attached to. */
  const kmsGrants = (): Map<string, Statement[]> => {
    const grants = new Map<string, Statement[]>();
    for (const policy of Object.values(template.findResources("AWS::IAM::Policy")) as Resource[]) {
      const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
      const onKey = statements.filter((statement) => list(statement.Action).some((action) => action.startsWith("kms:")));
      for (const role of policy.Properties.Roles as { Ref: string }[]) grants.set(role.Ref, [...(grants.get(role.Ref) ?? []), ...onKey]);
    }
    return grants;
  };
  const roleNamed = (fragment: string) => {
    const ids = Object.keys(template.findResources("AWS::IAM::Role")).filter((id) => id.includes(fragment));
    if (ids.length !== 1) throw new Error(`roles matching ${fragment}: ${ids.join(", ")}`);
    return ids[0] as string;
  };

  it("is one customer-managed key, rotated, with an alias", () => {
    expect(Object.keys(template.findResources("AWS::KMS::Key"))).toHaveLength(1);
    template.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
    template.hasResourceProperties("AWS::KMS::Alias", { AliasName: "alias/bfn-test-secrets" });
  });

  /** Statements that use the key only through S3 (SSE-KMS of profiles' states: test/unit/stackSecurity.test.ts checks them). */
  const viaS3 = (statement: unknown) => JSON.stringify(statement).includes("kms:ViaService");
  const withoutS3 = () => new Map([...kmsGrants()].map(([role, statements]) => [role, (statements as unknown[]).filter((statement) => !viaS3(statement))]));

  it("lets the roles that start runs use the key through S3 only, for profiles' states", () => {
    const viaS3Roles = [...kmsGrants()].filter(([, statements]) => (statements as unknown[]).some(viaS3)).map(([role]) => role);
    expect(viaS3Roles.sort()).toEqual([roleNamed("RoutesInvokeRole"), roleNamed("RunRecorderRole"), roleNamed("RunSweeperRole"), roleNamed("ScheduledRunRole")].sort());
  });

  it("lets the routes that need it seal and open, the recorder, the sweeper, scheduled runs and webhook deliveries open, each only with a function's encryption context", () => {
    const grants = withoutS3();
    const needsFunction = { Null: { "kms:EncryptionContext:function_id": "false" } };
    // Whoever starts runs makes the data key a run's secrets go to its Lambda under (lambdas/secrets/runEnvelope): only with its purpose.
    const runDataKeys = { Action: "kms:GenerateDataKey", Effect: "Allow", Resource: keyArn, Condition: { ...needsFunction, StringEquals: { "kms:EncryptionContext:purpose": "run_data_key" } } };
    // The routes that invoke (a run's secrets, sealed for its Lambda), manage functions (their webhook signing secret) and write secrets.
    for (const role of ["RoutesInvokeRole", "RoutesFunctionsRole", "RoutesSecretsRole"]) {
      const sealAndOpen = { Action: ["kms:Encrypt", "kms:Decrypt"], Effect: "Allow", Resource: keyArn, Condition: needsFunction };
      expect(grants.get(roleNamed(role))).toEqual(role === "RoutesInvokeRole" ? [sealAndOpen, runDataKeys] : [sealAndOpen]);
    }
    // The sweeper starts queued runs (their secrets' values are redacted from their records).
    for (const role of ["RunRecorderRole", "RunSweeperRole", "ScheduledRunRole", "WebhookDeliveryRole"]) {
      const open = { Action: "kms:Decrypt", Effect: "Allow", Resource: keyArn, Condition: needsFunction };
      expect(grants.get(roleNamed(role))).toEqual(role === "WebhookDeliveryRole" ? [open] : expect.arrayContaining([open, runDataKeys]));
      expect(grants.get(roleNamed(role))).toHaveLength(role === "WebhookDeliveryRole" ? 1 : 2);
    }
  });

  it("lets a function's Lambda open only what was sealed for its own session, and nobody else use the key", () => {
    const grants = kmsGrants();
    const execution = roleNamed("FunctionRuntimeExecutionRole");
    expect(grants.get(execution)).toEqual([
      { Action: "kms:Decrypt", Effect: "Allow", Resource: keyArn, Condition: { StringEquals: { "kms:EncryptionContext:runner": "${aws:userid}" } } },
    ]);
    const granted = [...grants].filter(([, statements]) => statements.length > 0).map(([role]) => role);
    expect(granted.sort()).toEqual([roleNamed("RoutesInvokeRole"), roleNamed("RoutesFunctionsRole"), roleNamed("RoutesSecretsRole"), roleNamed("RunRecorderRole"), roleNamed("RunSweeperRole"), roleNamed("ScheduledRunRole"), roleNamed("WebhookDeliveryRole"), execution].sort());
  });

  it("names the key and the execution role's id to the Lambdas that seal and open", () => {
    const functions = Object.values(template.findResources("AWS::Lambda::Function")) as Resource[];
    const envOf = (name: string) =>
      (functions.find((fn) => fn.Properties.FunctionName === name)?.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};
    for (const name of ["bfn-test-api-putSecret", "bfn-test-api-invokePost", "bfn-test-run-recorder", "bfn-test-scheduled-run"]) {
      expect([name, envOf(name)[AWS_ENV.secretsKeyArn]]).toEqual([name, keyArn]);
      expect([name, envOf(name)[AWS_ENV.executionRoleId]]).toEqual([name, { "Fn::GetAtt": [expect.stringContaining("FunctionRuntimeExecutionRole"), "RoleId"] }]);
    }
  });
});
