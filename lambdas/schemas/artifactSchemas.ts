import { z } from "zod";
import { DateTime } from "./dateTime";

/** One artifact of a run, as listed. */
export const Artifact = z
  .object({
    name: z.string().describe("^[A-Za-z0-9._-]{1,128}$"),
    content_type: z.string(),
    bytes: z.int(),
    created_at: DateTime,
    attempt: z
      .int()
      .min(1)
      .describe("Which attempt of the run saved it (1 unless the run was retried); a later attempt that saves the same name replaces the earlier attempt's file"),
    url: z.string().describe("GET it (with the account's token) for the bytes; on AWS it answers 302 to a short-lived download URL"),
  })
  .meta({ id: "Artifact" });

/** `GET /runs/{run_id}/artifacts`. */
export const ArtifactList = z.object({ items: z.array(Artifact) }).meta({ id: "ArtifactList" });

/** `GET /runs/{run_id}/artifacts/{name}`: the bytes as the run saved them, with their content type. */
export const ArtifactBytes = z.unknown().describe("The artifact's bytes (any content type)").meta({ id: "ArtifactBytes" });
