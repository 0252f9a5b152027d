/** Helpers of the validateParams tests (JSON bodies and query values). */
import type { ParameterInfo } from "../../lambdas/code/extractParameters";
import { ApiError } from "../../lambdas/http/errors";
import { validateParams, type ParameterProblem } from "../../lambdas/invoke/validateParams";
import { thrownApiError } from "./apiErrors";

export function param(name: string, type: string, required = true): ParameterInfo {
  return { name, type, required };
}

/** Runs validateParams expecting an invalid_parameters rejection; returns the error. */
export function rejection(variables: ParameterInfo[], input: unknown, source: "json" | "query" = "json"): ApiError {
  const apiError = thrownApiError(() => validateParams(variables, input, source), "expected validateParams to throw");
  expect(apiError.code).toBe("invalid_parameters");
  expect(apiError.status).toBe(400);
  return apiError;
}

export function problems(variables: ParameterInfo[], input: unknown, source: "json" | "query" = "json"): ParameterProblem[] {
  return rejection(variables, input, source).details.parameters as ParameterProblem[];
}

/** The value a single query parameter of `type` is coerced to. */
export function fromQuery(type: string, raw: string): unknown {
  return validateParams([param("x", type)], { x: raw }, "query").x;
}

/** The problem a single query parameter of `type` is rejected with. */
export function queryProblem(type: string, raw: string): ParameterProblem | undefined {
  return problems([param("x", type)], { x: raw }, "query")[0];
}

export function acceptsJson(type: string, value: unknown): boolean {
  try {
    validateParams([param("x", type)], { x: value }, "json");
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "invalid_parameters") return false;
    throw error;
  }
}
