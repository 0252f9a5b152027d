import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface PageServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Test pages on 127.0.0.1: `/title/<text>` has that title; `/set-cookie/<name>` sets a
 * cookie; `/cookies` shows the cookies it received as its title; `/basic-auth/<user>:<password>`
 * asks for those (HTTP Basic) and is titled `authenticated` once given them. `?background=<rrggbb>` colours
 * any page's background (so that a screenshot of it shows it even where no font renders).
 */
export async function startPageServer(): Promise<PageServer> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const [, kind, arg = ""] = url.pathname.split("/");
    const headers: Record<string, string> = { "content-type": "text/html" };
    let title = "index";
    if (kind === "title") title = decodeURIComponent(arg);
    if (kind === "set-cookie") headers["set-cookie"] = `${arg}=1; Path=/`;
    if (kind === "cookies") title = `cookies:${request.headers.cookie ?? ""}`;
    if (kind === "basic-auth") {
      // HTTP authentication of the site itself: `/basic-auth/<user>:<password>` wants those.
      if (request.headers.authorization !== `Basic ${Buffer.from(decodeURIComponent(arg)).toString("base64")}`) {
        response.writeHead(401, { ...headers, "www-authenticate": 'Basic realm="site"' }).end("<!doctype html><title>who are you</title>");
        return;
      }
      title = "authenticated";
    }
    const background = /^[0-9a-f]{6}$/i.test(url.searchParams.get("background") ?? "") ? `<style>body{background:#${url.searchParams.get("background")}}</style>` : "";
    response.writeHead(200, headers);
    response.end(`<!doctype html><title>${title}</title>${background}<p>${title}</p>`);
  });
  return serveLocally(server);
}

/** Listens on an ephemeral port of 127.0.0.1; `close` ends open connections too. */
export async function serveLocally(server: Server): Promise<PageServer> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
