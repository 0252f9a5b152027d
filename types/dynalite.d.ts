declare module "dynalite" {
  import type { Server } from "node:http";

  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }

  /** An HTTP server speaking the DynamoDB API (https://github.com/architect/dynalite). */
  export default function dynalite(options?: DynaliteOptions): Server;
}
