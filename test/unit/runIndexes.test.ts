import { Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { copyRun } from "../../lambdas/runs/copyRun";
import { newRun } from "../../lambdas/runs/newRun";
import { RUN_DEADLINE_MARGIN_MS, type RunItem } from "../../lambdas/runs/types";
import { RUN_LIST_ATTRIBUTES } from "../../lambdas/store/tables";
import { DataTables } from "../../lib/dataTables";
import { functionItem } from "../helpers/records";

describe("the run indexes", () => {
  it("are built by DataTables: runs and account_runs keep the listed attributes only, gsi1 all; one index added (DynamoDB adds one per update)", () => {
    const stack = new Stack();
    new DataTables(stack, "Data", { prefix: "t" });
    const index = (name: string, partitionKey: string, sortKey: string, projection: unknown) => ({
      IndexName: name,
      KeySchema: [
        { AttributeName: partitionKey, KeyType: "HASH" },
        { AttributeName: sortKey, KeyType: "RANGE" },
      ],
      Projection: projection,
    });
    Template.fromStack(stack).hasResourceProperties("AWS::DynamoDB::GlobalTable", {
      TableName: "t-main",
      GlobalSecondaryIndexes: [
        index("gsi1", "gsi1pk", "gsi1sk", { ProjectionType: "ALL" }),
        index("runs", "runs_pk", "runs_sk", Match.objectEquals({ ProjectionType: "INCLUDE", NonKeyAttributes: [...RUN_LIST_ATTRIBUTES] })),
        index("account_runs", "acct_runs_pk", "acct_runs_sk", Match.objectEquals({ ProjectionType: "INCLUDE", NonKeyAttributes: [...RUN_LIST_ATTRIBUTES] })),
      ],
    });
    for (const heavy of ["result_json", "logs", "params_json", "params"]) {
      expect(RUN_LIST_ATTRIBUTES).not.toContain(heavy);
    }
  });

  it("a run is due by its function's timeout and the margin; one recorded before deadlines gets the longest timeout's", () => {
    const queuedAt = "2026-03-01T12:00:00.000Z";
    const run = newRun(functionItem({ timeout_seconds: 60 }), { version: 1, trigger: "http", params: {}, queuedAt });
    expect(RUN_DEADLINE_MARGIN_MS).toBe(720_000);
    expect(run.deadline_at).toBe("2026-03-01T12:13:00.000Z");
    expect(copyRun(run).deadline_at).toBe(run.deadline_at);

    const { deadline_at: _deadline, ...old } = run;
    expect(copyRun(old as RunItem).deadline_at).toBe("2026-03-01T12:27:00.000Z");
  });
});
