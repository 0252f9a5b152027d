/**
 * The rollout Lambdas' environment variables (the same names as AWS_ENV's, read here without
 * awsConfig's imports: the rollout bundles stay small).
 */
export const ROLLOUT_ENV = {
  /** The table's full name. */
  table: "BROWSERFN_TABLE_NAME",
  functionPrefix: "BROWSERFN_FUNCTION_PREFIX",
  executionRoleArn: "BROWSERFN_EXECUTION_ROLE_ARN",
  /** Comma-separated layer version ARNs: the chromium layer, then the runtime layer. */
  layerArns: "BROWSERFN_LAYER_ARNS",
  functionLogGroup: "BROWSERFN_FUNCTION_LOG_GROUP",
  /** The trigger's: the rollout job's function name. */
  rolloutFunction: "BROWSERFN_RUNNER_ROLLOUT_FUNCTION",
} as const;
