/* global TextDecoder, setTimeout, clearTimeout */
// Follows a run's events (`GET /runs/{id}/events`, server-sent events) over fetch with a streamed
// body, so the key stays in the Authorization header: reads each event as it comes, and
// reconnects with Last-Event-ID when a body ends before the run's end (on AWS every long-poll
// answer does), until its `result` or `error`.

const MAX_FAILURES = 5;

/** Splits a text/event-stream into events as its text arrives (WHATWG rules, the fields used here). */
export function createSseParser() {
  let buffer = "";
  let data = [];
  let event = "";
  const state = { lastEventId: null, retryMs: null };
  function line(text) {
    if (text === "") {
      if (data.length === 0) {
        event = "";
        return null;
      }
      const done = { event: event || "message", data: data.join("\n"), id: state.lastEventId };
      data = [];
      event = "";
      return done;
    }
    if (text.startsWith(":")) return null;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) state.lastEventId = value;
    else if (field === "retry" && /^\d+$/.test(value)) state.retryMs = Number(value);
    return null;
  }
  return {
    state,
    push(text) {
      buffer += text;
      const events = [];
      for (;;) {
        const end = buffer.search(/[\r\n]/);
        if (end < 0 || (buffer[end] === "\r" && end === buffer.length - 1)) break;
        const next = line(buffer.slice(0, end));
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (next) events.push(next);
      }
      return events;
    },
  };
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Calls `onEvent({event, id, data})` for each event of the run until its result or error (then
 * resolves true), or until `signal` aborts (resolves false). Throws the ApiError of an answer that
 * is not a stream (404, 401, …), or after MAX_FAILURES failed connections in a row.
 */
export async function followRunEvents(api, runId, { signal, onEvent }) {
  let lastEventId = null;
  let retryMs = 1000;
  let failures = 0;
  while (!signal.aborted) {
    let response;
    try {
      response = await api.events(runId, lastEventId, signal);
    } catch (error) {
      if (signal.aborted) return false;
      if (error.status !== 0 && error.status !== 429 && error.status < 500) throw error;
      if (++failures > MAX_FAILURES) throw error;
      await pause(retryMs, signal);
      continue;
    }
    if (response.status === 204) return true;
    const parser = createSseParser();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        let read;
        try {
          read = await reader.read();
        } catch {
          break;
        }
        if (read.done) break;
        for (const parsed of parser.push(decoder.decode(read.value, { stream: true }))) {
          failures = 0;
          lastEventId = parsed.id;
          onEvent({ event: parsed.event, id: parsed.id, data: JSON.parse(parsed.data) });
          if (parsed.event === "result" || parsed.event === "error") return true;
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
    retryMs = parser.state.retryMs ?? retryMs;
    await pause(retryMs, signal);
  }
  return false;
}
