import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Google Cloud Storage JSON-API test server: no GCS emulator is published on npm, so this implements just
 * the calls `@google-cloud/storage` makes for a simple (multipart) upload and a download, the client pointed
 * at it through STORAGE_EMULATOR_HOST: POST /upload/storage/v1/b/<bucket>/o?uploadType=multipart&name=<name>
 * (multipart/related: the JSON metadata, then the content), GET [/storage/v1]/b/<bucket>/o/<name>[?alt=media].
 * Unknown buckets answer 404, as GCS does. It records the Authorization headers it saw.
 */
export class GcsTestServer {
  readonly objects = new Map<string, Buffer>();
  readonly buckets = new Set<string>();
  readonly requests: { method: string; url: string; authorization?: string }[] = [];
  private server?: http.Server;
  url = "";

  constructor(buckets: string[]) {
    for (const b of buckets) this.buckets.add(b);
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.handle(req, Buffer.concat(chunks), res));
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private handle(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) {
    const url = new URL(req.url ?? "/", "http://gcs");
    this.requests.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization });
    const json = (status: number, value: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    const notFound = () => json(404, { error: { code: 404, message: "The specified bucket does not exist." } });
    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
    if (req.method === "POST" && upload) {
      const bucket = decodeURIComponent(upload[1]!);
      if (!this.buckets.has(bucket)) return notFound();
      const boundary = /boundary="?([^";]+)"?/.exec(req.headers["content-type"] ?? "")?.[1];
      let content = body;
      let name = url.searchParams.get("name") ?? "";
      if (boundary) {
        // multipart/related: part 1 the metadata (JSON), part 2 the object's bytes.
        const parts = body.toString("latin1").split(`--${boundary}`).slice(1, -1);
        const partBody = (p: string) => p.slice(p.indexOf("\r\n\r\n") + 4, p.length - 2);
        const meta = JSON.parse(partBody(parts[0]!)) as { name?: string };
        name = meta.name || name;
        content = Buffer.from(partBody(parts[1]!), "latin1");
      }
      this.objects.set(`${bucket}/${name}`, content);
      return json(200, { kind: "storage#object", bucket, name, size: String(content.length), generation: "1" });
    }
    // With STORAGE_EMULATOR_HOST the client reads objects at /b/... (without /storage/v1).
    const get = /^(?:\/storage\/v1)?\/b\/([^/]+)\/o\/(.+)$/.exec(url.pathname);
    if (req.method === "GET" && get) {
      const bucket = decodeURIComponent(get[1]!);
      const name = decodeURIComponent(get[2]!);
      const data = this.objects.get(`${bucket}/${name}`);
      if (!this.buckets.has(bucket) || !data) return json(404, { error: { code: 404, message: "No such object" } });
      if (url.searchParams.get("alt") === "media") return res.writeHead(200, { "content-type": "application/octet-stream" }).end(data);
      return json(200, { kind: "storage#object", bucket, name, size: String(data.length), generation: "1" });
    }
    return json(400, { error: { code: 400, message: `not implemented by the test server: ${req.method} ${url.pathname}` } });
  }
}
