import { createReadStream, createWriteStream } from "node:fs";
import http from "node:http";
import https from "node:https";
import { mkdir, mkdtemp, readFile, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Storage } from "@google-cloud/storage";
import type { TargetAddressPolicy } from "../domain/target-addresses.js";
import { errors } from "../errors/errors.js";
import { guardedLookup } from "../net/outbound-http.js";

/**
 * Where an export is written and an import read from (contract): a file under the export directory, an S3
 * bucket (AWS SDK, any S3 API through `endpoint`) or a GCS bucket (the official client, which honours
 * STORAGE_EMULATOR_HOST). Credentials of a request are used for that call only: never stored, never logged.
 */
export interface LocalLocation {
  path?: string;
}
export interface S3Location {
  path?: string;
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  ssl?: boolean;
  bucket?: string;
}
export interface GcsLocation {
  path?: string;
  bucket?: string;
  serviceaccountJson?: string;
}
export type Location = { kind: "local"; at: LocalLocation } | { kind: "s3"; at: S3Location } | { kind: "gcs"; at: GcsLocation };

const invalid = (field: string, why: string) => errors.invalidArgument("STORE-l0c4", `invalid ${field}: ${why}`);

function required(v: string | undefined, field: string): string {
  if (typeof v !== "string" || !v.trim()) throw invalid(field, "is required");
  return v;
}

/** A path inside `root`; `..` or an absolute path leading out of it is INVALID_ARGUMENT naming `field`. */
export function localPath(root: string, path: string | undefined, field: string): string {
  const p = required(path, field);
  const full = resolve(root, p);
  const rel = relative(root, full);
  if (!rel || rel.startsWith("..") || isAbsolute(rel) || p.includes("\0"))
    throw invalid(field, "must name a file inside the export directory (SVC_EXPORT_DIR)");
  return full;
}

/**
 * The S3 client of a request. Its endpoint is the caller's choice, so where it connects obeys SVC_TARGET_DENY as
 * execution targets do (the cloud metadata address is never reached through an export).
 */
function s3Of(at: S3Location, field: string, policy: TargetAddressPolicy): { client: S3Client; bucket: string; key: string } {
  const endpoint = required(at.endpoint, `${field}.endpoint`);
  const url = /^https?:\/\//.test(endpoint) ? endpoint : `${at.ssl ? "https" : "http"}://${endpoint}`;
  if (!URL.canParse(url)) throw invalid(`${field}.endpoint`, "must be host:port or a URL");
  const problem = policy.urlProblem(url);
  if (problem) throw invalid(`${field}.endpoint`, problem);
  const lookup = guardedLookup(policy);
  const client = new S3Client({
    requestHandler: { httpAgent: new http.Agent({ lookup } as http.AgentOptions), httpsAgent: new https.Agent({ lookup } as https.AgentOptions) },
    endpoint: url,
    region: "us-east-1",
    forcePathStyle: true,
    // Checksums only where S3 requires them: the SDK's default trailing checksums (aws-chunked bodies) are
    // not understood by every S3 API (MinIO versions, s3rver, Ceph).
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    credentials: {
      accessKeyId: required(at.accessKeyId, `${field}.access_key_id`),
      secretAccessKey: required(at.secretAccessKey, `${field}.secret_access_key`),
    },
  });
  return { client, bucket: required(at.bucket, `${field}.bucket`), key: required(at.path, `${field}.path`) };
}

