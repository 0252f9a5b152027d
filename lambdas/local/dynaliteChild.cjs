// The local DynamoDB (dynalite) in its own process, so the database's CPU work does not
// share the service's event loop. Started by dynaliteServer.ts with an IPC channel: it
// reports its port, and closes the database and exits when the channel closes (the
// service stopped, or died). Arguments: the port (0: any free one; a restart passes the
// port it had before) and the data path (none: in memory).
const dynalite = require("dynalite");

const port = Number(process.argv[2] ?? 0);
const path = process.argv[3];
const server = dynalite({ ...(path ? { path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

function stop() {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}

server.on("error", (error) => {
  process.send?.({ type: "error", message: String(error && error.message) });
  process.exit(1);
});
server.listen(port, "127.0.0.1", () => process.send?.({ type: "listening", port: server.address().port }));
process.on("disconnect", stop);
process.on("SIGTERM", stop);
process.on("SIGINT", () => undefined);
