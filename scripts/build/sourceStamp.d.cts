/** See sourceStamp.cjs. */
export interface SourceStamp {
  newest: number;
  count: number;
}
export const SOURCE_DIRS: readonly string[];
export const STAMP_FILE: string;
export function sourceStamp(root: string): SourceStamp;
export function isDistFresh(root: string): boolean;
