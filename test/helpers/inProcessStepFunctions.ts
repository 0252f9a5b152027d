import { InvokeCommand } from "@aws-sdk/client-lambda";

/** Step Functions' limit on a state's input and output, and on an execution's input. */
export const MAX_STATE_BYTES = 256 * 1024;

/** The Lambda API as the interpreter calls it (InProcessLambda). */
interface LambdaApi {
  send(command: InvokeCommand): Promise<unknown>;
}

/** What EventBridge hears when an execution ends other than SUCCEEDED ("Step Functions Execution Status Change"). */
export interface ExecutionStatusEvent {
  source: "aws.states";
  "detail-type": "Step Functions Execution Status Change";
  detail: {
    executionArn: string;
    stateMachineArn: string;
    name: string;
    status: string;
    error: string | null;
    cause: string | null;
    /** The execution's input as the JSON text it was started with (EventBridge leaves it out, `included: false`, past 248 KiB). */
    input: string | null;
    inputDetails: { included: boolean };
  };
}

/** The event's `input` and `inputDetails`, as EventBridge sends them. */
function inputOf(execution: Execution): { input: string | null; inputDetails: { included: boolean } } {
  const text = JSON.stringify(execution.input);
  return Buffer.byteLength(text) > 248 * 1024 ? { input: null, inputDetails: { included: false } } : { input: text, inputDetails: { included: true } };
}

export interface Execution {
  name: string;
  input: unknown;
  status: "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";
  startDate: Date;
  output?: unknown;
  error?: string;
  cause?: string;
  /** The states entered, in order (a retried state appears once per attempt). */
  trail: string[];
  /** Each state's input and output, as the execution's history in Step Functions keeps them. */
  history: unknown[];
}

interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  BackoffRate?: number;
  MaxAttempts?: number;
  MaxDelaySeconds?: number;
}
interface Catcher {
  ErrorEquals: string[];
  ResultPath?: string | null;
  Next: string;
}
interface Choice {
  Variable: string;
  StringMatches?: string;
  NumericGreaterThanEquals?: number;
  IsString?: boolean;
  BooleanEquals?: boolean;
  Next: string;
}
interface State {
  Type: string;
  Choices?: Choice[];
  Default?: string;
  Seconds?: number;
  TimestampPath?: string;
  Resource?: string;
  Parameters?: unknown;
  ResultSelector?: unknown;
  ResultPath?: string | null;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  Retry?: Retrier[];
  Catch?: Catcher[];
  Next?: string;
  End?: boolean;
  Error?: string;
  Cause?: string;
}

class StatesError extends Error {
  constructor(
    readonly error: string,
    readonly details: string,
  ) {
    super(`${error}: ${details}`);
  }
}

/** Errors that no catcher or retrier may catch with States.ALL. */
const TERMINAL = new Set(["States.DataLimitExceeded", "States.Runtime"]);

/**
 * AWS Step Functions, faked in this process for the states the run workflow uses (Task with
 * `lambda:invoke` and `sqs:sendMessage`, Choice with `StringMatches`, `NumericGreaterThanEquals`
 * `IsString` and `BooleanEquals`, Wait (`Seconds`, `TimestampPath`), Pass, Fail, Succeed, and `States.MathAdd`;
 * StartExecution, StopExecution and DescribeExecution): it executes the real
 * definition (runWorkflow.ts, its placeholders filled in) with Parameters, ResultSelector,
 * ResultPath, TimeoutSeconds(Path), Retry and Catch as the Amazon States Language defines
 * them, the `$`/`$$` paths the workflow reads, and the 256 KB state limit
 * (States.DataLimitExceeded, which no catcher takes). Retry intervals and Wait states (only they) are scaled
 * by `timeScale` so tests do not wait them out; timeouts are kept as written. An execution that does not succeed is reported to
 * `onStatusChange`, as EventBridge would.
 */
