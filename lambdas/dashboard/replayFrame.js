/* global window, document, rrwebPlayer */
// The replay player's frame (replay.html, framed by the run page, under REPLAY_CSP). The run page posts it the recording's
// events (`{type: "play", events, at}`) and where to go (`{type: "goto", at, play}`); it plays
// them with rrweb-player, served by the service itself (rrwebPlayer.js).
(function () {
  "use strict";
  var player = null;
  function play(message) {
    var events = message.events;
    if (!Array.isArray(events) || events.length < 2) return;
    document.body.replaceChildren();
    var width = Math.max(240, window.innerWidth - 8);
    var height = Math.max(160, window.innerHeight - 90);
    player = new rrwebPlayer.default({ target: document.body, props: { events: events, width: width, height: height, autoPlay: false, showController: true, skipInactive: true, mouseTail: false } });
    if (typeof message.at === "number") player.goto(message.at, false);
  }
  window.addEventListener("message", function (event) {
    // Only the page that framed it speaks to it.
    if (event.source !== window.parent || typeof event.data !== "object" || event.data === null) return;
    if (event.data.type === "play") play(event.data);
    if (event.data.type === "goto" && player && typeof event.data.at === "number") player.goto(event.data.at, event.data.play === true);
  });
  window.parent.postMessage({ type: "replay-ready" }, "*");
})();
