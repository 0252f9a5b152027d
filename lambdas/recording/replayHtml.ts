/**
 * A self-contained HTML player of one recording (what `browserfn runs replay` writes): the
 * player (rrweb-player, as the dashboard serves it), its stylesheet and the events, all in the
 * one file, which loads nothing from anywhere (its policy allows no fetch, no connection, and
 * images only from data: and blob:).
 */

/** The file's policy: its own inline script and styles, nothing fetched. */
const POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'";

/** JSON text safe inside a <script> element: `<` written as its escape, so no `</script>` ends it early. */
function scriptJson(json: string): string {
  return json.replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The HTML of a player of `eventsJson` (a recording as the service keeps it), titled `title`. */
export function replayHtml(title: string, eventsJson: string, player: { js: string; css: string }): string {
  // It plays from the start once the document has loaded (a goto while the page was still being parsed never returned).
  const start = `window.addEventListener("load", function () {
  var events = JSON.parse(document.getElementById("events").textContent);
  var width = Math.max(320, Math.min(window.innerWidth - 32, 1280));
  new rrwebPlayer.default({ target: document.getElementById("player"), props: { events: events, width: width, height: Math.round(width * 0.6), autoPlay: true, skipInactive: true, mouseTail: false } });
});`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${player.css.replace(/<\/style/gi, "<\\/style")}
body { margin: 16px; font: 14px system-ui, sans-serif; color: #1c2430; }</style>
</head>
<body>
<h1 style="font-size:18px">${escapeHtml(title)}</h1>
<p>Inputs were masked and secret values redacted when it was recorded; the recorded page's images and fonts are not loaded.</p>
<div id="player"></div>
<script id="events" type="application/json">${scriptJson(eventsJson)}</script>
<script>${player.js.replace(/<\/script/gi, "<\\/script")}</script>
<script>${start}</script>
</body>
</html>
`;
}
