import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { variable } from "../../src/config/variables.js";
import { testDb } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";

/**
 * The deployment files, read as a cluster or compose would: deploy/kubernetes rendered by `kubectl kustomize`
 * (base and overlays/dev), compose.yaml and the Containerfile parsed. What matters: probes on the right paths and
 * port, a grace period that fits the shutdown, the migration Job's command, secrets only by reference, the
 * PodDisruptionBudget, a non-root read-only container, and that all of them agree with the image. Static files:
 * run once, in the embedded project; the image's health check script alone runs, against a local server. Without kubectl (Debian's kubernetes-client) the rendering is skipped with
 * the reason printed.
 */

const root = join(import.meta.dirname, "..", "..");
const kube = join(root, "deploy", "kubernetes");

/** A rendered manifest or the compose file: checked field by field. */
type Obj = any;

function kubectl(): string | undefined {
  try {
    execFileSync("kubectl", ["kustomize", "--help"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "kubectl is not installed (Debian package 'kubernetes-client'): the kustomize rendering is not checked";
  }
}
const noKubectl = testDb === "embedded" ? kubectl() : "runs once, in the embedded project";
if (noKubectl && testDb === "embedded") console.log(`deploy test: ${noKubectl}`);

function render(dir: string): Obj[] {
  const out = execFileSync("kubectl", ["kustomize", join(kube, dir)], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return parseAllDocuments(out)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

const one = (objs: Obj[], kind: string, pred: (o: Obj) => boolean = () => true): Obj => {
  const found = objs.filter((o) => o.kind === kind && pred(o));
  expect(found, `one ${kind}`).toHaveLength(1);
  return found[0];
};

/** The Containerfile's facts the manifests must agree with. */
const containerfile = readFileSync(join(root, "Containerfile"), "utf8");
const imageUid = Number(containerfile.match(/^ARG SVC_UID=(\d+)$/m)?.[1]);
const imageEnv = (name: string) => containerfile.match(new RegExp(`\\b${name}=(\\S+)`))?.[1];
const entrypoint = JSON.parse(containerfile.match(/^ENTRYPOINT (\[.*\])$/m)?.[1] ?? "null") as string[] | null;

const envOf = (c: Obj, name: string) => (c.env ?? []).find((e: Obj) => e.name === name);
const secretRef = (c: Obj, name: string) => envOf(c, name)?.valueFrom?.secretKeyRef;
const podOf = (o: Obj) => o.spec.template.spec;

/** The settings a container gets from its ConfigMaps (envFrom) and literal env values. */
function settingsOf(objs: Obj[], c: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (!from.configMapRef) continue;
    Object.assign(out, one(objs, "ConfigMap", (m) => m.metadata.name === from.configMapRef.name).data);
  }
  for (const e of c.env ?? []) if (typeof e.value === "string") out[e.name] = e.value;
  return out;
}

function checkServer(objs: Obj[]) {
  const deployment = one(objs, "Deployment", (d) => d.metadata.name === "svc-iam");
  const pod = podOf(deployment);
  const c = pod.containers.find((x: Obj) => x.name === "svc-iam");
  const settings = settingsOf(objs, c);
  return { deployment, pod, c, settings };
}

describe.skipIf(noKubectl !== undefined)("Kubernetes manifests (kubectl kustomize deploy/kubernetes/...)", () => {
  const base = noKubectl ? [] : render("base");
  const dev = noKubectl ? [] : render("overlays/dev");

  it("runs two or more replicas of the placeholder image, whose tag the overlay sets with `images:`", () => {
    const { deployment, c } = checkServer(base);
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    expect(c.image).toBe("svc-iam");
    expect(c.args ?? ["start"]).toEqual(["start"]);
    expect(checkServer(dev).c.image).toBe("localhost/svc-iam:dev");
  });

  it("probes: readiness /readyz, liveness and start-up /healthz, on the container's port 8080 (SVC_PORT)", () => {
    for (const objs of [base, dev]) {
      const { c, settings } = checkServer(objs);
      const port = c.ports.find((p: Obj) => p.name === "http");
      expect(port.containerPort).toBe(Number(settings.SVC_PORT ?? imageEnv("SVC_PORT")));
      const target = (probe: Obj) => (probe.httpGet.port === "http" ? port.containerPort : probe.httpGet.port);
      expect(c.readinessProbe.httpGet.path).toBe("/readyz");
      expect(c.livenessProbe.httpGet.path).toBe("/healthz");
      expect(c.startupProbe.httpGet.path).toBe("/healthz");
      for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        expect(target(p)).toBe(8080);
        expect(p.httpGet.scheme ?? "HTTP").toBe(settings.SVC_TLS_CERT ? "HTTPS" : "HTTP");
      }
      // up to minutes of set-up and migrations at a start before liveness may restart the pod
      expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(120);
    }
  });

  it("termination: preStop lets the endpoints drain, and the grace period exceeds it plus SVC_SHUTDOWN_GRACE_MS", () => {
    for (const objs of [base, dev]) {
      const { pod, c, settings } = checkServer(objs);
      const command = c.lifecycle.preStop.exec.command as string[];
      expect(command[0]).toBe("sleep");
      const preStopMs = Number(command[1]) * 1000;
      expect(preStopMs).toBeGreaterThanOrEqual(3000);
      const shutdownMs = Number(settings.SVC_SHUTDOWN_GRACE_MS ?? variable("SVC_SHUTDOWN_GRACE_MS")?.default);
      expect(shutdownMs).toBeGreaterThan(0);
      // room beyond both for closing the database pool and the listener
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(preStopMs + shutdownMs + 5000);
    }
  });

  it("the migration Job runs `migrate` with the server's image, settings and secrets", () => {
    for (const objs of [base, dev]) {
      const { c } = checkServer(objs);
      const job = one(objs, "Job");
      const m = podOf(job).containers[0];
      expect([...(m.command ?? entrypoint), ...(m.args ?? [])]).toEqual([...entrypoint!, "migrate"]);
      expect(m.image).toBe(c.image);
      expect(["Never", "OnFailure"]).toContain(podOf(job).restartPolicy);
      expect(m.envFrom).toEqual(c.envFrom);
      for (const key of ["DATABASE_URL", "SVC_MASTERKEY"]) expect(secretRef(m, key)).toEqual(secretRef(c, key));
    }
  });

  it("DATABASE_URL and SVC_MASTERKEY come from a Secret by reference; the base holds no Secret at all", () => {
    for (const objs of [base, dev]) {
      const { c, settings } = checkServer(objs);
      for (const key of ["DATABASE_URL", "SVC_MASTERKEY"]) {
        expect(secretRef(c, key), key).toMatchObject({ key });
        expect(secretRef(c, key).optional ?? false).toBe(false);
        expect(settings[key], `${key} as a plain value`).toBeUndefined();
      }
      for (const m of objs.filter((o) => o.kind === "ConfigMap")) {
        for (const key of Object.keys(m.data)) expect(key).not.toMatch(/MASTERKEY|PASSWORD|DATABASE_URL/);
      }
    }
    expect(base.filter((o) => o.kind === "Secret")).toEqual([]);
    // the development overlay generates it, and the references follow its generated name
    const { c } = checkServer(dev);
    const secret = one(dev, "Secret", (s) => s.metadata.name === secretRef(c, "SVC_MASTERKEY").name);
    const data = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));
    expect(Buffer.byteLength(data.SVC_MASTERKEY!)).toBe(32);
    const postgres = one(dev, "StatefulSet");
    const pgService = one(dev, "Service", (s) => s.metadata.name === postgres.spec.serviceName);
    const url = new URL(data.DATABASE_URL!);
    expect(url.hostname).toBe(pgService.metadata.name);
    expect(url.password).toBe(data.POSTGRES_PASSWORD);
    expect(secretRef(podOf(postgres).containers[0], "POSTGRES_PASSWORD").name).toBe(secret.metadata.name);
  });

  it("every setting in the ConfigMaps is a variable the server knows, the external name is set, proxies are trusted", () => {
    for (const objs of [base, dev]) {
      const { settings } = checkServer(objs);
      for (const key of Object.keys(settings)) expect(variable(key), key).toBeDefined();
      expect(settings.SVC_EXTERNAL_DOMAIN).toBeTruthy();
    }
    const { settings } = checkServer(base);
    expect(settings.SVC_EXTERNAL_SECURE).toBe("true");
    expect(settings.SVC_EXTERNAL_PORT).toBe("443");
    expect(settings.SVC_TRUSTED_PROXIES).toMatch(/\d+\.\d+\.\d+\.\d+\/\d+/);
  });

  it("a PodDisruptionBudget keeps one replica through a drain; the Service reaches the same pods", () => {
    const { deployment } = checkServer(base);
    const labels = deployment.spec.template.metadata.labels;
    const pdb = one(base, "PodDisruptionBudget");
    expect(pdb.spec.minAvailable).toBe(1);
    expect(deployment.spec.replicas).toBeGreaterThan(pdb.spec.minAvailable);
    expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
    expect(deployment.spec.selector.matchLabels).toEqual(pdb.spec.selector.matchLabels);
    const service = one(base, "Service", (s) => s.metadata.name === "svc-iam");
    expect(labels).toMatchObject(service.spec.selector);
    expect(service.spec.ports).toEqual([expect.objectContaining({ port: 8080, targetPort: "http" })]);
  });

  it("runs as the image's non-root user on a read-only root file system, writing only to its volumes", () => {
    for (const objs of [base, dev]) {
      for (const workload of [checkServer(objs).deployment, one(objs, "Job")]) {
        const pod = podOf(workload);
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: imageUid, runAsGroup: imageUid });
        expect(pod.automountServiceAccountToken).toBe(false);
        for (const c of pod.containers) {
          expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
          const mounts = (c.volumeMounts as Obj[]).map((m) => m.mountPath);
          expect(mounts).toEqual(expect.arrayContaining(["/tmp", imageEnv("SVC_DATA_DIR")]));
          expect(c.resources.requests.memory).toBeTruthy();
          expect(c.resources.limits.memory).toBeTruthy();
        }
      }
    }
  });

  it("the base has no PostgreSQL; the development overlay adds one StatefulSet with a volume", () => {
    expect(base.filter((o) => o.kind === "StatefulSet")).toEqual([]);
    const postgres = one(dev, "StatefulSet");
    expect(postgres.spec.replicas).toBe(1);
    expect(postgres.spec.volumeClaimTemplates).toHaveLength(1);
    expect(podOf(postgres).securityContext.runAsNonRoot).toBe(true);
  });
});

