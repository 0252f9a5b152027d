import { z } from "zod";

/**
 * The body of `POST /functions/{ref}`, whatever the function: an object of its parameters by
 * name. Which names and types a function takes is its own (its `variables`); they are checked
 * before anything runs (400 `invalid_parameters`).
 */
export const InvokeParameters = z
  .record(z.string(), z.unknown())
  .describe("The function's parameters by name (see the record's variables); no body when it has none")
  .meta({ id: "InvokeParameters" });

/** The body of a successful invocation: whatever the automation returned. */
export const InvocationResult = z.unknown().describe("The automation's return value, as JSON (any JSON value)").meta({ id: "InvocationResult" });

/**
 * The query of `GET /functions/{ref}`: every query parameter is a function parameter, its text
 * coerced to the declared type (numbers in decimal, booleans true/false, arrays and objects as JSON).
 */
export const InvokeQuery = z
  .record(z.string(), z.string())
  .describe("The function's parameters, each as its own query parameter (?url=…&max_items=10)")
  .meta({ id: "InvokeQuery" });
