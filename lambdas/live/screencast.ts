/**
 * The live view in the runner: while someone watches (the service says so), the page being
 * driven (the newest page of the run still open) is screencast over its own CDP session
 * (`Page.startScreencast`), as JPEG frames of at most MAX_FRAME_BYTES, at most one per
 * FRAME_INTERVAL_MS: the browser sends its next frame only once the last one is acknowledged,
 * and the acknowledgement waits out the interval. While no one watches, nothing is started:
 * a run nobody watches opens no session for it.
 */
import type { CdpChannel, PageTarget } from "../recording/pageTarget";
import { FRAME_INTERVAL_MS, MAX_FRAME_BYTES, type ScreenFrame } from "./liveFrames";

type ScreencastFrame = { data?: unknown; sessionId?: unknown; metadata?: { deviceWidth?: unknown; deviceHeight?: unknown } };

/** JPEG quality of the frames: enough to read a page, small enough for the frame cap at 1280 px. */
const QUALITY = 60;
const MAX_SIDE = 1280;

export class LiveScreencast {
  private readonly pages: PageTarget[] = [];
  private watching = false;
  private current: { page: PageTarget; cdp: CdpChannel } | undefined;
  private readonly listening = new WeakSet<CdpChannel>();
  private lastSent = 0;

  constructor(private readonly send: (frame: ScreenFrame) => void) {}

  /** The runner's hook for each page the run opens (RunLimits.pageOpened). */
  readonly pageOpened = async (page: PageTarget): Promise<void> => {
    this.pages.push(page);
    if (this.watching) await this.follow(page);
  };

  /** Starts (someone watches) or stops (no one does) the screencast. */
  watch(on: boolean): void {
    this.watching = on;
    const page = on ? this.driven() : undefined;
    void (page ? this.follow(page) : this.stopCurrent());
  }

  private driven(): PageTarget | undefined {
    for (let i = this.pages.length - 1; i >= 0; i--) {
      const page = this.pages[i];
      if (page && !page.closed()) return page;
    }
    return undefined;
  }

  private async follow(page: PageTarget): Promise<void> {
    if (this.current?.page === page) return;
    await this.stopCurrent();
    try {
      const cdp = await page.cdp();
      if (!this.listening.has(cdp)) {
        this.listening.add(cdp);
        cdp.on("Page.screencastFrame", (event: ScreencastFrame) => this.onFrame(page, cdp, event));
      }
      this.current = { page, cdp };
      await cdp.send("Page.startScreencast", { format: "jpeg", quality: QUALITY, maxWidth: MAX_SIDE, maxHeight: MAX_SIDE, everyNthFrame: 1 });
    } catch {
      // A page that closed meanwhile: the next page the run opens is followed.
    }
  }

  private async stopCurrent(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.cdp.send("Page.stopScreencast").catch(() => undefined);
  }

  private onFrame(page: PageTarget, cdp: CdpChannel, event: ScreencastFrame): void {
    const ack = () => void cdp.send("Page.screencastFrameAck", { sessionId: event.sessionId }).catch(() => undefined);
    if (!this.watching || this.current?.page !== page || typeof event.data !== "string") return ack();
    const now = Date.now();
    const width = Number(event.metadata?.deviceWidth);
    const height = Number(event.metadata?.deviceHeight);
    // Base64: three bytes in four characters.
    if (event.data.length * 0.75 <= MAX_FRAME_BYTES && Number.isFinite(width) && Number.isFinite(height)) {
      this.send({ data: event.data, url: page.url(), width: Math.round(width), height: Math.round(height) });
      this.lastSent = now;
    }
    setTimeout(ack, Math.max(0, this.lastSent + FRAME_INTERVAL_MS - now));
  }
}
