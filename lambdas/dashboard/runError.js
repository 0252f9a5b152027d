// A failed run's error: its code, message and stack, with the frames in the user's own source
// (`automation.ts:12:5`, or the file a CLI bundle came from) marked, so the line that threw stands
// out from the runtime's frames.
import { h } from "./dom.js";

/**
 * A position in the user's own source: `automation.ts:12:5` wherever it is, or a relative file
 * name a CLI bundle's source map gives (`src/scrape.ts:12:5`). Absolute paths and URLs are the
 * runtime's (`/var/task/runner.js:120:3`), as are `browserfn-runtime` and Node's `node:internal/…`.
 */
const USER_FRAME = /(?:automation\.[cm]?[jt]s|\/automation\/index\.js):\d+(?::\d+)?|(?<![\w:/.-])(?:[\w.-]+\/)*[\w.-]+\.[cm]?[jt]sx?:\d+(?::\d+)?/g;

/** The error of `GET /runs/{id}`: `{code, message, stack?}`. */
export function runErrorView(error) {
  return h(
    "div",
    { class: "error", id: "run-error", role: "alert" },
    h("strong", { class: "error-code" }, String(error.code ?? "error")),
    h("p", { class: "error-message" }, String(error.message ?? "")),
    typeof error.stack === "string" && error.stack !== ""
      ? h("pre", { class: "stack", id: "run-stack" }, stackLines(error.stack))
      : h("p", { class: "muted small", id: "run-stack" }, "No stack trace was kept for this error."),
  );
}

/** One span per line of the stack; a line naming the user's source is marked, and so is the position in it. */
function stackLines(stack) {
  return stack.split("\n").map((line, i) => {
    const parts = [];
    let at = 0;
    for (const match of line.matchAll(USER_FRAME)) {
      parts.push(line.slice(at, match.index), h("mark", { class: "user-frame" }, match[0]));
      at = match.index + match[0].length;
    }
    parts.push(line.slice(at));
    return h("span", { class: at > 0 ? "frame frame-user" : "frame" }, i > 0 ? "\n" : "", parts.filter((part) => part !== ""));
  });
}