export class InProcessStepFunctions {
  readonly executions = new Map<string, Execution>();
  /** Messages sent to SQS queues by `sqs:sendMessage` tasks. */
  readonly messages: { queueUrl: string; body: unknown }[] = [];
  /** StopExecution calls, as sent. */
  readonly stops: { executionArn: string; error?: string; cause?: string }[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly states: Record<string, State>;
  private readonly startAt: string;
  private readonly executionTimeout: number;

  constructor(
    definition: string,
    private readonly lambda: LambdaApi,
    private readonly options: { stateMachineArn: string; timeScale?: number; onStatusChange?: (event: ExecutionStatusEvent) => Promise<void> },
  ) {
    const parsed = JSON.parse(definition) as { StartAt: string; States: Record<string, State>; TimeoutSeconds?: number };
    this.states = parsed.States;
    this.startAt = parsed.StartAt;
    this.executionTimeout = parsed.TimeoutSeconds ?? 365 * 24 * 3600;
  }

  async send(command: { constructor: { name: string }; input: unknown }): Promise<unknown> {
    if (command.constructor.name === "StopExecutionCommand") return this.stop(command.input as { executionArn: string; error?: string; cause?: string });
    if (command.constructor.name === "DescribeExecutionCommand") return this.describe(command.input as { executionArn: string });
    if (command.constructor.name !== "StartExecutionCommand") throw new Error(`the fake does not know ${command.constructor.name}`);
    const { stateMachineArn, name, input } = command.input as { stateMachineArn: string; name: string; input: string };
    if (stateMachineArn !== this.options.stateMachineArn) throw Object.assign(new Error("State Machine Does Not Exist"), { name: "StateMachineDoesNotExist" });
    if (Buffer.byteLength(input) > MAX_STATE_BYTES) throw Object.assign(new Error("input too large"), { name: "InvalidExecutionInput" });
    const existing = this.executions.get(name);
    if (existing) {
      // Standard workflows: the same name with the same input is the same execution while it
      // runs; once it closed, or with another input, the name is taken (a 400).
      if (existing.status === "RUNNING" && JSON.stringify(existing.input) === input) return { executionArn: this.arn(name), startDate: existing.startDate };
      throw Object.assign(new Error(`Execution Already Exists: '${this.arn(name)}'`), { name: "ExecutionAlreadyExists", $fault: "client", $metadata: { httpStatusCode: 400 } });
    }
    const execution: Execution = { name, input: JSON.parse(input) as unknown, status: "RUNNING", startDate: new Date(), trail: [], history: [] };
    this.executions.set(name, execution);
    const run = this.execute(execution);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
    return { executionArn: this.arn(name), startDate: execution.startDate };
  }

  /**
   * StopExecution: a running execution is ABORTED at once (a task in progress goes on, as a
   * Lambda invocation does, but its result is dropped and no further state runs) and its
   * status-change event is sent; a closed one is left as it is; an unknown one is
   * ExecutionDoesNotExist (400).
   */
  private async stop(input: { executionArn: string; error?: string; cause?: string }): Promise<unknown> {
    this.stops.push({ executionArn: input.executionArn, ...(input.error === undefined ? {} : { error: input.error }), ...(input.cause === undefined ? {} : { cause: input.cause }) });
    const name = input.executionArn.split(":").at(-1) ?? "";
    const execution = this.executions.get(name);
    if (!execution || input.executionArn !== this.arn(name)) {
      throw Object.assign(new Error(`Execution Does Not Exist: '${input.executionArn}'`), { name: "ExecutionDoesNotExist", $fault: "client", $metadata: { httpStatusCode: 400 } });
    }
    if (execution.status !== "RUNNING") return { stopDate: new Date() };
    execution.status = "ABORTED";
    execution.error = input.error;
    execution.cause = input.cause;
    const event = this.options.onStatusChange?.({
      source: "aws.states",
      "detail-type": "Step Functions Execution Status Change",
      detail: { executionArn: this.arn(name), stateMachineArn: this.options.stateMachineArn, name, status: "ABORTED", error: input.error ?? null, cause: input.cause ?? null, ...inputOf(execution) },
    });
    if (event) {
      this.running.add(event);
      void event.finally(() => this.running.delete(event));
    }
    return { stopDate: new Date() };
  }

  /** DescribeExecution: the execution's name, status and input (as the JSON text it was started with); unknown: ExecutionDoesNotExist (400). */
  private describe(input: { executionArn: string }): unknown {
    const name = input.executionArn.split(":").at(-1) ?? "";
    const execution = this.executions.get(name);
    if (!execution || input.executionArn !== this.arn(name)) {
      throw Object.assign(new Error(`Execution Does Not Exist: '${input.executionArn}'`), { name: "ExecutionDoesNotExist", $fault: "client", $metadata: { httpStatusCode: 400 } });
    }
    return { executionArn: input.executionArn, stateMachineArn: this.options.stateMachineArn, name, status: execution.status, startDate: execution.startDate, input: JSON.stringify(execution.input) };
  }

  /** Waits for every execution started so far, and their status-change events. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private arn(name: string): string {
    return `${this.options.stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
  }

  private async execute(execution: Execution): Promise<void> {
    const started = new Date();
    const context = { Execution: { Id: this.arn(execution.name), Input: execution.input, Name: execution.name, StartTime: started.toISOString() }, State: { EnteredTime: "", Name: "" } };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StatesError("States.Timeout", "The execution timed out")), this.executionTimeout * 1000);
    });
    try {
      execution.output = await Promise.race([this.walk(execution, context, execution.input), timeout]);
      if (execution.status === "RUNNING") execution.status = "SUCCEEDED";
    } catch (error) {
      if (execution.status === "ABORTED") return; // stopped: its event was sent by StopExecution
      const failure = error instanceof StatesError ? error : new StatesError("States.Runtime", String((error as Error).stack ?? error));
      execution.status = failure.error === "States.Timeout" ? "TIMED_OUT" : "FAILED";
      execution.error = failure.error;
      execution.cause = failure.details;
      await this.options.onStatusChange?.({
        source: "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        detail: { executionArn: this.arn(execution.name), stateMachineArn: this.options.stateMachineArn, name: execution.name, status: execution.status, error: failure.error, cause: failure.details, ...inputOf(execution) },
      });
    } finally {
      clearTimeout(timer);
    }
  }

  private async walk(execution: Execution, context: { State: { EnteredTime: string; Name: string } }, input: unknown): Promise<unknown> {
    let name: string | undefined = this.startAt;
    let data = input;
    while (name !== undefined) {
      if (execution.status === "ABORTED") return data; // stopped: no further state runs
      const state: State | undefined = this.states[name];
      if (!state) throw new StatesError("States.Runtime", `no state ${name}`);
      context.State = { EnteredTime: new Date().toISOString(), Name: name };
      execution.trail.push(name);
      execution.history.push(data);
      checkSize(data, "input");
      if (state.Type === "Fail") throw new StatesError(state.Error ?? "States.Fail", state.Cause ?? "");
      if (state.Type === "Succeed") return data;
      if (state.Type === "Choice") {
        const chosen: Choice | undefined = state.Choices?.find((choice) => chooses(choice, data, context));
        name = chosen?.Next ?? state.Default;
        if (name === undefined) throw new StatesError("States.NoChoiceMatched", "");
        continue;
      }
      if (state.Type === "Wait") {
        // `Seconds` is scaled (timeScale); a `TimestampPath` waits until that very time, as a
        // dispatcher reading the clock at the end of the wait expects (a timestamp passed already: no wait).
        const ms = state.TimestampPath
          ? Date.parse(String(readPath(state.TimestampPath, data, context))) - Date.now()
          : (state.Seconds ?? 0) * 1000 * (this.options.timeScale ?? 1);
        if (Number.isNaN(ms)) throw new StatesError("States.Runtime", `The TimestampPath '${state.TimestampPath}' is not a timestamp`);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
        name = state.End ? undefined : state.Next;
        continue;
      }
      let next: { data: unknown; next: string | undefined };
      try {
        next = await this.runState(name, state, data, context, execution);
      } catch (error) {
        if (!(error instanceof StatesError)) throw error;
        const catcher: Catcher | undefined = TERMINAL.has(error.error) ? undefined : state.Catch?.find((c) => matches(c.ErrorEquals, error.error));
        if (!catcher) throw error;
        data = applyResultPath(data, { Error: error.error, Cause: error.details }, catcher.ResultPath === undefined ? "$" : catcher.ResultPath);
        name = catcher.Next;
        continue;
      }
      data = next.data;
      execution.history.push(data);
      name = next.next;
    }
    return data;
  }

  private async runState(name: string, state: State, input: unknown, context: object, execution: Execution): Promise<{ data: unknown; next: string | undefined }> {
    const next = state.End ? undefined : state.Next;
    const effective = state.Parameters === undefined ? input : resolveTemplate(state.Parameters, input, context);
    if (state.Type === "Pass") return { data: applyResultPath(input, effective, state.ResultPath), next };
    if (state.Type !== "Task") throw new StatesError("States.Runtime", `the fake does not run ${state.Type} states`);
    checkSize(effective, "input");
    for (let attempt = 0; ; attempt++) {
      try {
        const timeoutSeconds = state.TimeoutSecondsPath ? Number(readPath(state.TimeoutSecondsPath, input, context)) : state.TimeoutSeconds;
        let result = await this.withTimeout(this.task(state.Resource ?? "", effective), timeoutSeconds);
        checkSize(result, "output");
        if (state.ResultSelector !== undefined) result = resolveTemplate(state.ResultSelector, result, context);
        const data = applyResultPath(input, result, state.ResultPath);
        checkSize(data, "output");
        return { data, next };
      } catch (error) {
        if (!(error instanceof StatesError)) throw error;
        const retrier: Retrier | undefined = TERMINAL.has(error.error) ? undefined : state.Retry?.find((r) => matches(r.ErrorEquals, error.error));
        if (!retrier || attempt >= (retrier.MaxAttempts ?? 3)) throw error;
        const delay = Math.min((retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** attempt, retrier.MaxDelaySeconds ?? Infinity);
        await new Promise((resolve) => setTimeout(resolve, delay * 1000 * (this.options.timeScale ?? 1)));
        execution.trail.push(`${name} (retry)`);
      }
    }
  }

  private async withTimeout<T>(work: Promise<T>, seconds: number | undefined): Promise<T> {
    if (seconds === undefined) return work;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StatesError("States.Timeout", "")), seconds * 1000);
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async task(resource: string, parameters: unknown): Promise<unknown> {
    const params = parameters as Record<string, unknown>;
    if (resource === "arn:aws:states:::sqs:sendMessage") {
      this.messages.push({ queueUrl: String(params.QueueUrl), body: params.MessageBody });
      return { MessageId: `m-${this.messages.length}` };
    }
    if (resource !== "arn:aws:states:::lambda:invoke") throw new StatesError("States.Runtime", `the fake does not call ${resource}`);
    let answer: { StatusCode?: number; FunctionError?: string; Payload?: Uint8Array; ExecutedVersion?: string };
    try {
      answer = (await this.lambda.send(new InvokeCommand({ FunctionName: String(params.FunctionName), Payload: JSON.stringify(params.Payload ?? null) }))) as typeof answer;
    } catch (error) {
      // The service integration names the Lambda API's exceptions `Lambda.<name>`.
      throw new StatesError(`Lambda.${(error as Error).name}`, (error as Error).message);
    }
    const text = new TextDecoder().decode(answer.Payload ?? new Uint8Array());
    if (answer.FunctionError) {
      // A function error is raised under the errorType the function's answer names, its payload the cause.
      let errorType: string | undefined;
      try {
        const parsed = JSON.parse(text) as { errorType?: unknown };
        if (typeof parsed.errorType === "string") errorType = parsed.errorType;
      } catch {
        // not JSON: no error type
      }
      if (errorType !== undefined) throw new StatesError(errorType, text);
      // No error type (a timeout or an out-of-memory kill, as older runtimes answer them):
      // Lambda.Unknown, with Step Functions' sentence before the payload.
      throw new StatesError("Lambda.Unknown", `The cause could not be determined because Lambda did not return an error type. Returned payload: ${text}`);
    }
    if (Buffer.byteLength(text) > MAX_STATE_BYTES) throw new StatesError("States.DataLimitExceeded", "The state/task returned a result with a size exceeding the maximum number of bytes service limit.");
    return { ExecutedVersion: answer.ExecutedVersion ?? "$LATEST", Payload: text === "" ? null : (JSON.parse(text) as unknown), StatusCode: answer.StatusCode ?? 200 };
  }
}

/**
 * A Choice rule: `StringMatches` (with `*` wildcards), `NumericGreaterThanEquals`, `IsString` or `BooleanEquals`
 * on a path. A path that is not in the input fails the execution (States.Runtime), as in Step Functions.
 */
function chooses(choice: Choice, input: unknown, context: object): boolean {
  const value = readPath(choice.Variable, input, context);
  if (choice.IsString !== undefined) return (typeof value === "string") === choice.IsString;
  if (choice.BooleanEquals !== undefined) return value === choice.BooleanEquals;
  if (choice.StringMatches !== undefined) {
    const pattern = new RegExp(`^${choice.StringMatches.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`, "s");
    return typeof value === "string" && pattern.test(value);
  }
  if (choice.NumericGreaterThanEquals !== undefined) return typeof value === "number" && value >= choice.NumericGreaterThanEquals;
  throw new StatesError("States.Runtime", `the fake does not know this choice rule: ${JSON.stringify(choice)}`);
}

function matches(names: string[], error: string): boolean {
  return names.includes(error) || names.includes("States.ALL") || (names.includes("States.TaskFailed") && !error.startsWith("States."));
}

function checkSize(value: unknown, what: string): void {
  if (Buffer.byteLength(JSON.stringify(value ?? null)) > MAX_STATE_BYTES) {
    throw new StatesError("States.DataLimitExceeded", `The state ${what} has a size exceeding the maximum number of bytes service limit.`);
  }
}

/** `$`, `$.a.b` and `$$.a.b` (the context object). */
function readPath(pathText: string, input: unknown, context: object): unknown {
  const [root, ...keys] = pathText.startsWith("$$") ? ["$$", ...pathText.slice(3).split(".").filter(Boolean)] : ["$", ...pathText.slice(2).split(".").filter(Boolean)];
  let value: unknown = root === "$$" ? context : input;
  for (const key of keys) {
    if (typeof value !== "object" || value === null || !(key in value)) throw new StatesError("States.Runtime", `The JSONPath '${pathText}' could not be found in the input`);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function resolveTemplate(template: unknown, input: unknown, context: object): unknown {
  if (typeof template !== "object" || template === null || Array.isArray(template)) return template;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) {
    if (key.endsWith(".$")) out[key.slice(0, -2)] = resolveValue(String(value), input, context);
    else out[key] = resolveTemplate(value, input, context);
  }
  return out;
}

/** A path, or the intrinsic function the workflow uses (`States.MathAdd(path, n)`). */
function resolveValue(expression: string, input: unknown, context: object): unknown {
  const add = /^States\.MathAdd\((\$[^,]*),\s*(-?\d+)\)$/.exec(expression);
  if (add) return Number(readPath(add[1] ?? "$", input, context)) + Number(add[2]);
  if (expression.startsWith("States.")) throw new StatesError("States.Runtime", `the fake does not know ${expression}`);
  return readPath(expression, input, context);
}

function applyResultPath(input: unknown, result: unknown, resultPath: string | null | undefined): unknown {
  if (resultPath === null) return input;
  if (resultPath === undefined || resultPath === "$") return result;
  const keys = resultPath.slice(2).split(".");
  const copy = structuredClone(input) as Record<string, unknown>;
  let target = copy;
  for (const key of keys.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
  target[keys.at(-1) ?? ""] = result;
  return copy;
}
