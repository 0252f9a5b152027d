export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body (undefined when empty). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One request over loopback HTTP, its body sent as it is, with a bearer token when given; the answer and its text. */
export async function sendRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<{ response: Response; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(baseUrl + path, { method, headers, body: options.body });
  return { response, text: await response.text() };
}

/** One HTTP request over real loopback HTTP; a body that is a string is sent as is. */
export async function requestJson(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const { response, text } = await sendRequest(baseUrl, method, path, { body, token: options.token, headers });
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** Asserts the one error shape of the API and returns the error object. */
export function expectError(response: ApiResponse, status: number, code: string) {
  if (response.status !== status || response.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${response.text}`);
  }
  const error = response.body.error;
  expect(Object.keys(response.body)).toEqual(["error"]);
  expect(typeof error.message).toBe("string");
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.request_id).toBe(response.headers.get("x-request-id"));
  expect(typeof error.details).toBe("object");
  return error;
}
