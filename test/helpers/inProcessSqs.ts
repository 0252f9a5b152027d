import { randomUUID } from "node:crypto";

/** One SQS call as a client sent it: who sent it (a name the test gives each client), the command and its input. */
export interface SqsCall {
  by: string;
  command: string;
  input: Record<string, unknown>;
}

interface Message {
  id: string;
  body: string;
  receipt: string;
  visibleAt: number;
  sentAt: number;
}

interface Queue {
  name: string;
  attributes: Record<string, string>;
  tags: Record<string, string>;
  messages: Message[];
  /** Long polls waiting for a message. */
  pollers: Set<() => void>;
}

const awsError = (name: string, message: string, status = 400) => Object.assign(new Error(message), { name, $fault: "client", $metadata: { httpStatusCode: status } });

/**
 * Amazon SQS, stood in for in this process, for the calls the wait queues make (CreateQueue
 * with attributes and tags, SendMessage, ReceiveMessage with a long poll (`WaitTimeSeconds`,
 * ended early by a message or the caller's abortSignal) and `VisibilityTimeout`, DeleteMessage,
 * DeleteQueue, ListQueues with a name prefix). Messages older than the queue's
 * MessageRetentionPeriod are dropped. Every call is kept in `calls`, with who made it.
 */
export class InProcessSqs {
  readonly calls: SqsCall[] = [];
  readonly queues = new Map<string, Queue>();

  constructor(readonly baseUrl = "https://sqs.eu-west-1.amazonaws.com/123456789012/") {}

  /** A client whose calls are recorded as made `by`. */
  client(by: string): { send(command: { constructor: { name: string }; input: unknown }, options?: { abortSignal?: AbortSignal }): Promise<unknown> } {
    return { send: (command, options) => this.send(by, command, options?.abortSignal) };
  }

  /** The calls of one kind (e.g. `ReceiveMessageCommand`), in order. */
  callsOf(command: string, by?: string): SqsCall[] {
    return this.calls.filter((call) => call.command === command && (by === undefined || call.by === by));
  }

  private async send(by: string, command: { constructor: { name: string }; input: unknown }, abortSignal?: AbortSignal): Promise<unknown> {
    const input = structuredClone(command.input) as Record<string, unknown>;
    const name = command.constructor.name;
    this.calls.push({ by, command: name, input });
    switch (name) {
      case "CreateQueueCommand":
        return this.create(input);
      case "SendMessageCommand": {
        const queue = this.queueAt(input.QueueUrl);
        const message = { id: randomUUID(), body: String(input.MessageBody), receipt: randomUUID(), visibleAt: 0, sentAt: Date.now() };
        queue.messages.push(message);
        for (const wake of [...queue.pollers]) wake();
        return { MessageId: message.id };
      }
      case "ReceiveMessageCommand":
        return this.receive(input, abortSignal);
      case "DeleteMessageCommand": {
        const queue = this.queueAt(input.QueueUrl);
        queue.messages = queue.messages.filter((message) => message.receipt !== input.ReceiptHandle);
        return {};
      }
      case "DeleteQueueCommand": {
        const queue = this.queueAt(input.QueueUrl);
        this.queues.delete(String(input.QueueUrl));
        for (const wake of [...queue.pollers]) wake();
        return {};
      }
      case "ListQueuesCommand": {
        const prefix = String(input.QueueNamePrefix ?? "");
        return { QueueUrls: [...this.queues.entries()].filter(([, queue]) => queue.name.startsWith(prefix)).map(([url]) => url) };
      }
      default:
        throw new Error(`the SQS stand-in does not know ${name}`);
    }
  }

  private create(input: Record<string, unknown>): { QueueUrl: string } {
    const name = String(input.QueueName);
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(name)) throw awsError("InvalidParameterValue", `invalid queue name '${name}'`);
    const url = `${this.baseUrl}${name}`;
    const attributes = (input.Attributes ?? {}) as Record<string, string>;
    const existing = this.queues.get(url);
    if (existing) {
      // CreateQueue is idempotent for the same attributes; other attributes are a 400.
      if (JSON.stringify(existing.attributes) !== JSON.stringify(attributes)) throw awsError("QueueNameExists", `queue ${name} exists with other attributes`);
      return { QueueUrl: url };
    }
    this.queues.set(url, { name, attributes, tags: (input.tags ?? {}) as Record<string, string>, messages: [], pollers: new Set() });
    return { QueueUrl: url };
  }

  private queueAt(url: unknown): Queue {
    const queue = this.queues.get(String(url));
    if (!queue) throw awsError("AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.");
    return queue;
  }

  private async receive(input: Record<string, unknown>, abortSignal?: AbortSignal): Promise<{ Messages?: { MessageId: string; Body: string; ReceiptHandle: string }[] }> {
    const url = String(input.QueueUrl);
    const queue = this.queueAt(url);
    const deadline = Date.now() + Number(input.WaitTimeSeconds ?? 0) * 1000;
    const visibilityMs = Number(input.VisibilityTimeout ?? 30) * 1000;
    const max = Number(input.MaxNumberOfMessages ?? 1);
    for (;;) {
      if (abortSignal?.aborted) throw Object.assign(new Error("Request aborted"), { name: "AbortError" });
      if (this.queues.get(url) !== queue) throw awsError("AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.");
      const now = Date.now();
      const retentionMs = Number(queue.attributes.MessageRetentionPeriod ?? 345_600) * 1000;
      queue.messages = queue.messages.filter((message) => now - message.sentAt < retentionMs);
      const visible = queue.messages.filter((message) => message.visibleAt <= now).slice(0, max);
      if (visible.length > 0 || now >= deadline) {
        for (const message of visible) message.visibleAt = now + visibilityMs;
        return visible.length > 0 ? { Messages: visible.map((message) => ({ MessageId: message.id, Body: message.body, ReceiptHandle: message.receipt })) } : {};
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          queue.pollers.delete(done);
          abortSignal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, deadline - now);
        queue.pollers.add(done);
        abortSignal?.addEventListener("abort", done, { once: true });
      });
    }
  }
}
