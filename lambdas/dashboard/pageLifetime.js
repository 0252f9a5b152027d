/* global URL */
// What one rendered page holds on to: its object URLs (artifact and result previews, downloads)
// and whatever it must stop (timers, observers). app.js ends it when the page is left.

/**
 * A page's lifetime. `objectUrl(blob)` makes a URL that lives until the page is left;
 * `onLeave(fn)` runs `fn` then. A page rendered too late (the hash moved on while it loaded)
 * gets URLs that are revoked at once and its `onLeave` callbacks run at once.
 */
export function createPageLifetime() {
  const urls = new Set();
  const stops = [];
  let left = false;
  return {
    get left() {
      return left;
    },
    objectUrl(blob) {
      const url = URL.createObjectURL(blob);
      if (left) URL.revokeObjectURL(url);
      else urls.add(url);
      return url;
    },
    onLeave(stop) {
      if (left) stop();
      else stops.push(stop);
    },
    leave() {
      if (left) return;
      left = true;
      for (const url of urls) URL.revokeObjectURL(url);
      urls.clear();
      for (const stop of stops.splice(0)) stop();
    },
  };
}
