import { Stack, Validations } from "aws-cdk-lib";
import type { IConstruct } from "constructs";

/**
 * cdk-nag 3 findings are acknowledged with CDK's own `Validations.of(scope).acknowledge`
 * (v2's NagSuppressions is gone). Every acknowledgement here says why: a reason a reviewer
 * can check, never "not needed".
 */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < 30) throw new Error(`The acknowledgement of ${id} needs a real reason (got '${reason}')`);
  Validations.of(scope).acknowledge({ id, reason });
}

/**
 * Acknowledges AwsSolutions-IAM5 (wildcard resource) for these resource ARNs in the policies
 * under `scope`. cdk-nag names each finding `Resource::<ARN>`, with references flattened as
 * `<AWS::Region>` and `<LogicalId.Attribute>`; this computes those names from the ARNs.
 */
export function acknowledgeWildcards(scope: IConstruct, resources: string[], reason: string): void {
  for (const resource of resources) {
    acknowledge(scope, `AwsSolutions-IAM5[Resource::${flatten(Stack.of(scope).resolve(resource))}]`, reason);
  }
}

/** cdk-nag's flattening of a CloudFormation value (utils/flatten-cfn-reference, which it does not export). */
function flatten(node: unknown): string {
  if (node === undefined) return "";
  if (typeof node === "string") return node.replace(/\$\{/g, "<").replace(/\}/g, ">");
  const value = node as Record<string, unknown>;
  if (value["Fn::Join"]) {
    const [delimiter, items] = value["Fn::Join"] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (value["Fn::Sub"]) return flatten(value["Fn::Sub"]);
  if (value["Fn::GetAtt"]) {
    const [resource, attribute] = value["Fn::GetAtt"] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (value.Ref) return `<${flatten(value.Ref)}>`;
  return JSON.stringify(node);
}
