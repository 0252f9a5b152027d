/**
 * `npm start`: the whole browserfn service on this machine (see README and docs/api.md).
 * Settings come from the environment: PORT, HOST, BROWSERFN_DATA_DIR, BROWSERFN_BOOTSTRAP_KEY,
 * BROWSERFN_SYNC_WAIT_SECONDS, BROWSERFN_PLANS, BROWSERFN_REQUEST_LOG, BROWSERFN_SANDBOX,
 * BROWSERFN_ALLOW_LOCAL_NETWORK, BROWSERFN_SHUTDOWN_GRACE_SECONDS.
 */
import { existsSync } from "node:fs";
import { readLocalConfig } from "../lambdas/config/localConfig";
import { startLocalService } from "../lambdas/local/localService";
import { CgroupCpuShares } from "../lambdas/runtime/local/cpuShares/cgroupCpuShares";
import { describeSandbox } from "../lambdas/runtime/local/sandbox/sandbox";

async function main(): Promise<void> {
  // Node 20 is supported here; the SDK's notice about its future Node 22 floor is noise at every start.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  const config = readLocalConfig(process.env);
  // A process of its own: it and its store (started next, born in its group) weigh as the service
  // against accounts' code, not as one task of the session's autogroup (docs/local.md, CPU shares).
  if (await CgroupCpuShares.available()) {
    await CgroupCpuShares.placeService().catch((error: unknown) => console.error(`the service's own cpu group could not be made (${(error as Error).message}): it weighs as its session's autogroup`));
  }
  const service = await startLocalService(config);
  const { newKey, keyFile } = service.bootstrap;
  if (newKey) {
    console.log(`Admin API key of account 'local' (shown once, also saved to ${keyFile}):\n  ${newKey}`);
  } else if (keyFile && existsSync(keyFile)) {
    console.log(`Admin API key of account 'local': see ${keyFile}`);
  } else if (config.bootstrapKey) {
    console.log("Admin API key of account 'local': the one in BROWSERFN_BOOTSTRAP_KEY");
  } else {
    console.log("Admin API key of account 'local': the one in BROWSERFN_BOOTSTRAP_KEY when the data dir was first used");
  }
  console.log(describeSandbox(service.sandbox));
  console.log(`browserfn is serving ${service.url} (data in ${config.dataDir})`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down (runs in progress get up to ${config.shutdownGraceSeconds ?? 10} s to finish)`);
    service.shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
