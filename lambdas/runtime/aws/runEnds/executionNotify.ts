/** The longest execution input EventBridge carries in a status-change event (larger ones come as null). */
const MAX_EVENT_INPUT_CHARS = 256 * 1024;

/**
 * The wait queue an execution's input names (`notify`), read from the input's JSON text as a
 * status-change event carries it, for the run `runId`; null when it names none, or when the text
 * is not an input the run starter wrote. The run starter writes `run_id` then `notify` first
 * (runExecutions.ts), so only that head is read: the rest (the run's parameters, up to 252 KB)
 * is never parsed here. The URL is checked again where the notice is sent (notifyRunEnd.ts).
 */
export function notifyOfExecutionInput(input: unknown, runId: string): string | null {
  if (typeof input !== "string" || input.length > MAX_EVENT_INPUT_CHARS) return null;
  const head = /^\{"run_id":("[A-Za-z0-9_-]{1,100}"),"notify":(null|"[A-Za-z0-9:/._-]{1,1024}")[,}]/.exec(input);
  if (!head || JSON.parse(head[1] as string) !== runId) return null;
  return JSON.parse(head[2] as string) as string | null;
}
