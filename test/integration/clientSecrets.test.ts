import { BrowserfnClient, BrowserfnError, NotFoundError, ValidationError } from "../../client";
import { type TestService, startTestService } from "../helpers/localService";

const VALUE = "s3cr3t-ünï-\"quoted\"";
const READS_SECRET = `import { secrets } from "browserfn/runtime";
export default async function run() {
  return { length: secrets.get("API_TOKEN")?.length ?? null, matches: secrets.get("API_TOKEN") === ${JSON.stringify(VALUE)} };
}`;

async function thrown(call: Promise<unknown>): Promise<BrowserfnError> {
  const error = await call.then(
    () => new Error("expected an error"),
    (e: unknown) => e,
  );
  if (error instanceof BrowserfnError) return error;
  throw error;
}

describe("browserfn/client: function secrets against a real local service", () => {
  let svc: TestService;
  let client: BrowserfnClient;

  beforeAll(async () => {
    svc = await startTestService();
    client = new BrowserfnClient({ baseUrl: svc.url, apiKey: svc.adminKey });
    await client.createFunction({ name: "reader", code: READS_SECRET });
  });
  afterAll(async () => {
    await svc?.destroy();
  });

  it("sets, lists (names only), replaces and deletes a secret, which the function's runs read", async () => {
    expect(await client.listSecrets("reader")).toEqual({ items: [] });
    await client.setSecret("reader", "API_TOKEN", "first");
    await client.setSecret("reader", "API_TOKEN", VALUE); // replaced
    await client.setSecret("reader", "OTHER", "other-value");
    const list = await client.listSecrets("reader");
    expect(list.items).toEqual([
      { name: "API_TOKEN", updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      { name: "OTHER", updated_at: expect.any(String) },
    ]);
    expect(JSON.stringify(list)).not.toContain(VALUE);
    // By function_id as well as by name.
    const { function_id } = await client.getFunction("reader");
    expect((await client.listSecrets(function_id)).items.map((s) => s.name)).toEqual(["API_TOKEN", "OTHER"]);

    const { result } = await client.invoke("reader");
    expect(result).toEqual({ length: VALUE.length, matches: true });

    await client.deleteSecret("reader", "OTHER");
    expect((await client.listSecrets("reader")).items.map((s) => s.name)).toEqual(["API_TOKEN"]);
  });

  it("throws the API's errors as the client's classes", async () => {
    const missing = await thrown(client.deleteSecret("reader", "NOPE"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: "secret_not_found" });
    const badName = await thrown(client.setSecret("reader", "lower", "xxxx"));
    expect(badName).toBeInstanceOf(ValidationError);
    expect(badName.code).toBe("invalid_name");
    const empty = await thrown(client.setSecret("reader", "EMPTY", ""));
    expect(empty).toBeInstanceOf(ValidationError);
    const noFunction = await thrown(client.listSecrets("nowhere"));
    expect(noFunction).toBeInstanceOf(NotFoundError);
    expect(noFunction.code).toBe("function_not_found");
  });
});
