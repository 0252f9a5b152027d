import { readFileSync } from "node:fs";
import { startTestService, type TestService } from "../helpers/localService";
import { workerPids } from "../helpers/sandboxProbes";

// Two services in one process (as the tests run them, and as anyone embedding the service
// could): their workers must share nothing. They once shared cgroup names (<pid>-1, …), so the
// end of one service's worker emptied the other's group with SIGKILL, and uids (each service's
// round robin started at the same one), so a hostile worker of one could signal the other's.

const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
const SLEEPER = "export default async (ms: number) => { await new Promise((r) => setTimeout(r, ms)); return ms; };";
const asRoot = process.getuid?.() === 0;

(asRoot ? describe : describe.skip)("two services in one process (root: a uid and cgroups per worker)", () => {
  for (const mode of ["process", "namespaces"] as const) {
    it(`${mode}: give their workers different uids, and one's worker ending leaves the other's running`, async () => {
      const services: TestService[] = [];
      try {
        for (let i = 0; i < 2; i++) services.push(await startTestService({ config: { sandbox: mode } }));
        const [a, b] = services as [TestService, TestService];
        await a.deploy("sleeper", SLEEPER);
        await b.deploy("sleeper", SLEEPER);
        expect((await a.call("POST", "/functions/sleeper", { body: { ms: 1 } })).status).toBe(200);
        const running = b.call("POST", "/functions/sleeper", { body: { ms: 6000 } });
        // b's worker starts for that run (a busy machine can take seconds).
        let [aWorker] = workerPids(a.service.runtimeDir);
        let [bWorker] = workerPids(b.service.runtimeDir);
        for (let waited = 0; !(aWorker && bWorker) && waited < 5000; waited += 100) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          [aWorker] = workerPids(a.service.runtimeDir);
          [bWorker] = workerPids(b.service.runtimeDir);
        }
        expect(aWorker && bWorker).toBeTruthy();
        const uids = [uidOf(aWorker!), uidOf(bWorker!)];
        await a.destroy(); // ends a's worker (and empties its cgroup)
        services.shift();
        expect(await running).toMatchObject({ status: 200, body: 6000 });
        expect(uids[0]).not.toBe(uids[1]);
      } finally {
        for (const t of services) await t.destroy();
      }
    }, 60_000);
  }
});
