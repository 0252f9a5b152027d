/** The isolated world the recorder runs in: page scripts share its DOM, never its globals. */
export const RECORDER_WORLD = "browserfn-recorder";
/** The CDP binding the recorder sends its events through; it exists in the recorder's world only. */
export const RECORDER_BINDING = "__browserfnRecord";