function gcsOf(at: GcsLocation, field: string) {
  let credentials: Record<string, unknown>;
  try {
    credentials = JSON.parse(Buffer.from(required(at.serviceaccountJson, `${field}.serviceaccount_json`), "base64").toString("utf8"));
  } catch (e) {
    if (e instanceof SyntaxError) throw invalid(`${field}.serviceaccount_json`, "must be base64 of a service-account JSON key");
    throw e;
  }
  if (!credentials || typeof credentials !== "object") throw invalid(`${field}.serviceaccount_json`, "must be base64 of a service-account JSON key");
  // Only a service account's key: Google's libraries take other credential types ("external_account",
  // "impersonated_service_account") from the same JSON and fetch the URLs those name, which would let a request
  // send the server anywhere; a universe other than Google's would move the API endpoints too.
  const c = credentials as { type?: unknown; client_email?: unknown; private_key?: unknown; universe_domain?: unknown };
  if (c.type !== "service_account" || typeof c.client_email !== "string" || typeof c.private_key !== "string")
    throw invalid(`${field}.serviceaccount_json`, 'must be a service account\'s key (type "service_account" with client_email and private_key)');
  if (c.universe_domain !== undefined && c.universe_domain !== "googleapis.com")
    throw invalid(`${field}.serviceaccount_json`, "universe_domain other than googleapis.com is not accepted");
  const storage = new Storage({ credentials, projectId: String(credentials.project_id ?? "") || undefined });
  return storage.bucket(required(at.bucket, `${field}.bucket`)).file(required(at.path, `${field}.path`));
}

/** A failure of the storage service (unreachable, refused, no such bucket): FAILED_PRECONDITION without credentials in it. */
function storageFailed(kind: string, err: unknown): Error {
  const e = err as { name?: string; message?: string; code?: unknown; $metadata?: { httpStatusCode?: number } };
  const what = e.$metadata?.httpStatusCode
    ? `HTTP ${e.$metadata.httpStatusCode} ${e.name ?? ""}`
    : `${e.name ?? "error"}: ${String(e.message ?? "").slice(0, 200)}`;
  return errors.failedPrecondition("STORE-f41l", `the ${kind} storage refused or failed: ${what}`);
}

/**
 * Writes `chunks` to the location. A local file is written beside its place and renamed when complete; object
 * storage gets a spooled temporary file (S3 and GCS want a length up front), so no export is held in memory.
 */
export async function writeExport(exportDir: string, loc: Location, field: string, chunks: AsyncIterable<string>, policy: TargetAddressPolicy): Promise<void> {
  if (loc.kind === "local") {
    const target = localPath(exportDir, loc.at.path, `${field}.path`);
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.partial`;
    try {
      await pipeline(Readable.from(chunks), createWriteStream(partial));
      await rename(partial, target);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return;
  }
  // Checked before anything is written.
  const s3 = loc.kind === "s3" ? s3Of(loc.at, field, policy) : undefined;
  const gcs = loc.kind === "gcs" ? gcsOf(loc.at, field) : undefined;
  const dir = await mkdtemp(join(tmpdir(), "svc-export-"));
  try {
    const spool = join(dir, "export.json");
    await pipeline(Readable.from(chunks), createWriteStream(spool));
    const size = (await stat(spool)).size;
    try {
      if (s3) {
        await s3.client.send(
          new PutObjectCommand({ Bucket: s3.bucket, Key: s3.key, Body: createReadStream(spool), ContentLength: size, ContentType: "application/json" }),
        );
      } else await gcs!.bucket.upload(spool, { destination: gcs!.name, resumable: false, validation: false, contentType: "application/json" });
    } catch (err) {
      throw storageFailed(loc.kind, err);
    } finally {
      s3?.client.destroy();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The text of an import file at the location. */
export async function readImport(exportDir: string, loc: Location, field: string, policy: TargetAddressPolicy): Promise<string> {
  if (loc.kind === "local") {
    const path = localPath(exportDir, loc.at.path, `${field}.path`);
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw errors.notFound("STORE-n0f1", `${field}.path: no such file in the export directory`);
      throw err;
    }
  }
  if (loc.kind === "s3") {
    const s3 = s3Of(loc.at, field, policy);
    try {
      const out = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: s3.key }));
      return await out.Body!.transformToString("utf8");
    } catch (err) {
      throw storageFailed("s3", err);
    } finally {
      s3.client.destroy();
    }
  }
  const file = gcsOf(loc.at, field);
  try {
    const [data] = await file.download({ validation: false });
    return data.toString("utf8");
  } catch (err) {
    throw storageFailed("gcs", err);
  }
}
