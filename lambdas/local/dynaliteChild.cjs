// The local DynamoDB (dynalite) in its own process, so the database's CPU work does not
// share the service's event loop. Started by dynaliteServer.ts with an IPC channel: it
// reports its port, and closes the database and exits when the channel closes (the
// service stopped, or died). Arguments: the port (0: any free one; a restart passes the
// port it had before) and the data path (none: in memory).
//
// dynalite itself answers anyone who can reach its port, and automation code can reach
// loopback. So every request must carry the store's secret (header below): the service
// makes one per start and sends it as the first IPC message (never on the command line or
// in the environment, both readable in /proc). Nothing is served before it has arrived; a
// request without it or with another one gets 403 and never reaches dynalite.
const { createHash, timingSafeEqual } = require("node:crypto");
const dynalite = require("dynalite");

/** As STORE_SECRET_HEADER in dynaliteDocumentClient.ts. */
const SECRET_HEADER = "x-browserfn-store-secret";

const port = Number(process.argv[2] ?? 0);
const path = process.argv[3];
const server = dynalite({ ...(path ? { path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

/** SHA-256 of the secret: compared with the request's, equal lengths whatever the request sent. */
let secretDigest;
const digest = (text) => createHash("sha256").update(text, "utf8").digest();

function authorized(request) {
  const given = request.headers[SECRET_HEADER];
  if (!secretDigest || typeof given !== "string") return false;
  return timingSafeEqual(digest(given), secretDigest);
}

// dynalite's own handler(s) run only for requests that carry the secret.
const handlers = server.listeners("request");
server.removeAllListeners("request");
server.on("request", (request, response) => {
  if (authorized(request)) {
    for (const handler of handlers) handler.call(server, request, response);
    return;
  }
  const body = JSON.stringify({
    __type: "com.amazon.coral.service#UnrecognizedClientException",
    message: "The request does not carry the store's secret.",
  });
  response.writeHead(403, { "content-type": "application/x-amz-json-1.0", "content-length": Buffer.byteLength(body) });
  response.end(body);
});

function stop() {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}

server.on("error", (error) => {
  process.send?.({ type: "error", message: String(error && error.message) });
  process.exit(1);
});
// Listens once the secret has come: before, there is nothing to check requests against.
process.on("message", (message) => {
  if (secretDigest || !message || message.type !== "secret") return;
  if (typeof message.secret !== "string" || message.secret.length < 32) {
    process.send?.({ type: "error", message: "the store's secret is missing or too short" });
    process.exit(1);
  }
  secretDigest = digest(message.secret);
  server.listen(port, "127.0.0.1", () => process.send?.({ type: "listening", port: server.address().port }));
});
process.on("disconnect", stop);
process.on("SIGTERM", stop);
process.on("SIGINT", () => undefined);
