import { HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { MAX_FRAME_BYTES } from "../liveFrames";
import { FRAME_METADATA, liveFrameKey, type LiveUploads, liveWatchKey } from "./liveUploads";

/**
 * Signs a run's live-view URLs (LiveUploads) with the client's credentials, valid for
 * `expiresInSeconds`: a POST whose policy allows exactly the run's frame key, a JPEG of at most
 * MAX_FRAME_BYTES and the frame's metadata fields (nothing else: S3 refuses a form field its
 * policy does not name), and a HEAD of the run's watch marker. The signer needs s3:PutObject on
 * the frames (`latest.jpg` under `live/`) and s3:GetObject on the markers (`watch` under `live/`);
 * the function's role needs nothing.
 */
export async function signLiveUploads(s3: S3Client, bucket: string, runId: string, expiresInSeconds: number): Promise<LiveUploads> {
  const expires = Math.ceil(expiresInSeconds);
  const frame = await createPresignedPost(s3, {
    Bucket: bucket,
    Key: liveFrameKey(runId),
    Conditions: [["content-length-range", 0, MAX_FRAME_BYTES], ["eq", "$Content-Type", "image/jpeg"], ...FRAME_METADATA.map((name): ["starts-with", string, string] => ["starts-with", `$x-amz-meta-${name}`, ""])],
    Expires: expires,
  });
  const watchedUrl = await getSignedUrl(s3, new HeadObjectCommand({ Bucket: bucket, Key: liveWatchKey(runId) }), { expiresIn: expires });
  return { frame: { url: frame.url, fields: frame.fields }, watched_url: watchedUrl };
}
