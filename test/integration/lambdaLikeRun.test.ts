/**
 * The Lambda-like run (issue #23): the stack's own layers (prepareLayerAssets: @sparticuz/chromium
 * and the bundled runner) and a function's zip as the deploy builds it (functionZip), unpacked as
 * Lambda unpacks them (/opt, /var/task, both read-only) and run under bubblewrap with only /tmp
 * writable, no network, Lambda's environment variables and nothing of this machine's process
 * environment. The real runner handler answers a run that starts the real Chromium from the
 * layer. Skipped, saying so, only where bubblewrap is missing (scripts/sandbox-tools.sh installs it).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { unzipSync } from "fflate";
import { compileCode } from "../../lambdas/code/compileCode";
import { type LambdaRunAnswer, RUNNER_PROTOCOL } from "../../lambdas/runner/lambdaPackage";
import { functionZip } from "../../lambdas/runtime/aws/functionZip";
import { prepareLayerAssets } from "../../lib/layerAssets";

const bwrap = ["/usr/bin/bwrap", "/bin/bwrap"].find((candidate) => spawnSync(candidate, ["--version"]).status === 0);
if (!bwrap) console.warn("lambdaLikeRun.test.ts skipped: bubblewrap (bwrap) is not installed here (scripts/sandbox-tools.sh installs it)");
const describeWithBwrap = bwrap ? describe : describe.skip;

const CODE = `import { Session } from "browserfn/runtime";
import { writeFileSync } from "node:fs";
export default async function run(title: string) {
  const writes: Record<string, string> = {};
  for (const target of ["/var/task/x", "/opt/x", "/tmp/x"]) {
    try { writeFileSync(target, "x"); writes[target] = "written"; } catch (error) { writes[target] = (error as NodeJS.ErrnoException).code ?? "error"; }
  }
  await using session = await Session.start();
  const page = await session.newPage();
  await page.setContent("<title>" + title + "</title>");
  return { title: await page.title(), writes, task: process.env.LAMBDA_TASK_ROOT, name: process.env.AWS_LAMBDA_FUNCTION_NAME };
}`;

/** Lambda's Node.js runtime, reduced: reads one event on stdin, calls the handler with a context, prints the answer. */
const BOOTSTRAP = `
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", async () => {
  const { handler } = require(process.env.LAMBDA_TASK_ROOT + "/index.js");
  const end = Date.now() + 40000;
  const answer = await handler(JSON.parse(Buffer.concat(chunks).toString("utf8")), { getRemainingTimeInMillis: () => end - Date.now() });
  process.stdout.write("ANSWER " + JSON.stringify(answer) + "\\n");
  process.exit(0);
});`;

/** What Lambda sets in a nodejs22.x function's environment (the credentials left out: the run needs none). */
const LAMBDA_ENV: Record<string, string> = {
  AWS_LAMBDA_FUNCTION_NAME: "bfn-fn_01lambdalike",
  AWS_LAMBDA_FUNCTION_VERSION: "1",
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "1024",
  AWS_LAMBDA_LOG_GROUP_NAME: "/browserfn/test/functions",
  AWS_LAMBDA_LOG_STREAM_NAME: "2026/11/28/bfn-fn_01lambdalike[1]0123456789abcdef",
  AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x",
  AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
  AWS_REGION: "eu-west-1",
  AWS_DEFAULT_REGION: "eu-west-1",
  LAMBDA_TASK_ROOT: "/var/task",
  LAMBDA_RUNTIME_DIR: "/var/runtime",
  LANG: "en_US.UTF-8",
  TZ: ":UTC",
  PATH: "/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
  LD_LIBRARY_PATH: "/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib",
  NODE_PATH: "/opt/nodejs/node22/node_modules:/opt/nodejs/node_modules:/var/runtime/node_modules",
};

describeWithBwrap("a function's Lambda, run Lambda-like under bubblewrap", () => {
  let root: string;
  let opt: string;
  let task: string;
  let cleanupLayers: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "browserfn-lambda-like-"));
    const layers = await prepareLayerAssets(path.resolve(__dirname, "../.."));
    cleanupLayers = layers.cleanup;
    // Lambda unpacks every layer under /opt, in order.
    opt = path.join(root, "opt");
    for (const layer of [layers.chromium, layers.runtime]) spawnSync("cp", ["-a", `${layer}/.`, opt], { stdio: "inherit" });
    task = path.join(root, "task");
    const compiled = compileCode(CODE);
    const { zip } = functionZip({ version: 1, js: compiled.js, parameter_style: compiled.parameter_style, variables: compiled.variables } as Parameters<typeof functionZip>[0]);
    for (const [name, bytes] of Object.entries(unzipSync(zip))) {
      await mkdir(path.dirname(path.join(task, name)), { recursive: true });
      await writeFile(path.join(task, name), bytes);
    }
  }, 60_000);

  afterAll(async () => {
    await cleanupLayers?.();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("answers a browser run with the runner from the layer and Chromium from the chromium layer; only /tmp is writable", async () => {
    const args = [
      "--unshare-all",
      "--die-with-parent",
      "--new-session",
      "--clearenv",
      // Lambda runs a function as an unprivileged user (sbx_user1051), never as root.
      "--uid", "993",
      "--gid", "990",
      ...Object.entries(LAMBDA_ENV).flatMap(([name, value]) => ["--setenv", name, value]),
      ...["/usr", "/lib", "/lib64", "/bin", "/etc"].flatMap((dir) => ["--ro-bind", dir, dir]),
      "--ro-bind", process.execPath, "/var/lang/bin/node",
      "--ro-bind", opt, "/opt",
      "--ro-bind", task, "/var/task",
      "--perms", "1777",
      "--tmpfs", "/tmp",
      "--dev", "/dev",
      "--proc", "/proc",
      "--chdir", "/var/task",
      "/var/lang/bin/node", "-e", BOOTSTRAP,
    ];
    const child = spawn(bwrap as string, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.stdin.end(JSON.stringify({ run_id: "run_lambda_like", params: { title: "Lambda-like" }, timeout_ms: 30_000 }));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const line = stdout.split("\n").find((text) => text.startsWith("ANSWER "));
    if (!line) throw new Error(`no answer (exit ${code}): ${stdout.slice(-2000)} ${stderr.slice(-2000)}`);
    const answer = JSON.parse(line.slice("ANSWER ".length)) as LambdaRunAnswer;
    expect([answer.runner_protocol, "error" in answer ? answer.error.message : "succeeded"]).toEqual([RUNNER_PROTOCOL, "succeeded"]);
    const result = JSON.parse((answer as { result_json: string }).result_json) as Record<string, unknown>;
    expect(result).toEqual({
      title: "Lambda-like",
      writes: { "/var/task/x": "EROFS", "/opt/x": "EROFS", "/tmp/x": "written" },
      task: "/var/task",
      name: "bfn-fn_01lambdalike",
    });
    expect((answer as { browser_ms: number }).browser_ms).toBeGreaterThan(0);
    expect(code).toBe(0);
  }, 60_000);
});
