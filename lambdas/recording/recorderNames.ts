/** The isolated world the recorder runs in: page scripts share its DOM, never its globals. */
export const RECORDER_WORLD = "browserfn-recorder";
/** The CDP binding the recorder sends its events through; it exists in the recorder's world only. */
export const RECORDER_BINDING = "__browserfnRecord";
/** The recorder's function (in its world) that hands over the events it holds (see recorderBuild). */
export const RECORDER_TAKE = "__browserfnTake";
/** What the recorder sends over the binding once its document reached its cap and stopped recording. */
export const RECORDER_CAPPED = "capped";
/** What the recorder sends over the binding when it begins and rrweb's code is not in its world yet: the runner evaluates it there. */
export const RECORDER_LOAD = "load";
/** Where rrweb's `record` is kept in the recorder's world once its code was evaluated there. */
export const RECORDER_RRWEB = "__browserfnRrweb";
/** The recorder's function (in its world) that rrweb's code calls once evaluated there: recording starts. */
export const RECORDER_LOADED = "__browserfnLoaded";
