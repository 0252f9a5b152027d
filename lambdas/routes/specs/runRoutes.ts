import { ArtifactBytes, ArtifactList } from "../../schemas/artifactSchemas";
import { RunEventStream, RunEventsQuery } from "../../schemas/runEventSchemas";
import { FunctionMetrics } from "../../schemas/usageSchemas";
import { LogsQuery } from "../../schemas/querySchemas";
import { LogList, RunView } from "../../schemas/runSchemas";
import { ArtifactNameParam } from "../../schemas/pathSchemas";
import type { RouteSpec } from "../routeSpec";

/** Runs: one run, its artifacts and events; a function's latest runs and metrics. */
export const RUN_ROUTES = [
  {
    operationId: "getRun",
    method: "GET",
    path: "/runs/{run_id}",
    summary: "One run: status, parameters, result or error, timings",
    tag: "runs",
    auth: true,
    status: 200,
    response: RunView,
    errors: ["run_not_found"],
  },
  {
    operationId: "listArtifacts",
    method: "GET",
    path: "/runs/{run_id}/artifacts",
    summary: "The files the run kept (artifacts.save, failure screenshots and HTML, downloads)",
    tag: "runs",
    auth: true,
    status: 200,
    response: ArtifactList,
    errors: ["run_not_found"],
  },
  {
    operationId: "getArtifact",
    method: "GET",
    path: "/runs/{run_id}/artifacts/{name}",
    summary: "One artifact's bytes, with its content type (on AWS: 302 to a short-lived download URL)",
    tag: "runs",
    auth: true,
    status: 200,
    response: ArtifactBytes,
    contentType: "*/*",
    responseHeaders: ["Content-Disposition"],
    otherResponses: [{ status: 302, description: "On AWS: the artifact is at Location, a short-lived download URL (fetch it without the API's token)", headers: ["Location"] }],
    params: { name: ArtifactNameParam },
    errors: ["run_not_found", "artifact_not_found"],
  },
  {
    operationId: "getRunEvents",
    method: "GET",
    path: "/runs/{run_id}/events",
    summary: "The run as it happens: server-sent events (status, log, then result or error); Last-Event-ID resumes; on AWS, long polling",
    tag: "runs",
    auth: true,
    status: 200,
    query: RunEventsQuery,
    response: RunEventStream,
    contentType: "text/event-stream",
    headers: ["Last-Event-ID"],
    otherResponses: [{ status: 204, description: "Resumed after the run's end (result or error) was delivered: nothing more will come" }],
    errors: ["run_not_found", "too_many_streams"],
  },
  {
    operationId: "getLogs",
    method: "GET",
    path: "/functions/{ref}/logs",
    summary: "The function's latest runs, newest first (limit 1..1000, default 50)",
    tag: "runs",
    auth: true,
    status: 200,
    query: LogsQuery,
    response: LogList,
    errors: ["function_not_found", "invalid_limit"],
  },
  {
    operationId: "getMetrics",
    method: "GET",
    path: "/functions/{ref}/metrics",
    summary: "Call counts, success rate (%), mean and percentile durations (ms)",
    tag: "functions",
    auth: true,
    status: 200,
    response: FunctionMetrics,
    errors: ["function_not_found"],
  },
] as const satisfies readonly RouteSpec[];
