import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/storage/paths.js";
import { addHuman, newPage, signInOnPage, startRedirectCatcher } from "../oidc/rp.js";
import { launchChromium } from "../support/browser.js";
import { rest } from "../support/clients.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The README's first hour (issue 29): its commands are the files in examples/, shown whole after a marker
 * `<!-- example: examples/<file> -->`, and run here against a real server: the project and OIDC application
 * (first-hour.sh), a user's sign-in through openid-client (sign-in.mjs) and through curl (sign-in.sh), in
 * Chromium at the login UI, and the API called with the user's access token over REST, Connect and gRPC
 * (call-api.sh, gRPC with buf curl).
 */

const examplesDir = join(projectRoot, "examples");
const buf = join(projectRoot, "node_modules/@bufbuild/buf-linux-x64/bin/buf");

interface Run {
  child: ChildProcess;
  /** Resolves with the first line of stdout that matches. */
  line(pattern: RegExp): Promise<string>;
  /** Resolves when the process exits: its code and everything it wrote. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function run(command: string, file: string, env: Record<string, string>): Run {
  const child = spawn(command, [join(examplesDir, file)], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiting: { pattern: RegExp; resolve: (l: string) => void }[] = [];
  const check = () => {
    for (const w of [...waiting]) {
      const hit = stdout.split("\n").find((l) => w.pattern.test(l));
      if (hit) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(hit);
      }
    }
  };
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString();
    check();
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  const line = (pattern: RegExp) =>
    Promise.race([
      new Promise<string>((resolve) => {
        waiting.push({ pattern, resolve });
        check();
      }),
      done.then(({ code }) => {
        throw new Error(`${file} exited with ${code} before printing ${pattern}:\n${stdout}\n${stderr}`);
      }),
    ]);
  return { child, line, done };
}

/** `NAME=value` lines of a script's output. */
const assignments = (out: string) =>
  Object.fromEntries(out.split("\n").flatMap((l) => (/^[A-Z_]+=/.test(l) ? [[l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]] : [])));

describe("the README's first hour, run from examples/", () => {
  let t: TestServer;
  let browser: Browser;
  let catcher: Awaited<ReturnType<typeof startRedirectCatcher>>;
  let userId: string;
  let app: { CLIENT_ID: string; CLIENT_SECRET: string };
  let redirectUri: string;
  const password = "Examples-Pass1!";

  beforeAll(async () => {
    [t, browser, catcher] = await Promise.all([startTestServer(), launchChromium(), startRedirectCatcher()]);
    redirectUri = `${catcher.origin}/callback`;
    userId = await addHuman(t, "reader", password);
  });
  afterAll(async () => {
    await browser?.close();
    await catcher?.close();
    await t?.close();
  });

  it("shows every example in the README exactly as the file is", () => {
    const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
    const shown = [...readme.matchAll(/<!-- example: examples\/(\S+) -->\n+```[a-z]*\n([\s\S]*?)```\n/g)].map((m) => ({ file: m[1]!, text: m[2]! }));
    const files = readdirSync(examplesDir).sort();
    expect(shown.map((s) => s.file).sort()).toEqual(files);
    for (const s of shown) expect(s.text, `README's block of examples/${s.file}`).toBe(readFileSync(join(examplesDir, s.file), "utf8"));
  });

  /** Opens the example's authorization URL in a new browser, signs the user in and hands the callback URL back to it. */
  async function signIn(r: Run) {
    const url = await r.line(/^https?:\/\/\S+\/oauth\/v2\/authorize\?/);
    const { ctx, page } = await newPage(browser);
    try {
      const callbacks = () => catcher.received.filter((r) => r.url.startsWith("/callback?"));
      const before = callbacks().length;
      await page.goto(url);
      await signInOnPage(page, "reader", password);
      await expect.poll(() => callbacks().length, { timeout: 10_000 }).toBeGreaterThan(before);
      const callback = `${catcher.origin}${callbacks().at(-1)!.url}`;
      expect(new URL(callback).searchParams.get("code"), callback).toBeTruthy();
      r.child.stdin!.end(`${callback}\n`);
    } finally {
      await ctx.close();
    }
    const out = await r.done;
    expect(out.code, out.stderr).toBe(0);
    return out.stdout;
  }

  let accessToken = "";

  it("first-hour.sh: a project and an OIDC application with the admin's PAT, and its client's credentials", async () => {
    const out = await run("bash", "first-hour.sh", { BASE_URL: t.url, PAT: t.adminPat, REDIRECT_URI: redirectUri }).done;
    expect(out.code, out.stderr).toBe(0);
    const printed = assignments(out.stdout);
    expect(printed.CLIENT_ID).toMatch(/^\d+@my-project$/);
    expect(printed.CLIENT_SECRET).toMatch(/^\S{20,}$/);
    app = printed as typeof app;
    const project = await rest(t.url, "GET", `/resources/v3alpha/projects/${printed.PROJECT_ID}`, { token: t.adminPat });
    expect(project.status).toBe(200);
  });

  it("sign-in.mjs: openid-client signs the user in at the login UI and prints the user's claims", async () => {
    const r = run(process.execPath, "sign-in.mjs", { ISSUER: t.url, CLIENT_ID: app.CLIENT_ID, CLIENT_SECRET: app.CLIENT_SECRET, REDIRECT_URI: redirectUri });
    const stdout = await signIn(r);
    const printed = JSON.parse(stdout.slice(stdout.indexOf("\n{") + 1)) as { userinfo: Record<string, unknown>; access_token: string };
    expect(printed.userinfo).toMatchObject({ sub: userId, preferred_username: "reader", email: "reader@example.com", given_name: "Reader" });
    accessToken = printed.access_token;
  });

  it("sign-in.sh: the same with curl only", async () => {
    const r = run("bash", "sign-in.sh", { BASE_URL: t.url, CLIENT_ID: app.CLIENT_ID, CLIENT_SECRET: app.CLIENT_SECRET, REDIRECT_URI: redirectUri });
    const stdout = await signIn(r);
    const userinfo = JSON.parse(stdout.split("\n").find((l) => l.startsWith("{"))!) as Record<string, unknown>;
    expect(userinfo).toMatchObject({ sub: userId, preferred_username: "reader", email: "reader@example.com" });
    expect(assignments(stdout).ACCESS_TOKEN).toBeTruthy();
  });

  it("call-api.sh: the user's access token calls the API over REST, Connect and gRPC (buf curl)", async () => {
    expect(existsSync(buf), "buf of @bufbuild/buf-linux-x64").toBe(true);
    const out = await run("bash", "call-api.sh", { BASE_URL: t.url, ACCESS_TOKEN: accessToken, BUF: buf }).done;
    expect(out.code, out.stderr).toBe(0);
    // REST and Connect print one line each, buf curl the same message indented
    const [restOut, connectOut] = out.stdout.split("\n");
    const grpcOut = out.stdout.split("\n").slice(2).join("\n");
    for (const body of [restOut!, connectOut!, grpcOut]) expect(JSON.parse(body).settings.minLength.value).toBe("8");
    // as the README says: a user without roles may not do more
    expect((await rest(t.url, "POST", "/resources/v3alpha/projects", { token: accessToken, body: { name: "not allowed" } })).status).toBe(403);
  });

  it("a token that is no one's is refused by the same commands", async () => {
    const out = await run("bash", "call-api.sh", { BASE_URL: t.url, ACCESS_TOKEN: "not-a-token", BUF: buf }).done;
    expect(out.code).not.toBe(0);
  });

  it("GET / leads to the admin console (which signs in through the login page)", async () => {
    const r = await rest(t.url, "GET", "/");
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe("/ui/console/");
  });

  it("GET /ui/login/ (a trailing slash) leads to /ui/login with its query", async () => {
    const bare = await rest(t.url, "GET", "/ui/login/");
    expect(bare.status).toBe(302);
    expect(bare.headers.location).toBe("/ui/login");
    const withQuery = await rest(t.url, "GET", "/ui/login/?login_hint=reader&prompt=login");
    expect(withQuery.status).toBe(302);
    expect(withQuery.headers.location).toBe("/ui/login?login_hint=reader&prompt=login");
    const page = await rest(t.url, "GET", withQuery.headers.location!);
    expect(String(page.body)).toContain('value="reader"');
  });
});
