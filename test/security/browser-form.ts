import http from "node:http";

/**
 * A browser-like client of the login UI for the security tests: keeps its cookies, sends the page's CSRF token and
 * its own Origin, and can come from another loopback address (`from`: 127.0.0.2 ...), as another client would.
 */
export class FormClient {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly base: string,
    private readonly from?: string,
    /** Sent with every request, as a browser's language (`{ "accept-language": "de" }`). */
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  request(method: string, path: string, form?: Record<string, string>): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const headers: Record<string, string> = { ...this.extraHeaders, origin: this.base };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    if (body !== undefined) headers["content-type"] = "application/x-www-form-urlencoded";
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.base}${path}`, { method, headers, ...(this.from ? { localAddress: this.from } : {}) }, (res) => {
        for (const c of [res.headers["set-cookie"] ?? []].flat()) {
          const [pair] = c.split(";");
          const eq = pair!.indexOf("=");
          this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1));
        }
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  /** A form of the login UI: the page first (for its CSRF token), then the post. */
  async post(path: string, fields: Record<string, string>, pagePath = "/ui/login") {
    const page = await this.request("GET", pagePath);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
    return this.request("POST", path, { ...fields, csrf });
  }

  /** A password sign-in in the login UI: its status (200 signed in, 401 refused, 429 too many failures). */
  async signIn(loginName: string, password: string): Promise<number> {
    return (await this.post("/ui/login/password", { loginName, password })).status;
  }
}
