import { DeleteQueueCommand, ListQueuesCommand } from "@aws-sdk/client-sqs";
import { parseWaitQueueUrlPrefix, WAIT_QUEUE_IDLE_MS, waitQueueCreatedMs, waitQueueNamePrefix } from "./waitQueueNames";

/** Deletes the wait queues nobody uses; resolves with how many it deleted. */
export type WaitQueueSweep = () => Promise<number>;

/**
 * The sweeper's part of the end notices (runEndWaiter.ts): every wait queue older than
 * WAIT_QUEUE_IDLE_MS is deleted (its container moved to a new one, or is gone). Queues under
 * the prefix whose name is not a wait queue's are left alone. A delete that fails is logged and
 * tried again at the next sweep.
 */
export function createWaitQueueSweep(options: {
  sqs: { send(command: ListQueuesCommand | DeleteQueueCommand): Promise<unknown> };
  urlPrefix: string;
  now: () => number;
  log: (line: string) => void;
}): WaitQueueSweep {
  const parsed = parseWaitQueueUrlPrefix(options.urlPrefix);
  if (!parsed) throw new Error(`'${options.urlPrefix}' is not a wait queue URL prefix`);
  return async () => {
    const oldest = options.now() - WAIT_QUEUE_IDLE_MS;
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = (await options.sqs.send(
        new ListQueuesCommand({ QueueNamePrefix: waitQueueNamePrefix(parsed.namePrefix), MaxResults: 1000, ...(token ? { NextToken: token } : {}) }),
      )) as { QueueUrls?: string[]; NextToken?: string };
      for (const url of page.QueueUrls ?? []) {
        if (!url.startsWith(parsed.baseUrl)) continue;
        const created = waitQueueCreatedMs(parsed.namePrefix, url.slice(parsed.baseUrl.length));
        if (created === null || created > oldest) continue;
        try {
          await options.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
          deleted++;
        } catch (error) {
          options.log(`run sweeper: deleting the idle wait queue ${url} failed: ${(error as Error).message}`);
        }
      }
      token = page.NextToken;
    } while (token);
    return deleted;
  };
}
