import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { errors } from "../../src/errors/errors.js";

/**
 * Every error the server throws carries an ID unique to the place that throws it (src/errors/errors.ts), so a
 * log line or a client report leads to one line of code. This scans the sources, needs no server, and fails
 * when an ID is thrown at two places, when a factory gets its ID from a variable (a wrapper that would hide
 * duplicates), or when a ConnectError is made without a factory. OAuth errors (src/oidc/errors.ts) carry no
 * IDs: their `error` codes are fixed by the specifications.
 */

const root = fileURLToPath(new URL("../../", import.meta.url));
const srcDir = join(root, "src");
const ERRORS_MODULE = "src/errors/errors.ts";
const ID = /^[A-Z][A-Z0-9]*-[A-Za-z0-9]+$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * The text with every comment blanked out (same length, newlines kept), so that commented-out code and examples
 * in doc comments do not count. Strings, template literals (with nested `${}`) and regular expression literals
 * are skipped over, so `//` inside them is not taken for a comment.
 */
function withoutComments(text: string): string {
  const out = text.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  // how many braces are open inside each `${` of the templates we are in
  const templates: number[] = [];
  let last = ""; // the last significant character of code, to tell a regular expression from a division
  let i = 0;
  const skipQuoted = (quote: string) => {
    for (i++; i < text.length && text[i] !== quote && text[i] !== "\n"; i++) if (text[i] === "\\") i++;
    i++;
  };
  // from inside a template literal: to its end, or into the code of its next `${`
  const skipTemplate = () => {
    for (; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === "`") return void i++;
      else if (text[i] === "$" && text[i + 1] === "{") {
        templates.push(0);
        i += 2;
        return;
      }
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      blank(i, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      blank(i, end < 0 ? text.length : end + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === '"' || c === "'") {
      skipQuoted(c);
      last = c;
    } else if (c === "`") {
      i++;
      skipTemplate();
      last = "`";
    } else if (
      c === "/" &&
      (last === "" || "(,=:[!&|?{};+-*%<>~^".includes(last) || /\b(return|typeof|case|of|in)$/.test(text.slice(Math.max(0, i - 7), i).trimEnd()))
    ) {
      // a regular expression literal
      let inClass = false;
      for (i++; i < text.length && text[i] !== "\n"; i++) {
        if (text[i] === "\\") i++;
        else if (text[i] === "[") inClass = true;
        else if (text[i] === "]") inClass = false;
        else if (text[i] === "/" && !inClass) break;
      }
      i++;
      last = "/x"; // a value: a following `/` divides
    } else {
      if (templates.length && c === "{") templates[templates.length - 1]!++;
      if (templates.length && c === "}") {
        if (templates[templates.length - 1] === 0) {
          templates.pop();
          i++;
          skipTemplate();
          last = "`";
          continue;
        }
        templates[templates.length - 1]!--;
      }
      if (!/\s/.test(c)) last = /[\w$)\]]/.test(c) ? "a" : c;
      i++;
    }
  }
  return out.join("");
}

interface Site {
  file: string;
  line: number;
  factory: string;
  /** The literal ID, or undefined when the first argument is not a plain string literal. */
  id: string | undefined;
  argument: string;
}

const factories = Object.keys(errors);
const FACTORY_CALL = new RegExp(`\\berrors\\s*\\.\\s*(${factories.join("|")})\\s*\\(\\s*`, "g");

/** Every call of an error factory in a file, with the literal ID it passes. */
function factoryCalls(file: string, text: string): Site[] {
  const code = withoutComments(text);
  const sites: Site[] = [];
  for (const m of code.matchAll(FACTORY_CALL)) {
    const start = m.index + m[0].length;
    const literal = /^(["'])((?:\\.|(?!\1)[^\\\n])*)\1\s*[,)]|^`([^`$\\]*)`\s*[,)]/.exec(code.slice(start));
    const id = literal ? (literal[2] ?? literal[3]) : undefined;
    const argument = literal ? literal[0].replace(/\s*[,)]$/, "") : code.slice(start, start + 60).split(/[,)\n]/)[0]!;
    sites.push({ file, line: code.slice(0, m.index).split("\n").length, factory: m[1]!, id, argument });
  }
  return sites;
}

/** IDs thrown at more than one place, each with its places. */
function duplicateIds(sites: Site[]): Map<string, Site[]> {
  const byId = new Map<string, Site[]>();
  for (const s of sites) if (s.id !== undefined) byId.set(s.id, [...(byId.get(s.id) ?? []), s]);
  return new Map([...byId].filter(([, at]) => at.length > 1));
}

const files = sourceFiles(srcDir).map((path) => ({ file: relative(root, path).split("\\").join("/"), text: readFileSync(path, "utf8") }));
const sites = files.flatMap(({ file, text }) => factoryCalls(file, text));
const where = (s: Site) => `${s.file}:${s.line}`;

describe("error IDs", () => {
  it("the scan finds the factory calls (and not those in comments)", () => {
    expect(factories).toContain("invalidArgument");
    expect(sites.length).toBeGreaterThan(100);
    const sample =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the sample is source text whose template literal holds a ${...} on purpose
      'const a = "// not a comment"; // errors.notFound("X-0001", "commented out")\n/* errors.internal("X-0002", "") */ throw errors.internal(\n  "X-0003",\n  `m ${`n`} /* */`);\nconst r = /"/; errors.aborted(\'X-0004\', "");';
    expect(factoryCalls("sample.ts", sample).map((s) => [s.id, s.line])).toEqual([
      ["X-0003", 2],
      ["X-0004", 5],
    ]);
  });

  it("are unique to the place that throws them", () => {
    const duplicates = [...duplicateIds(sites)].map(([id, at]) => `${id} at ${at.map(where).join(", ")}`);
    expect(duplicates, `error IDs thrown at more than one place:\n${duplicates.join("\n")}`).toEqual([]);
  });

  it("are string literals of the form AREA-x1y2 at the throwing call", () => {
    const bad = sites.filter((s) => s.id === undefined || !ID.test(s.id)).map((s) => `${where(s)}: errors.${s.factory}(${s.argument}, ...)`);
    expect(bad, `error factories must get a literal ID where they are called:\n${bad.join("\n")}`).toEqual([]);
  });

  it("come only from the factories: no ConnectError is made elsewhere", () => {
    const direct = files
      .filter(({ file }) => file !== ERRORS_MODULE)
      .flatMap(({ file, text }) =>
        [...withoutComments(text).matchAll(/\bnew\s+ConnectError\s*\(/g)].map((m) => `${file}:${text.slice(0, m.index).split("\n").length}`),
      );
    expect(direct, `use a factory of ${ERRORS_MODULE}, which adds the ID:\n${direct.join("\n")}`).toEqual([]);
  });
});
