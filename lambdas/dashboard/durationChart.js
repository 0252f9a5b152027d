// A bar chart of recent run durations (oldest on the left), as inline SVG built through the DOM.
import { duration, h, svg } from "./dom.js";

const WIDTH = 600;
const HEIGHT = 160;
const AXIS = 44;
const TOP = 12;
const BOTTOM = 18;

/** `entries` are log entries, newest first (as `GET /functions/{ref}/logs` answers). */
export function durationChart(entries) {
  const runs = entries.filter((entry) => typeof entry.duration === "number").reverse();
  if (runs.length === 0) return h("p", { class: "muted", id: "duration-chart" }, "No finished runs yet.");
  const max = Math.max(...runs.map((run) => run.duration), 1);
  const plotWidth = WIDTH - AXIS;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(runs.length, 10);
  const bars = runs.map((run, i) => {
    const height = Math.max(1, (run.duration / max) * plotHeight);
    return svg(
      "rect",
      {
        class: `bar bar-${String(run.status).replace(/[^a-z_]/g, "")}`,
        x: (AXIS + i * slot + slot * 0.15).toFixed(1),
        y: (TOP + plotHeight - height).toFixed(1),
        width: (slot * 0.7).toFixed(1),
        height: height.toFixed(1),
      },
      svg("title", {}, `${run.timestamp} · ${run.status} · ${duration(run.duration)} · version ${run.version}`),
    );
  });
  return svg(
    "svg",
    {
      id: "duration-chart",
      class: "chart",
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: "img",
      "aria-label": `Durations of the last ${runs.length} finished runs, oldest first; the longest took ${duration(max)}`,
      "data-count": runs.length,
    },
    svg("line", { class: "axis", x1: AXIS, y1: TOP, x2: AXIS, y2: TOP + plotHeight }),
    svg("line", { class: "axis", x1: AXIS, y1: TOP + plotHeight, x2: WIDTH, y2: TOP + plotHeight }),
    svg("text", { class: "axis-label", x: AXIS - 6, y: TOP + 4, "text-anchor": "end" }, duration(max)),
    svg("text", { class: "axis-label", x: AXIS - 6, y: TOP + plotHeight, "text-anchor": "end" }, "0"),
    svg("text", { class: "axis-label", x: AXIS, y: HEIGHT - 3 }, "older"),
    svg("text", { class: "axis-label", x: WIDTH, y: HEIGHT - 3, "text-anchor": "end" }, "newer"),
    bars,
  );
}
