/** The isolated world the recorder runs in: page scripts share its DOM, never its globals. */
export const RECORDER_WORLD = "browserfn-recorder";
/** The CDP binding the recorder sends its events through; it exists in the recorder's world only. */
export const RECORDER_BINDING = "__browserfnRecord";
/** The recorder's function (in its world) that hands over the events it holds (see recorderBuild). */
export const RECORDER_TAKE = "__browserfnTake";
/** What the recorder sends over the binding once its document reached its cap and stopped recording. */
export const RECORDER_CAPPED = "capped";
