import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { CliError } from "./args";

/** What `browserfn login` stores. */
export interface CliConfig {
  url: string;
  api_key: string;
}

/** Where and which service the CLI talks to. */
export interface Connection {
  url: string;
  apiKey: string;
}

/** `$XDG_CONFIG_HOME/browserfn/config.json`, or `~/.config/browserfn/config.json`. */
export function configPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME ?? homedir(), ".config");
  return path.join(base, "browserfn", "config.json");
}

/** The stored config, or null when there is none. */
export async function readConfig(env: NodeJS.ProcessEnv): Promise<Partial<CliConfig> | null> {
  const file = configPath(env);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<CliConfig>;
    return typeof parsed === "object" && parsed !== null ? parsed : null;
  } catch {
    throw new CliError(`${file} is not JSON; run browserfn login again`, 2);
  }
}

/** Writes the config file, readable by its owner only (0600, directory 0700). */
export async function writeConfig(env: NodeJS.ProcessEnv, config: CliConfig): Promise<string> {
  const file = configPath(env);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600); // writeFile's mode applies only when it creates the file
  return file;
}

/** URL and key: `BROWSERFN_URL` / `BROWSERFN_API_KEY` override the stored config. */
export async function resolveConnection(env: NodeJS.ProcessEnv): Promise<Connection> {
  const stored = env.BROWSERFN_URL && env.BROWSERFN_API_KEY ? null : await readConfig(env);
  const url = env.BROWSERFN_URL || stored?.url;
  const apiKey = env.BROWSERFN_API_KEY || stored?.api_key;
  if (!url || !apiKey) {
    throw new CliError("Not logged in: run `browserfn login --url <url> --key <key>`, or set BROWSERFN_URL and BROWSERFN_API_KEY", 2);
  }
  return { url, apiKey };
}
