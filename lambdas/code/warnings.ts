// What a deploy says of code that deploys but probably does not do what its author meant; no
// compiler here, so that the stores and the service's start-up can name them without loading it.

/** Something in a module that deploys, but probably does not do what its author meant. */
export interface Warning {
  code: "unawaited_return_in_session" | "ignored_launch_option";
  message: string;
  /** 1-based line of the source the warning is about. */
  line: number;
}

/** Warnings a deploy answers and stores at most; one more says how many were left out. */
export const MAX_WARNINGS = 20;
