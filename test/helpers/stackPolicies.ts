import type { PolicyStatement } from "./iamPolicy";

/** A synthesized CloudFormation template (Template.toJSON()). */
export interface TemplateJson {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

export const ACCOUNT = "123456789012";
export const REGION = "eu-west-1";
const PSEUDO: Record<string, string> = { "AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::URLSuffix": "amazonaws.com" };

/**
 * The IAM policies of a synthesized stack, with their intrinsic functions resolved to the ARNs
 * the deployed stack would have (account ACCOUNT, region REGION). Resources CloudFormation
 * names itself (a bucket without BucketName…) take a name from `physicalNames` (by logical id),
 * else their logical id. What cannot be resolved becomes `<unresolved …>`, which matches no ARN.
 */
export class StackPolicies {
  constructor(
    readonly template: TemplateJson,
    private readonly physicalNames: Record<string, string> = {},
  ) {}

  /** The logical id of the one resource of `type` whose logical id starts with `prefix`. */
  logicalId(type: string, prefix: string): string {
    const ids = Object.entries(this.template.Resources).filter(([id, r]) => r.Type === type && id.startsWith(prefix)).map(([id]) => id);
    if (ids.length !== 1) throw new Error(`${ids.length} ${type} named ${prefix}*`);
    return ids[0] as string;
  }

  /** The role a Lambda function of the stack runs with (its logical id), by the function's name. */
  roleOfFunction(functionName: string): string {
    const fn = Object.values(this.template.Resources).find((r) => r.Type === "AWS::Lambda::Function" && r.Properties?.FunctionName === functionName);
    const role = fn?.Properties?.Role as { "Fn::GetAtt"?: [string, string] } | undefined;
    if (!role?.["Fn::GetAtt"]) throw new Error(`no function ${functionName}`);
    return role["Fn::GetAtt"][0];
  }

  /** Every statement of a role's identity policies: its inline Policies and the AWS::IAM::Policy resources attached to it. */
  roleStatements(roleId: string): PolicyStatement[] {
    const role = this.template.Resources[roleId];
    if (role?.Type !== "AWS::IAM::Role") throw new Error(`no role ${roleId}`);
    if (role.Properties?.ManagedPolicyArns !== undefined) throw new Error(`${roleId} has managed policies: not modelled`);
    const documents: unknown[] = ((role.Properties?.Policies as { PolicyDocument: unknown }[] | undefined) ?? []).map((p) => p.PolicyDocument);
    for (const resource of Object.values(this.template.Resources)) {
      if (resource.Type !== "AWS::IAM::Policy" && resource.Type !== "AWS::IAM::ManagedPolicy") continue;
      const roles = (resource.Properties?.Roles as unknown[] | undefined) ?? [];
      if (roles.some((ref) => (ref as { Ref?: string }).Ref === roleId)) documents.push(resource.Properties?.PolicyDocument);
    }
    return documents.flatMap((document) => this.statements(document));
  }

  /** The statements of the resource policies (bucket, queue, …) on resources of `type`. */
  resourcePolicyStatements(type: "AWS::S3::BucketPolicy" | "AWS::SQS::QueuePolicy"): PolicyStatement[] {
    return Object.values(this.template.Resources)
      .filter((r) => r.Type === type)
      .flatMap((r) => this.statements(r.Properties?.PolicyDocument));
  }

  /** The ARN the deployed resource would have (Fn::GetAtt [id, Arn]). */
  arn(logicalId: string): string {
    return String(this.resolve({ "Fn::GetAtt": [logicalId, "Arn"] }));
  }

  statements(document: unknown): PolicyStatement[] {
    const statement = (document as { Statement?: unknown } | undefined)?.Statement;
    return (Array.isArray(statement) ? statement : [statement]).map((s) => this.resolve(s) as PolicyStatement);
  }

  resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (typeof value !== "object" || value === null) return value;
    const object = value as Record<string, unknown>;
    if ("Ref" in object) return this.ref(String(object.Ref));
    if ("Fn::GetAtt" in object) {
      const [id, attribute] = object["Fn::GetAtt"] as [string, string];
      return attribute === "Arn" ? this.arnOf(id) : `<unresolved ${id}.${attribute}>`;
    }
    if ("Fn::Join" in object) {
      const [separator, parts] = object["Fn::Join"] as [string, unknown[]];
      return (this.resolve(parts) as unknown[]).map(String).join(separator);
    }
    if ("Fn::Select" in object) {
      const [index, items] = object["Fn::Select"] as [number, unknown];
      return (this.resolve(items) as unknown[])[Number(index)];
    }
    if ("Fn::Split" in object) {
      const [separator, text] = object["Fn::Split"] as [string, unknown];
      return String(this.resolve(text)).split(separator);
    }
    const keys = Object.keys(object);
    if (keys.length === 1 && keys[0]?.startsWith("Fn::")) return `<unresolved ${keys[0]}>`;
    return Object.fromEntries(keys.map((key) => [key, this.resolve(object[key])]));
  }

  private ref(id: string): string {
    const pseudo = PSEUDO[id];
    if (pseudo) return pseudo;
    return this.nameOf(id);
  }

  private nameOf(id: string): string {
    const resource = this.template.Resources[id];
    const p = resource?.Properties ?? {};
    const given = p.FunctionName ?? p.RoleName ?? p.BucketName ?? p.StateMachineName ?? p.LogGroupName ?? p.TableName ?? p.QueueName;
    return String(given ?? this.physicalNames[id] ?? id);
  }

  private arnOf(id: string): string {
    const type = this.template.Resources[id]?.Type;
    const name = this.nameOf(id);
    const at = `${REGION}:${ACCOUNT}`;
    switch (type) {
      case "AWS::Lambda::Function": return `arn:aws:lambda:${at}:function:${name}`;
      case "AWS::IAM::Role": return `arn:aws:iam::${ACCOUNT}:role/${name}`;
      case "AWS::S3::Bucket": return `arn:aws:s3:::${name}`;
      case "AWS::Logs::LogGroup": return `arn:aws:logs:${at}:log-group:${name}:*`;
      case "AWS::KMS::Key": return `arn:aws:kms:${at}:key/${name}`;
      case "AWS::SQS::Queue": return `arn:aws:sqs:${at}:${name}`;
      case "AWS::DynamoDB::Table":
      case "AWS::DynamoDB::GlobalTable": return `arn:aws:dynamodb:${at}:table/${name}`;
      case "AWS::StepFunctions::StateMachine": return `arn:aws:states:${at}:stateMachine:${name}`;
      default: return `<unresolved ${id}.Arn>`;
    }
  }
}
