/**
 * The `browserfn` command. `browserfn start` runs the local service (as `npm start`);
 * `browserfn help` lists the commands.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

const USAGE = `Usage: browserfn <command>

Commands:
  start       run the local service (same as npm start; settings from the environment)
  version     print the version
  help        show this help
`;

async function main(argv: string[]): Promise<number> {
  const [command = "help"] = argv;
  switch (command) {
    case "start":
      // A static require: the tsx CommonJS hook of bin/cli.js compiles it (it does not hook import()).
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require("./local");
      return -1; // the service keeps running until a signal stops it
    case "version":
    case "--version": {
      const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as { version: string };
      process.stdout.write(`${pkg.version}\n`);
      return 0;
    }
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`browserfn: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exitCode = code;
});
