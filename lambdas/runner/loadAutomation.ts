import * as runtime from "../../layers/runtime/index";
import { playwrightModule } from "../../layers/runtime/scripts/playwrightModule";
import { puppeteerModule } from "../../layers/runtime/scripts/puppeteerModule";
import { userTimers } from "./userTimers";

/**
 * The modules an automation may require besides Node's built-ins. Scripts as they are: the
 * browser libraries resolve to browserfn's own modules, whose `launch()` gives the run's warm
 * browser (layers/runtime/scripts); each is made on first use.
 */
const PROVIDED: Record<string, () => unknown> = {
  "browserfn/runtime": () => runtime,
  "puppeteer-core": puppeteerModule,
  puppeteer: puppeteerModule,
  "playwright-core": playwrightModule,
  playwright: playwrightModule,
};

/** The `require` an automation gets: the runtime SDK, the browser libraries and Node built-ins only. */
function automationRequire(name: string): unknown {
  const provided = Object.hasOwn(PROVIDED, name) ? PROVIDED[name] : undefined;
  if (provided) return provided();
  if (name === "timers" || name === "node:timers") return { ...(process.getBuiltinModule(name) as object), ...userTimers };
  // "fs", "node:fs", "fs/promises", ...; undefined for anything that is not a built-in.
  const builtin = process.getBuiltinModule(name);
  if (builtin) return builtin;
  throw new Error(`Module '${name}' is not available to automations; bundle it into your module (for example with esbuild)`);
}

type ModuleFactory = (
  exports: unknown,
  require: (name: string) => unknown,
  module: { exports: unknown },
  filename: string,
  dirname: string,
  ...timers: unknown[]
) => void;

/** The module's own timer functions, in place of the globals (see userTimers). */
const TIMER_NAMES = ["setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval", "clearImmediate"] as const;

/** The function an automation exports as default. */
export type Automation = (...args: unknown[]) => unknown;

/** The name the evaluated code goes by in stack traces (`at run (/automation/index.js:64:19)`). */
export const AUTOMATION_FILENAME = "/automation/index.js";
/**
 * Lines a stack frame of the evaluated code counts before the code's own first line: `new
 * Function` wraps the body as `(function anonymous(<parameters>\n) {\n<body>\n})` (the
 * source text ECMAScript specifies for CreateDynamicFunction).
 */
export const WRAPPER_LINES = 2;
const MAX_CACHED = 8;
const factories = new Map<string, ModuleFactory>();
const automations = new Map<string, Automation>();

function remember<T>(cache: Map<string, T>, code: string, value: T): T {
  cache.set(code, value);
  // A worker serves one version; only tests load many modules in one process.
  for (const oldest of cache.keys()) {
    if (cache.size <= MAX_CACHED) break;
    cache.delete(oldest);
  }
  return value;
}

const SOURCE_MAP_COMMENT = "\n//# sourceMappingURL=data:application/json;base64,";

/**
 * The inline source map compileCode puts on the last line of the code: where that line starts
 * and its base64 payload; undefined when the last line is no such comment (code compiled
 * before source maps, or by other means).
 */
export function inlineSourceMap(code: string): { start: number; base64: string } | undefined {
  const start = code.lastIndexOf(SOURCE_MAP_COMMENT);
  if (start === -1) return undefined;
  const base64 = code.slice(start + SOURCE_MAP_COMMENT.length).trimEnd();
  return /^[A-Za-z0-9+/]+={0,2}$/.test(base64) ? { start, base64 } : undefined;
}

/** Parses the CommonJS code into a module function without running it (throws SyntaxError). */
export function compileAutomation(code: string): ModuleFactory {
  const cached = factories.get(code);
  if (cached) return cached;
  // A hashbang line is valid at the start of a module, not of a function body: it becomes a
  // comment (as Node's own loader does), keeping line numbers.
  const text = code.startsWith("#!") ? `//${code.slice(2)}` : code;
  // The inline source map (the last line) is the runner's to apply (automationStack.ts): left
  // out, so that no source-map support of the process maps the frames a second time.
  const map = inlineSourceMap(text);
  const body = `${map ? text.slice(0, map.start) : text}\n//# sourceURL=${AUTOMATION_FILENAME}`;
  const factory = new Function("exports", "require", "module", "__filename", "__dirname", ...TIMER_NAMES, body) as ModuleFactory;
  return remember(factories, code, factory);
}

/**
 * Evaluates the automation's module once per code string and returns its default export
 * (`module.exports.default`, or `module.exports` itself when that is the function).
 * A module that throws while loading is not cached: the next run tries again.
 */
export function loadAutomation(code: string): Automation {
  const cached = automations.get(code);
  if (cached) return cached;
  const module: { exports: unknown } = { exports: {} };
  const timers = TIMER_NAMES.map((name) => userTimers[name]);
  compileAutomation(code).call(module.exports, module.exports, automationRequire, module, AUTOMATION_FILENAME, "/automation", ...timers);
  const exported = module.exports as { default?: unknown } | undefined;
  const fn = exported?.default ?? exported;
  if (typeof fn !== "function") {
    throw new Error(`The module's default export is ${fn === null ? "null" : typeof fn}, not a function`);
  }
  return remember(automations, code, fn as Automation);
}