describe.skipIf(testDb !== "embedded")("compose.yaml and the Containerfile", () => {
  const compose = parse(readFileSync(join(root, "compose.yaml"), "utf8")) as Obj;
  const svc = compose.services.svc;
  const pg = compose.services.postgres;

  it("the Containerfile states what the manifests rely on", () => {
    expect(imageUid).toBeGreaterThan(0);
    expect(imageEnv("SVC_PORT")).toBe("8080");
    expect(imageEnv("SVC_DATA_DIR")).toBe("/var/lib/svc");
    expect(entrypoint).toEqual(["/app/bin/svc.js"]);
  });

  it("the Containerfile is multi-stage from a base ARG, runs the compiled server as a non-root user with the data directory a volume and a health check", () => {
    expect(containerfile).toMatch(/^ARG BASE=\S+/m);
    expect(containerfile.match(/^FROM \$\{BASE\}/gm)).toHaveLength(2);
    expect(containerfile).toMatch(/^RUN npm run build\b/m);
    expect(containerfile).toMatch(/^USER \$\{SVC_UID\}:\$\{SVC_UID\}$/m);
    expect(imageUid).not.toBe(0);
    expect(containerfile).toMatch(/^VOLUME \["\/var\/lib\/svc"\]$/m);
    expect(containerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "\/app\/healthcheck\.mjs"\]$/m);
    expect(containerfile).toMatch(/^COPY --from=build \/src\/dist \.\/dist$/m);
    expect(containerfile).toMatch(/^COPY --from=build \/src\/prisma \.\/prisma$/m);
  });

  it("compose runs the image on the PostgreSQL beside it, once that is healthy, with the master key required", () => {
    expect(svc.build).toMatchObject({ context: ".", dockerfile: "Containerfile" });
    expect(svc.depends_on.postgres.condition).toBe("service_healthy");
    expect(pg.healthcheck.test).toEqual(expect.arrayContaining(["pg_isready"]));
    expect(pg.volumes.some((v: string) => v.endsWith(":/var/lib/postgresql"))).toBe(true);
    const url = new URL(svc.environment.DATABASE_URL.replace(/\$\{POSTGRES_PASSWORD\}/, "x"));
    expect(url.hostname).toBe("postgres");
    expect(url.pathname).toBe(`/${pg.environment.POSTGRES_DB}`);
    expect(url.username).toBe(pg.environment.POSTGRES_USER);
    // unset, compose refuses to start rather than run without them
    expect(svc.environment.SVC_MASTERKEY).toMatch(/^\$\{SVC_MASTERKEY:\?/);
    expect(pg.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    for (const key of Object.keys(svc.environment)) expect(variable(key), key).toBeDefined();
  });

  it("compose keeps the data directory in a volume, gives SIGTERM more time than the shutdown grace, and checks health", () => {
    expect(svc.volumes).toContain(`svc-data:${imageEnv("SVC_DATA_DIR")}`);
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(["svc-data", "postgres-data"]));
    const graceS = Number(String(svc.stop_grace_period).replace(/s$/, ""));
    expect(graceS * 1000).toBeGreaterThan(Number(svc.environment.SVC_SHUTDOWN_GRACE_MS));
    expect(svc.ports).toEqual([expect.stringMatching(/:8080$/)]);
    expect(svc.healthcheck.test).toEqual(["CMD", "node", "/app/healthcheck.mjs"]);
    expect(svc.read_only).toBe(true);
    expect(svc.tmpfs).toContain("/tmp");
  });
});

