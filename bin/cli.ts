/**
 * The `browserfn` command: `start` runs the local service (as `npm start`); the other commands
 * call a service's API through the typed client (`browserfn/client`), or run an automation
 * locally (`dev`). Exit codes: 0 ok, 1 the function failed, 2 usage error, 3 API error.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { UsageError, parseCommandArgs } from "./cli/args";
import { connect } from "./cli/command";
import { COMMANDS } from "./cli/commands";
import { EXIT, reportError } from "./cli/exitCodes";
import { type Io, Output } from "./cli/output";

const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length), "version".length);
const USAGE = `Usage: browserfn <command> [arguments] [--json]

Commands:
  ${"start".padEnd(width)}  run the local service (same as npm start; settings from the environment)
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`)
  .join("\n")}
  ${"version".padEnd(width)}  print the version
  ${"help".padEnd(width)}  show this help (browserfn help <command> for one command)

Connection: browserfn login, or BROWSERFN_URL and BROWSERFN_API_KEY.
Exit codes: 0 ok, 1 the function failed, 2 usage error, 3 API error.
`;

async function runCommand(name: string, argv: string[], io: Io): Promise<number> {
  const entry = COMMANDS[name];
  if (!entry) {
    io.stderr.write(`browserfn: unknown command '${name}'\n\n${USAGE}`);
    return EXIT.usage;
  }
  const command = entry.load();
  let out = new Output(io, argv.includes("--json"));
  try {
    const args = parseCommandArgs(argv, command.options);
    out = new Output(io, args.values.json === true);
    if (args.values.help === true) {
      io.stdout.write(`${command.summary}\n\nUsage: ${command.usage} [--json]\n`);
      return EXIT.ok;
    }
    return await command.run({ io, out, args, client: () => connect(io.env) });
  } catch (error) {
    return reportError(error, out, command.usage);
  }
}

async function main(argv: string[], io: Io): Promise<number> {
  const [command = "help", ...rest] = argv;
  switch (command) {
    case "start":
      // A static require: the tsx CommonJS hook of bin/cli.js compiles it (it does not hook import()).
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require("./local");
      return -1; // the service keeps running until a signal stops it
    case "version":
    case "--version": {
      const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as { version: string };
      io.stdout.write(`${pkg.version}\n`);
      return EXIT.ok;
    }
    case "help":
    case "--help":
    case "-h": {
      const [topic] = rest;
      if (topic && COMMANDS[topic]) return runCommand(topic, ["--help"], io);
      io.stdout.write(USAGE);
      return EXIT.ok;
    }
    default:
      return runCommand(command, rest, io);
  }
}

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`browserfn: ${error instanceof UsageError ? error.message : ((error as Error)?.stack ?? String(error))}\n`);
    process.exitCode = EXIT.functionFailed;
  },
);
