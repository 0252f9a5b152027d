import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { isWaitQueueUrl } from "./waitQueueNames";

/** Tells the route that waits for a run that its end is written (absent in the recorder's deps: nobody is told). */
export type RunEndNotifier = (queueUrl: string, runId: string) => Promise<void>;

/**
 * The recorder's side of the end notices (runEndWaiter.ts): once a run's end is written, its
 * id is sent to the wait queue its execution input names. Only a queue named like a wait queue
 * of this stack is sent to (the recorder's role may send to nothing else either). Never throws:
 * a notice that is lost costs its caller the rest of its window, after which the route reads
 * the record once.
 */
export function createRunEndNotifier(options: { sqs: { send(command: SendMessageCommand): Promise<unknown> }; urlPrefix: string; log: (line: string) => void }): RunEndNotifier {
  return async (queueUrl, runId) => {
    if (!isWaitQueueUrl(options.urlPrefix, queueUrl)) {
      options.log(`run recorder: run ${runId} names a queue that is not a wait queue of this stack (${queueUrl.slice(0, 200)}): nobody is told`);
      return;
    }
    await options.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ run_id: runId }) })).catch((error: unknown) => {
      options.log(`run recorder: telling the caller of run ${runId} that it ended failed (it reads the record at its window's end): ${(error as Error).message}`);
    });
  };
}
