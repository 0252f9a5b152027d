/** Automation modules used across tests. */
export const TITLE_FN = `import { Session } from "browserfn/runtime";

export default async function run(url: string, max_items: number = 10) {
  await using session = await Session.start({ timeout_minutes: 2 });
  const page = await session.newPage();
  await page.goto(url);
  return { title: await page.title(), max_items };
}
`;

export const ECHO_FN = `export default async function run({ message, times = 1 }: { message: string; times?: number }) {
  return { echo: Array.from({ length: times }, () => message) };
}
`;

export const NO_PARAMS_FN = `export default async () => ({ ok: true });
`;
