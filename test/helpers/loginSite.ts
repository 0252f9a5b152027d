import { createServer, type Server } from "node:http";
import { serveLocally } from "./pageServer";

export interface LoginSite {
  url: string;
  close(): Promise<void>;
}

/**
 * A site that remembers a login the way real ones do, on 127.0.0.1: `/login` sets an httpOnly
 * session cookie and, from its page script, `user` in localStorage and a token in IndexedDB
 * (`app`/`kv`), then titles itself `logged-in`; `/account` greets the session cookie it
 * receives (its `<h1>`: `welcome <sid>` or `who are you?`).
 */
export async function startLoginSite(sessionId = "sid-4f2a9c"): Promise<LoginSite> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname === "/login") {
      response.writeHead(200, { "content-type": "text/html", "set-cookie": `sid=${sessionId}; HttpOnly; Path=/; Max-Age=3600` });
      response.end(`<!doctype html><title>logging in</title><script>
        localStorage.setItem("user", "alice");
        const open = indexedDB.open("app", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("kv");
        open.onsuccess = () => {
          const tx = open.result.transaction("kv", "readwrite");
          tx.objectStore("kv").put("token-42", "token");
          tx.oncomplete = () => { open.result.close(); document.title = "logged-in"; };
        };
      </script>`);
      return;
    }
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<!doctype html><title>account</title><h1>${sid ? `welcome ${sid}` : "who are you?"}</h1>`);
  });
  return serveLocally(server);
}
