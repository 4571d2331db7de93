import { createReadStream, createWriteStream } from "node:fs";
import { chmod, mkdir, mkdtemp, open, readFile, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { S3Client } from "@aws-sdk/client-s3";
import type { TargetAddressPolicy } from "../domain/target-addresses.js";
import { errors } from "../errors/errors.js";
import { guardedAgents, OutboundFailure } from "../net/outbound-http.js";

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
    throw invalid(field, "must name a file inside the instance's export directory (<SVC_EXPORT_DIR>/<instance ID>)");
  return full;
}

/**
 * Exports hold password hashes and TOTP secrets: only the server's user reads them, like the master key file.
 * The modes are set explicitly after creation, so the process's umask changes nothing.
 */
const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/**
 * An instance's own directory for local exports and imports, `<SVC_EXPORT_DIR>/<instance ID>`: a path an instance's
 * administrator names never reaches another instance's files (security review #17).
 */
export function instanceExportDir(exportDir: string, instanceId: string): string {
  // Instance IDs are decimal (ids.ts); anything else must not become a path.
  if (!/^[0-9A-Za-z_-]+$/.test(instanceId)) throw errors.internal("STORE-1nst", "an instance ID that is no directory name");
  return join(exportDir, instanceId);
}

/** Makes `dir` (inside `instanceDir`) with its parents; the instance's directory and every one made here are 0700. */
async function makePrivateDirs(instanceDir: string, dir: string): Promise<void> {
  // Created no wider than 0700 (the umask can only narrow it), then set to exactly 0700.
  const first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  const made: string[] = [];
  if (first) for (let d = dir; d.startsWith(first); d = dirname(d)) made.push(d);
  for (const d of new Set([instanceDir, ...made])) await chmod(d, PRIVATE_DIR);
}

/** Writes the chunks to a new file of mode 0600 at `target`, complete or not at all (written beside it, then renamed). */
async function writePrivateFile(target: string, chunks: AsyncIterable<string>): Promise<void> {
  const partial = `${target}.partial`;
  try {
    // A partial file left by a crash keeps its old mode when opened again: chmod before any byte is written.
    const file = await open(partial, "w", PRIVATE_FILE);
    await file.chmod(PRIVATE_FILE).catch(async (err) => {
      await file.close();
      throw err;
    });
    await pipeline(Readable.from(chunks), file.createWriteStream());
    await rename(partial, target);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

/**
 * The S3 client of a request. Its endpoint is the caller's choice, so where it connects obeys SVC_TARGET_DENY as
 * execution targets do (the cloud metadata address, or a database beside the server, is never reached through
 * an export): an address written in the endpoint here, a name after DNS in the agents of src/net.
 */
async function s3Of(at: S3Location, field: string, policy: TargetAddressPolicy): Promise<{ client: S3Client; bucket: string; key: string }> {
  const endpoint = required(at.endpoint, `${field}.endpoint`);
  const url = /^https?:\/\//.test(endpoint) ? endpoint : `${at.ssl ? "https" : "http"}://${endpoint}`;
  if (!URL.canParse(url)) throw invalid(`${field}.endpoint`, "must be host:port or a URL");
  const problem = policy.urlProblem(url);
  if (problem) throw invalid(`${field}.endpoint`, problem);
  // The SDKs are imported at their first use: loaded at start they cost every server about 35 MB and 0.4 s
  // (docs/drafts/build.md, "Idle memory").
  const { S3Client } = await import("@aws-sdk/client-s3");
  const client = new S3Client({
    requestHandler: guardedAgents(policy),
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

async function gcsOf(at: GcsLocation, field: string) {
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
  const { Storage } = await import("@google-cloud/storage");
  const storage = new Storage({ credentials, projectId: String(credentials.project_id ?? "") || undefined });
  return storage.bucket(required(at.bucket, `${field}.bucket`)).file(required(at.path, `${field}.path`));
}

/** A failure of the storage service (unreachable, refused, no such bucket): FAILED_PRECONDITION without credentials in it. */
function storageFailed(kind: string, err: unknown): Error {
  // Refused by SVC_TARGET_DENY after DNS: said whole, with the way out, rather than cut like a service's error.
  if (err instanceof OutboundFailure) return errors.failedPrecondition("STORE-d3ny", `the ${kind} storage endpoint ${err.message}`);
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
export async function writeExport(
  exportDir: string,
  instanceId: string,
  loc: Location,
  field: string,
  chunks: AsyncIterable<string>,
  policy: TargetAddressPolicy,
): Promise<void> {
  if (loc.kind === "local") {
    const instanceDir = instanceExportDir(exportDir, instanceId);
    const target = localPath(instanceDir, loc.at.path, `${field}.path`);
    await makePrivateDirs(instanceDir, dirname(target));
    await writePrivateFile(target, chunks);
    return;
  }
  // Checked before anything is written.
  const s3 = loc.kind === "s3" ? await s3Of(loc.at, field, policy) : undefined;
  const gcs = loc.kind === "gcs" ? await gcsOf(loc.at, field) : undefined;
  const dir = await mkdtemp(join(tmpdir(), "svc-export-"));
  try {
    const spool = join(dir, "export.json");
    await pipeline(Readable.from(chunks), createWriteStream(spool));
    const size = (await stat(spool)).size;
    try {
      if (s3) {
        const { PutObjectCommand } = await import("@aws-sdk/client-s3");
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

/** The text of an import file at the location (a local file: in the instance's own export directory). */
export async function readImport(exportDir: string, instanceId: string, loc: Location, field: string, policy: TargetAddressPolicy): Promise<string> {
  if (loc.kind === "local") {
    const path = localPath(instanceExportDir(exportDir, instanceId), loc.at.path, `${field}.path`);
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        throw errors.notFound("STORE-n0f1", `${field}.path: no such file in the instance's export directory`);
      throw err;
    }
  }
  if (loc.kind === "s3") {
    const s3 = await s3Of(loc.at, field, policy);
    const { GetObjectCommand } = await import("@aws-sdk/client-s3");
    try {
      const out = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: s3.key }));
      return await out.Body!.transformToString("utf8");
    } catch (err) {
      throw storageFailed("s3", err);
    } finally {
      s3.client.destroy();
    }
  }
  const file = await gcsOf(loc.at, field);
  try {
    const [data] = await file.download({ validation: false });
    return data.toString("utf8");
  } catch (err) {
    throw storageFailed("gcs", err);
  }
}
