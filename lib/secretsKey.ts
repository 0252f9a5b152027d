import { Aws, RemovalPolicy } from "aws-cdk-lib";
import { type IRole, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Alias, type IKey, Key } from "aws-cdk-lib/aws-kms";
import { Construct } from "constructs";
import { RUNNER_CONTEXT_KEY, SECRET_CONTEXT_KEY } from "../lambdas/secrets/secretContexts";
import { RUN_DATA_KEY_PURPOSE } from "../lambdas/secrets/runEnvelope/envelopeFormat";

export interface SecretsKeyProps {
  prefix: string;
  removalPolicy: RemovalPolicy;
  /**
   * A key kept by an earlier stack (`cdk destroy` with tables retained) to use instead of a new
   * one: the secrets sealed in a reattached table open only with it (docs/deploy.md).
   */
  existingKeyArn?: string | null;
}

/**
 * The KMS key that seals function secrets and webhook signing secrets (customer managed,
 * rotated yearly). Every value is sealed with an encryption context naming the function it
 * belongs to, and the grants below require that context: the service's trusted Lambdas may
 * seal and open any function's values; a function's own Lambda may only open values sealed for
 * it (the `runner` context must equal the caller's `aws:userid`, which for a Lambda's role
 * session is `<role id>:<function's Lambda name>`).
 */
export class SecretsKey extends Construct {
  readonly key: IKey;

  constructor(scope: Construct, id: string, props: SecretsKeyProps) {
    super(scope, id);
    if (props.existingKeyArn) {
      this.key = Key.fromKeyArn(this, "Key", props.existingKeyArn);
      // The kept key's alias went with its stack: this stack names it again (and deletes only the alias).
      new Alias(this, "Alias", { aliasName: `alias/${props.prefix}-secrets`, targetKey: this.key });
      return;
    }
    this.key = new Key(this, "Key", {
      alias: `alias/${props.prefix}-secrets`,
      description: "browserfn: seals function secrets and webhook signing secrets; encrypts profiles' states in the run bucket (SSE-KMS)",
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
    });
  }

  /** Seal and open values sealed for some function (the route handlers). */
  grantSealAndOpen(role: IRole): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["kms:Encrypt", "kms:Decrypt"],
        resources: [this.key.keyArn],
        conditions: { Null: { [`kms:EncryptionContext:${SECRET_CONTEXT_KEY}`]: "false" } },
      }),
    );
  }

  /**
   * Make the data key a run's secrets are sealed under for the function's Lambda (the run
   * starters: lambdas/secrets/runEnvelope/runDataKeys.ts): GenerateDataKey only with a function
   * in the context and the run data key's purpose. The function's Lambda opens it with
   * grantRunnerOpen (the context names its session).
   */
  grantRunDataKeys(role: IRole): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["kms:GenerateDataKey"],
        resources: [this.key.keyArn],
        conditions: { Null: { [`kms:EncryptionContext:${SECRET_CONTEXT_KEY}`]: "false" }, StringEquals: { "kms:EncryptionContext:purpose": RUN_DATA_KEY_PURPOSE } },
      }),
    );
  }

  /** Open values sealed for some function (the run recorder redacts them from outcomes). */
  grantOpen(role: IRole): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["kms:Decrypt"],
        resources: [this.key.keyArn],
        conditions: { Null: { [`kms:EncryptionContext:${SECRET_CONTEXT_KEY}`]: "false" } },
      }),
    );
  }

  /**
   * `actions` with this key only through S3 (SSE-KMS) and only for the objects `objects` (an
   * ARN pattern): S3 calls KMS with the object's ARN as the encryption context (no bucket key).
   */
  grantThroughS3(role: IRole, objects: string, actions: string[]): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions,
        resources: [this.key.keyArn],
        conditions: {
          StringEquals: { "kms:ViaService": `s3.${Aws.REGION}.amazonaws.com` },
          StringLike: { "kms:EncryptionContext:aws:s3:arn": objects },
        },
      }),
    );
  }

  /** The functions' shared execution role: each Lambda opens only what was sealed for itself. */
  grantRunnerOpen(role: IRole): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["kms:Decrypt"],
        resources: [this.key.keyArn],
        conditions: { StringEquals: { [`kms:EncryptionContext:${RUNNER_CONTEXT_KEY}`]: "${aws:userid}" } },
      }),
    );
  }
}
