import { CfnOutput, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { DataTables } from "./dataTables";

export interface BrowserfnStackProps extends StackProps {
  /** Prefix of every physical name (tables, function Lambdas); default `browserfn`. */
  prefix?: string;
}

/**
 * The AWS deployment of browserfn. So far: the data tables the local service also
 * creates (API Gateway, handlers, runtime and Cognito are added by the AWS stack work).
 */
export class BrowserfnStack extends Stack {
  constructor(scope: Construct, id: string, props: BrowserfnStackProps = {}) {
    super(scope, id, props);
    const prefix = props.prefix ?? "browserfn";
    const data = new DataTables(this, "Data", { prefix });
    for (const [tableId, table] of data.tables) {
      new CfnOutput(this, `Table${tableId[0]?.toUpperCase()}${tableId.slice(1)}`, { value: table.tableName });
    }
  }
}