/** `node deploy/container/healthcheck.mjs` with only env (and PATH): its exit code and stderr. Asynchronous: the server runs in this process. */
function healthcheck(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [join(root, "deploy", "container", "healthcheck.mjs")],
      { env: { PATH: process.env.PATH, ...env }, timeout: 15_000 },
      (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

describe.skipIf(testDb !== "embedded")("the image's health check (deploy/container/healthcheck.mjs) against a TLS server", () => {
  let t: TestServer;
  let dir: string;
  beforeAll(async () => {
    // a self-signed certificate: the check does not verify it
    dir = mkdtempSync(join(tmpdir(), "svc-healthcheck-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
      ],
      {
        cwd: dir,
        stdio: "ignore",
      },
    );
    t = await startTestServer({ SVC_TLS_CERT: join(dir, "cert.pem"), SVC_TLS_KEY: join(dir, "key.pem") });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("TLS and the port in the environment, as the image's ENV and `-e` give them: healthy", async () => {
    const r = await healthcheck({ SVC_PORT: String(t.port), SVC_HOST: "0.0.0.0", SVC_TLS_CERT: "/anything" });
    expect(r, r.stderr).toMatchObject({ code: 0 });
  });

  it("TLS and the port set in a --config file only: plain http to the image's port fails; SVC_HEALTHCHECK_URL makes it healthy", async () => {
    // what the check sees when the YAML file set both: the image's SVC_PORT and no SVC_TLS_CERT
    const free = await healthcheck({ SVC_PORT: "1", SVC_HOST: "0.0.0.0" });
    expect(free.code).toBe(1);
    expect(free.stderr).toMatch(/health check: .*ECONNREFUSED/);
    const plain = await healthcheck({ SVC_PORT: String(t.port), SVC_HOST: "0.0.0.0" });
    expect(plain.code).toBe(1);
    const url = await healthcheck({ SVC_PORT: "1", SVC_HOST: "0.0.0.0", SVC_HEALTHCHECK_URL: `https://127.0.0.1:${t.port}/readyz` });
    expect(url, url.stderr).toMatchObject({ code: 0 });
  });

  it("SVC_HEALTHCHECK_URL: a status other than 200 and a URL that is not http(s) are unhealthy", async () => {
    expect((await healthcheck({ SVC_HEALTHCHECK_URL: `https://127.0.0.1:${t.port}/no-such-page` })).code).toBe(1);
    const bad = await healthcheck({ SVC_HEALTHCHECK_URL: `127.0.0.1:${t.port}/readyz` });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/SVC_HEALTHCHECK_URL must be an http or https URL/);
  });

  it("the Containerfile's comment and the README's container section name SVC_HEALTHCHECK_URL", () => {
    expect(containerfile).toMatch(/^#.*SVC_HEALTHCHECK_URL=https:\/\/127\.0\.0\.1:\d+\/readyz/m);
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Running it in a container"), readme.indexOf("## Development"));
    expect(section).toContain("SVC_HEALTHCHECK_URL");
  });
});
