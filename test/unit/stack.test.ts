import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { BrowserfnStack } from "../../lib/browserfnStack";
import { MAIN_TABLE } from "../../lambdas/store/tables";

describe("the CDK stack", () => {
  const template = Template.fromStack(new BrowserfnStack(new App(), "Test", { prefix: "bfn-test" }));

  it("provisions the table of the shared definition: on demand, PITR, TTL, the gsi1 index", () => {
    template.resourceCountIs("AWS::DynamoDB::GlobalTable", 1);
    template.hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      TableName: "bfn-test-main",
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [
        { AttributeName: MAIN_TABLE.partitionKey.name, KeyType: "HASH" },
        { AttributeName: MAIN_TABLE.sortKey.name, KeyType: "RANGE" },
      ],
      TimeToLiveSpecification: { AttributeName: "expires_at", Enabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: "gsi1",
          KeySchema: [
            { AttributeName: "gsi1pk", KeyType: "HASH" },
            { AttributeName: "gsi1sk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
      ],
      Replicas: [{ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }],
    });
    template.hasResource("AWS::DynamoDB::GlobalTable", { DeletionPolicy: "Retain" });
  });
});
