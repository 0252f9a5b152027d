import { type GetAccountSettingsCommand, ServiceException } from "@aws-sdk/client-lambda";
import { ApiError } from "../../lambdas/http/errors";
import {
  ACCOUNT_SETTINGS_CACHE_MS,
  createAccountQuotaCheck,
  RESTRICTED_MAX_MEMORY_MB,
} from "../../lambdas/runtime/aws/accountQuotas";
import { FakeClock } from "../helpers/fakeClock";

const START = "2026-11-22T12:00:00.000Z";
const at = (ms: number) => new Date(Date.parse(START) + ms).toISOString();

/** Answers GetAccountSettings with the next of `answers` (an Error is thrown); records every command. */
class FakeLambda {
  readonly sent: GetAccountSettingsCommand[] = [];
  constructor(private readonly answers: (unknown | Error)[]) {}

  async send(command: GetAccountSettingsCommand): Promise<unknown> {
    this.sent.push(command);
    const answer = this.answers.length > 1 ? this.answers.shift() : this.answers[0];
    if (answer instanceof Error) throw answer;
    return answer;
  }

  calls(): [string, unknown][] {
    return this.sent.map((command) => [command.constructor.name, command.input]);
  }
}

const settings = (concurrency: number) => ({
  AccountLimit: { TotalCodeSize: 80530636800, CodeSizeUnzipped: 262144000, CodeSizeZipped: 52428800, ConcurrentExecutions: concurrency, UnreservedConcurrentExecutions: concurrency },
  AccountUsage: { TotalCodeSize: 0, FunctionCount: 0 },
});

function check(lambda: FakeLambda, maxMemoryMb: number | null = null) {
  const clock = new FakeClock(START);
  const lines: string[] = [];
  const run = createAccountQuotaCheck({ client: lambda, maxMemoryMb, clock, log: (line) => lines.push(line) });
  return { clock, lines, check: (memory_mb: number) => run({ memory_mb, timeout_seconds: 60 }) };
}

async function refusal(work: Promise<void>): Promise<ApiError> {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("the pre-flight check of a function's memory against the account's Lambda quotas", () => {
  it("refuses memory above 3008 MB on an account with the reduced quotas of a new account (400, as for a plan's cap)", async () => {
    const lambda = new FakeLambda([settings(10)]);
    const { check: run } = check(lambda);
    await expect(run(RESTRICTED_MAX_MEMORY_MB)).resolves.toBeUndefined();
    const error = await refusal(run(4096));
    expect(error).toMatchObject({ status: 400, code: "invalid_request", details: { field: "memory_mb", limit: 3008 } });
    // The ceiling is inferred (Lambda reports none): the message says so, and how the operator replaces it.
    expect(error.message).toBe(
      "memory_mb 4096 exceeds the 3008 MB this service's AWS account can give a function (inferred from the account's quotas: " +
        "Lambda reports no memory ceiling, but its concurrency quota is 10, under 1000, and AWS gives new accounts reduced quotas, which cap memory at 3008 MB; " +
        "an operator who knows the account's real ceiling sets it with the stack setting functionMaxMemoryMb (cdk deploy -c functionMaxMemoryMb=<MB>), which replaces this inference); " +
        "choose 3008 or less, or ask the operator to have AWS raise the account's Lambda quotas (Service Quotas or AWS Support)",
    );
    expect(lambda.calls()).toEqual([["GetAccountSettingsCommand", {}]]);
  });

  it("allows Lambda's largest memory on an account with the standard quotas", async () => {
    const lambda = new FakeLambda([settings(1000)]);
    await expect(check(lambda).check(10_240)).resolves.toBeUndefined();
  });

  it("asks Lambda once per cache window, however many checks, also while the first answer is on its way", async () => {
    const lambda = new FakeLambda([settings(50)]);
    const { clock, check: run } = check(lambda);
    await Promise.all([run(1024), run(2048), refusal(run(4096))]);
    await run(1024);
    await clock.advanceTo(at(ACCOUNT_SETTINGS_CACHE_MS - 1));
    await refusal(run(3009));
    expect(lambda.sent).toHaveLength(1);
    await clock.advanceTo(at(ACCOUNT_SETTINGS_CACHE_MS));
    await refusal(run(3009));
    expect(lambda.calls()).toEqual([
      ["GetAccountSettingsCommand", {}],
      ["GetAccountSettingsCommand", {}],
    ]);
  });

  it("lets a raised quota through once the cached settings expire", async () => {
    const lambda = new FakeLambda([settings(50), settings(1000)]);
    const { clock, check: run } = check(lambda);
    await refusal(run(4096));
    await clock.advanceTo(at(ACCOUNT_SETTINGS_CACHE_MS));
    await expect(run(4096)).resolves.toBeUndefined();
  });

  it("refuses nothing when GetAccountSettings fails: logs it and asks again a minute later, not before", async () => {
    const lambda = new FakeLambda([new ServiceException({ $metadata: {}, message: "down" }), settings(10)]);
    const { clock, lines, check: run } = check(lambda);
    await expect(run(10_240)).resolves.toBeUndefined();
    expect(lines).toEqual([expect.stringMatching(/^GetAccountSettings failed; function memory goes unchecked for now: ServiceException: down/)]);
    await clock.advanceTo(at(59_999));
    await expect(run(10_240)).resolves.toBeUndefined();
    expect(lambda.sent).toHaveLength(1);
    await clock.advanceTo(at(60_000));
    await refusal(run(10_240));
    expect(lambda.sent).toHaveLength(2);
  });

  it("does not hold a request longer than waitMs for a slow answer, and keeps the answer when it comes", async () => {
    let answer!: (value: unknown) => void;
    const sent: GetAccountSettingsCommand[] = [];
    const client = {
      send: (command: GetAccountSettingsCommand) => {
        sent.push(command);
        return new Promise((resolve) => (answer = resolve));
      },
    };
    const lines: string[] = [];
    const run = createAccountQuotaCheck({ client, maxMemoryMb: null, clock: new FakeClock(START), log: (line) => lines.push(line), waitMs: 20 });
    await expect(run({ memory_mb: 10_240, timeout_seconds: 60 })).resolves.toBeUndefined();
    expect(lines).toEqual(["GetAccountSettings did not answer within 20 ms; this request goes unchecked"]);
    answer(settings(10));
    await refusal(run({ memory_mb: 10_240, timeout_seconds: 60 }));
    expect(sent).toHaveLength(1);
  });

  it("uses the operator's ceiling when set, without asking Lambda", async () => {
    const lambda = new FakeLambda([settings(1000)]);
    const { check: run } = check(lambda, 2048);
    await expect(run(2048)).resolves.toBeUndefined();
    const error = await refusal(run(2049));
    expect(error).toMatchObject({ code: "invalid_request", details: { field: "memory_mb", limit: 2048 } });
    expect(error.message).toMatch(/^memory_mb 2049 exceeds the 2048 MB this service's AWS account can give a function \(as its operator has set it\)/);
    expect(lambda.sent).toEqual([]);
  });
});
