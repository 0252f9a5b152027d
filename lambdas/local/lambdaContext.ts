import type { Context } from "aws-lambda";

/**
 * How long a local handler may take: what an API Lambda gets (30 s), or, for a sync window
 * longer than API Gateway allows (locally up to 900 s), the window and a margin to answer in:
 * an invocation that waits its whole window must not be cut off first.
 */
export function localHandlerTimeoutMs(syncWaitSeconds: number): number {
  return Math.max(30_000, syncWaitSeconds * 1000 + 5_000);
}

/** The Lambda context a handler receives, as far as a local call can fill it. */
export function lambdaContext(functionName: string, requestId: string, timeoutMs = 30_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: requestId,
    logGroupName: `/local/${functionName}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
