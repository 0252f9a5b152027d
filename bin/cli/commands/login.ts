import { BrowserfnClient } from "../../../client";
import { UsageError, positionals, stringOption } from "../args";
import type { Command } from "../command";
import { writeConfig } from "../config";
import { httpFetch } from "../httpFetch";
import { ask, askSecret } from "../prompt";

export const login: Command = {
  summary: "check and store the service URL and API key (~/.config/browserfn/config.json)",
  usage: "browserfn login [--url URL] [--key KEY]",
  options: { url: { type: "string" }, key: { type: "string" } },
  async run({ args, io, out }) {
    positionals(args, []);
    const interactive = io.stdin.isTTY === true;
    let url = stringOption(args, "url") ?? io.env.BROWSERFN_URL;
    let key = stringOption(args, "key") ?? io.env.BROWSERFN_API_KEY;
    if (!url && interactive) url = await ask(io, "Service URL (e.g. http://127.0.0.1:8787): ");
    if (!key && interactive) key = await askSecret(io, "API key (not shown): ");
    if (!url || !key) throw new UsageError("login needs --url and --key (or BROWSERFN_URL and BROWSERFN_API_KEY)");
    if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http(s) URL, not '${url}'`);
    url = url.replace(/\/+$/, "");
    // The key must work: one authenticated call before anything is stored.
    const keysOfAccount = await new BrowserfnClient({ baseUrl: url, apiKey: key, fetch: httpFetch }).listApiKeys();
    const account = keysOfAccount.items[0]?.account ?? null;
    const file = await writeConfig(io.env, { url, api_key: key });
    if (out.json) out.printJson({ url, account, config: file });
    else out.note(`Logged in to ${url}${account ? ` as account ${account}` : ""}; saved to ${file}`);
    return 0;
  },
};
