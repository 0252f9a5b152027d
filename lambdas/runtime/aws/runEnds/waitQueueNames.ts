/**
 * The names of the wait queues (docs/deploy.md, "Waiting for a run"): each route Lambda
 * container that waits for runs owns one SQS queue, `<prefix>-wait-<created>-<random>`, where
 * `<created>` is its creation time in seconds (base 36). A container stops using its queue once
 * it is WAIT_QUEUE_ROTATE_MS old (it makes a new one for its next wait), so a queue older than
 * WAIT_QUEUE_IDLE_MS is used by nobody, and the sweeper deletes it: no table of queues, no tag
 * read per queue.
 */

/** After this, a container's next wait makes a new queue (and deletes the old). */
export const WAIT_QUEUE_ROTATE_MS = 60 * 60 * 1000;

/** Older than this, a wait queue is nobody's (its rotation and the longest wait are past): the sweeper deletes it. */
export const WAIT_QUEUE_IDLE_MS = 2 * WAIT_QUEUE_ROTATE_MS;

/** SQS's shortest retention: a notice nobody took (its caller answered 202 already) is gone within a minute. */
export const WAIT_MESSAGE_RETENTION_SECONDS = 60;

/** SQS's longest long poll: one ReceiveMessage per 20 s of a wait, whatever the run. */
export const MAX_LONG_POLL_SECONDS = 20;

/** The tags of every wait queue (and the stack's prefix, added where it is made): who made it, and why. */
export const WAIT_QUEUE_TAGS = { "browserfn:purpose": "run-end-notices" } as const;

/** SQS takes queue names of at most 80 characters. */
const MAX_QUEUE_NAME = 80;

/** `<name prefix>-wait-`: what every wait queue's name starts with. */
export function waitQueueNamePrefix(namePrefix: string): string {
  return `${namePrefix}-wait-`;
}

/** A new wait queue's name, created at `createdMs`, with `random` (letters and digits) to tell containers apart. */
export function waitQueueName(namePrefix: string, createdMs: number, random: string): string {
  const name = `${waitQueueNamePrefix(namePrefix)}${Math.floor(createdMs / 1000).toString(36)}-${random}`;
  if (name.length > MAX_QUEUE_NAME || !/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`wait queue name '${name}' is not a valid SQS queue name`);
  return name;
}

/** When the wait queue `name` was created (ms), or null when it is not one of `namePrefix`'s wait queues. */
export function waitQueueCreatedMs(namePrefix: string, name: string): number | null {
  const prefix = waitQueueNamePrefix(namePrefix);
  if (!name.startsWith(prefix)) return null;
  const match = /^([0-9a-z]{1,10})-[0-9a-z]{4,32}$/.exec(name.slice(prefix.length));
  return match ? Number.parseInt(match[1] as string, 36) * 1000 : null;
}

/**
 * The URL prefix of the wait queues (`https://sqs.<region>.<suffix>/<account>/<prefix>-wait-`),
 * as the stack sets it, split into the queues' base URL and the name prefix; null when it is
 * not such a URL.
 */
export function parseWaitQueueUrlPrefix(urlPrefix: string): { baseUrl: string; namePrefix: string } | null {
  const match = /^(https:\/\/sqs\.[a-z0-9-]+\.[a-z0-9.-]+\/[0-9]{12}\/)([A-Za-z0-9_-]{1,40})-wait-$/.exec(urlPrefix);
  return match ? { baseUrl: match[1] as string, namePrefix: match[2] as string } : null;
}

/** Whether `queueUrl` is one of the wait queues under `urlPrefix` (a name it could have made, nothing more). */
export function isWaitQueueUrl(urlPrefix: string, queueUrl: string): boolean {
  const parsed = parseWaitQueueUrlPrefix(urlPrefix);
  if (!parsed || !queueUrl.startsWith(parsed.baseUrl)) return false;
  return waitQueueCreatedMs(parsed.namePrefix, queueUrl.slice(parsed.baseUrl.length)) !== null;
}
