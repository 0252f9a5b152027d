/**
 * Redactor.value on a 19.8 MB rrweb-like recording with two secrets (as checkRecording redacts a
 * recording): wall time and CPU time of this process. Run: npx tsx bench/redactor.ts
 */
import { Redactor } from "../lambdas/secrets/redactor";
function node(id: number, depth: number): unknown {
  const n: Record<string, unknown> = { type: 2, tagName: "div", attributes: { class: "row item-" + id, "data-x": String(id) }, childNodes: [], id };
  if (depth > 0) for (let i = 0; i < 3; i++) (n.childNodes as unknown[]).push(node(id * 3 + i, depth - 1));
  else (n.childNodes as unknown[]).push({ type: 3, textContent: "some text content here " + id, id: id + 1e6 });
  return n;
}
const events: unknown[] = [];
let size = 0;
for (let e = 0; size < 19.5e6; e++) { const ev = { type: 2, data: { node: node(e, 7), initialOffset: { left: 0, top: 0 } }, timestamp: 1700000000000 + e }; events.push(ev); size += JSON.stringify(ev).length; }
console.log("bytes", size, "events", events.length);
const r = new Redactor(["hunter2-secret", "tok_ABCDEF123456"]);
const t0 = performance.now(); const c0 = process.cpuUsage();
const out = r.value(events);
console.log("ms", (performance.now() - t0).toFixed(0), "cpu", (process.cpuUsage(c0).user/1000).toFixed(0), JSON.stringify(out).length);
