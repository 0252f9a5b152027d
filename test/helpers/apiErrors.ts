import { ApiError } from "../../lambdas/http/errors";

/** Runs `work`, which must throw an ApiError, and returns it; `accepted` is the failure when it does not throw. */
export function thrownApiError(work: () => unknown, accepted: string): ApiError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error(accepted);
}
