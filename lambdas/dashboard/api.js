/* global fetch, URLSearchParams */
// The dashboard's only way to the API: fetch on the page's own origin, with the key in the
// Authorization header and nowhere else.

/** An error answer of the API, in its one shape: `{"error": {code, message, request_id, details}}`. */
export class ApiError extends Error {
  constructor(status, { code, message, request_id, details }, headers = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.requestId = request_id ?? null;
    this.details = details ?? {};
    this.headers = headers;
  }
}

/** A response the API did not shape (a proxy, a network failure) as an ApiError all the same. */
function unshapedError(status, text, headers) {
  const message = text ? `The server answered ${status}: ${text.slice(0, 300)}` : `The server answered ${status} with no body`;
  return new ApiError(status, { code: `http_${status}`, message }, headers);
}

/**
 * The API client of the dashboard. `base` is the API's base path on this origin ("" or
 * "/<stage>"); `key` the API key (or OAuth access token) the user signed in with.
 */
/** The ApiError of a response that is not ok, from its body text. */
function errorOf(response, text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return unshapedError(response.status, text, response.headers);
  }
  const error = data && typeof data === "object" ? data.error : null;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    return new ApiError(response.status, error, response.headers);
  }
  return unshapedError(response.status, text, response.headers);
}

export function createApi(base, key) {
  async function send(method, path, init) {
    try {
      // Redirects are followed (an artifact may answer with one to a presigned URL); the
      // browser drops the Authorization header when a redirect leaves this origin.
      return await fetch(base + path, { method, cache: "no-store", credentials: "omit", redirect: "follow", ...init });
    } catch (error) {
      throw new ApiError(0, { code: "network_error", message: `The API could not be reached: ${error.message}` });
    }
  }

  async function request(method, path, { body, headers = {} } = {}) {
    const init = { headers: { authorization: `Bearer ${key}`, ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["content-type"] = "application/json";
    }
    const response = await send(method, path, init);
    const text = await response.text();
    if (!response.ok) throw errorOf(response, text);
    let data;
    try {
      data = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw unshapedError(response.status, text, response.headers);
    }
    return { status: response.status, headers: response.headers, body: data };
  }

  /** A GET whose answer is bytes, not JSON: the body as a Blob. */
  async function download(path) {
    const response = await send("GET", path, { headers: { authorization: `Bearer ${key}` } });
    if (!response.ok) throw errorOf(response, await response.text());
    return response.blob();
  }

  const get = async (path) => (await request("GET", path)).body;
  const ref = (name) => encodeURIComponent(name);

  return {
    usage: (month) => get(`/usage${month ? `?month=${encodeURIComponent(month)}` : ""}`),
    listFunctions: (cursor) => get(`/functions?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    info: (name) => get(`/functions/${ref(name)}/info`),
    versions: (name) => get(`/functions/${ref(name)}/versions`),
    version: (name, version) => get(`/functions/${ref(name)}/versions/${encodeURIComponent(version)}`),
    logs: (name, limit = 50) => get(`/functions/${ref(name)}/logs?limit=${limit}`),
    metrics: (name) => get(`/functions/${ref(name)}/metrics`),
    /** The function's secrets: names and `updated_at`, never a value. */
    secrets: (name) => get(`/functions/${ref(name)}/secrets`),
    setSecret: (name, secret, value) => request("PUT", `/functions/${ref(name)}/secrets/${encodeURIComponent(secret)}`, { body: { value } }),
    deleteSecret: (name, secret) => request("DELETE", `/functions/${ref(name)}/secrets/${encodeURIComponent(secret)}`),
    profiles: () => get("/profiles"),
    deleteProfile: (profile) => request("DELETE", `/profiles/${encodeURIComponent(profile)}`),
    run: (runId) => get(`/runs/${encodeURIComponent(runId)}`),
    /** `GET /runs` with the filters that are set (function, status, trigger) and a page's cursor. */
    listRuns: (query = {}) => {
      const params = new URLSearchParams({ limit: "50" });
      for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
      return get(`/runs?${params}`);
    },
    /** `POST /runs/{id}/cancel`: the run as it ended (canceled); 409 run_finished once it had ended. */
    cancelRun: async (runId) => (await request("POST", `/runs/${encodeURIComponent(runId)}/cancel`)).body,
    /**
     * `GET /runs/{id}/events` as a streamed Response (read its body as it comes): the key goes in
     * the Authorization header, as everywhere (an EventSource could only put it in the URL).
     * 204 when nothing follows `lastEventId`; an error answer throws its ApiError.
     */
    events: async (runId, lastEventId, signal) => {
      const headers = { authorization: `Bearer ${key}`, accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
      const response = await send("GET", `/runs/${encodeURIComponent(runId)}/events`, { headers, signal });
      if (!response.ok) throw errorOf(response, await response.text());
      return response;
    },
    /**
     * `GET /runs/{id}/live` as a streamed Response (frame events, then end); on AWS a long-poll
     * answer, after the frame `lastEventId` when given. An error answer throws its ApiError.
     */
    live: async (runId, lastEventId, signal) => {
      const headers = { authorization: `Bearer ${key}`, accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
      const response = await send("GET", `/runs/${encodeURIComponent(runId)}/live`, { headers, signal });
      if (!response.ok) throw errorOf(response, await response.text());
      return response;
    },
    artifacts: (runId) => get(`/runs/${encodeURIComponent(runId)}/artifacts`),
    /** One artifact's bytes, as a Blob (its type is the content type the API answered with). */
    artifact: (runId, name) => download(`/runs/${encodeURIComponent(runId)}/artifacts/${encodeURIComponent(name)}`),
    /**
     * Invokes a function; `params` null sends no body, `version` null runs the latest, `async`
     * asks for 202 at once. Answers {status, headers, body} (200, or 202 with the run to follow).
     */
    invoke: (name, params, { version = null, async = false } = {}) =>
      request("POST", `/functions/${ref(name)}`, {
        body: params ?? undefined,
        headers: { ...(version ? { "x-function-version": String(version) } : {}), ...(async ? { prefer: "respond-async" } : {}) },
      }),
  };
}
