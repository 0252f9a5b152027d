import { RemovalPolicy } from "aws-cdk-lib";
import { AttributeType, Billing, ProjectionType, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { Construct } from "constructs";
import { TABLES, type IndexProjection, type KeyAttribute, type TableDefinition, tableName } from "../lambdas/store/tables";

const ATTRIBUTE_TYPES: Record<KeyAttribute["type"], AttributeType> = {
  S: AttributeType.STRING,
  N: AttributeType.NUMBER,
  B: AttributeType.BINARY,
};

/** TableV2's projection settings of an index (ALL when the definition names none). */
function projection(definition: IndexProjection = { type: "ALL" }) {
  if (definition.type === "INCLUDE") return { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: definition.nonKeyAttributes };
  return { projectionType: definition.type === "KEYS_ONLY" ? ProjectionType.KEYS_ONLY : ProjectionType.ALL };
}

/** The DynamoDB tables, built from the same definitions the local service uses. */
export class DataTables extends Construct {
  readonly tables: Map<string, TableV2>;

  constructor(scope: Construct, id: string, props: { prefix: string; removalPolicy?: RemovalPolicy }) {
    super(scope, id);
    this.tables = new Map(TABLES.map((definition) => [definition.id, this.table(definition, props)]));
  }

  private table(definition: TableDefinition, props: { prefix: string; removalPolicy?: RemovalPolicy }): TableV2 {
    const key = (attribute: KeyAttribute) => ({ name: attribute.name, type: ATTRIBUTE_TYPES[attribute.type] });
    return new TableV2(this, definition.id, {
      tableName: tableName(props.prefix, definition),
      partitionKey: key(definition.partitionKey),
      sortKey: key(definition.sortKey),
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: definition.timeToLiveAttribute,
      globalSecondaryIndexes: definition.globalSecondaryIndexes.map((index) => ({
        indexName: index.indexName,
        partitionKey: key(index.partitionKey),
        sortKey: key(index.sortKey),
        ...projection(index.projection),
      })),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
  }
}
