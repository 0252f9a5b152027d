import type { OriginPage } from "./originStorage";
import { type StateContext, webOrigin } from "./stateContext";

/** What both drivers' pages offer the state layer here. */
interface DriverPage {
  url(): string;
  close(): Promise<void>;
}

/**
 * A state context's helperPage and openPages, the same for both drivers given the context's
 * `pages`, how it opens a page (`newPage`), how it borrows one (`borrow`: its restore documents
 * answered in the browser) and how it runs script in one (`evaluateIn`).
 */
export function originPages<P extends DriverPage>(
  pages: () => P[] | Promise<P[]>,
  newPage: () => Promise<P>,
  borrow: (page: P) => Promise<OriginPage>,
  evaluateIn: (page: P) => OriginPage["evaluate"],
): Pick<StateContext<P>, "helperPage" | "openPages"> {
  return {
    async helperPage() {
      const page = await newPage();
      const borrowed = await borrow(page);
      return { visit: borrowed.visit, evaluate: borrowed.evaluate, close: () => page.close() };
    },
    async openPages() {
      const found = new Map<string, OriginPage>();
      for (const page of await pages()) {
        const origin = webOrigin(page.url());
        // Read where it is, without navigating it.
        if (origin && !found.has(origin)) found.set(origin, { visit: async () => undefined, evaluate: evaluateIn(page), close: async () => undefined });
      }
      return found;
    },
  };
}
