/**
 * The hostile accounts' own side of bench/hostileTenants.ts, in a process of its own (one per
 * account), as the hostile callers of hostileWebhooks.ts: building 256 KB bodies and reading 300
 * KB answers a hundred times a second must not share the event loop that times the other
 * tenant's calls, nor take the CPU from it (the parent makes it a remote peer: remotePeer.ts).
 *
 * `--deploy <url> <key> <bomb|mixed>`: deploys without pause until SIGTERM, each deploy waiting
 * for the answer to the one before: `bomb`, a module the parser needs a minute for; `mixed`, in
 * turn, 3,000 `[]` parameters, 256 KB of `string` parameters, nested Records and code nested
 * too deeply to parse. Says `{ started: true }` over IPC once its first deploy is answered;
 * at SIGTERM prints `answers=<JSON of answers by status>` and exits.
 */
import { TOO_DEEP, STRINGS_AT_LIMIT, emptyTupleParameters, nestedRecords, slowToParse } from "../test/helpers/hostileCode";

async function deploy(url: string, key: string, kind: string): Promise<void> {
  const attacks = [() => emptyTupleParameters(3000), STRINGS_AT_LIMIT, nestedRecords, ...Object.values(TOO_DEEP)];
  const bomb = slowToParse();
  const code = kind === "bomb" ? () => bomb : (i: number) => (attacks[i % attacks.length] as () => string)();
  let stop = false;
  process.once("SIGTERM", () => (stop = true));
  const answers: Record<string, number> = {};
  for (let i = 0; !stop; i++) {
    const response = await fetch(`${url}/functions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `attack-${process.pid}-${i}`, code: code(i) }),
    }).catch(() => undefined);
    await response?.arrayBuffer().catch(() => undefined);
    const status = String(response?.status ?? "error");
    answers[status] = (answers[status] ?? 0) + 1;
    if (i === 0) process.send?.({ started: true });
    if (status === "429" || status === "error") await new Promise((resolve) => setTimeout(resolve, 200));
  }
  process.stdout.write(`answers=${JSON.stringify(answers)}\n`);
}

const [mode, url, key, kind] = process.argv.slice(2);
if (mode === "--deploy" && url && key && (kind === "bomb" || kind === "mixed")) void deploy(url, key, kind).then(() => process.exit(0));
else {
  console.error("usage: hostileDeployers.ts --deploy <url> <key> <bomb|mixed>");
  process.exit(2);
}
