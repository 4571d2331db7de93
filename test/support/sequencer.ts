import { readFileSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * What starts processes, containers or a browser: the files that take minutes rather than seconds.
 * Recognised by what they call, so that a new such file is found without a list to keep.
 */
const HEAVY = /startServerProcess|startOrExit|spawn\(|execFile\(|newPage\(|consolePage\(|podman|chromium/;

/**
 * The heavy files of each project first, then the rest, largest first. A clean clone (CI) has no durations
 * from an earlier run, and vitest's default then orders by size alone: a small file that builds a container
 * image or starts servers for minutes could start last and run alone while the other workers have nothing
 * left, which is what made the run's tail.
 */
export default class HeavyFirstSequencer extends BaseSequencer {
  private readonly heavy = new Map<string, boolean>();

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = await super.sort(files);
    const order = new Map(known.map((f, i) => [f, i]));
    return [...known].sort((a, b) => {
      if (a.project.name !== b.project.name) return order.get(a)! - order.get(b)!;
      const ha = this.isHeavy(a.moduleId);
      const hb = this.isHeavy(b.moduleId);
      if (ha !== hb) return ha ? -1 : 1;
      return order.get(a)! - order.get(b)!;
    });
  }

  private isHeavy(file: string): boolean {
    let h = this.heavy.get(file);
    if (h === undefined) {
      h = HEAVY.test(readFileSync(file, "utf8"));
      this.heavy.set(file, h);
    }
    return h;
  }
}
