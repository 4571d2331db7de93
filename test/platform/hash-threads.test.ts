import { availableParallelism } from "node:os";
import bcrypt from "bcryptjs";
import { afterAll, describe, expect, it } from "vitest";
import { hashThreadsFor, hashWorkerThreads, sizeHashWorkers } from "../../src/crypto/hash-worker-pool.js";
import { verifyPassword } from "../../src/crypto/password.js";

/**
 * The threads that verify imported bcrypt and argon2 hashes: two at most per process, and no more than the
 * process's share of the cores when SVC_WORKERS processes share them (issue 31).
 */
describe("the password hash threads", () => {
  afterAll(() => sizeHashWorkers(availableParallelism(), 1));

  it("are the process's share of the cores, two at most and one at least", () => {
    expect(hashThreadsFor(2, 1)).toBe(2);
    expect(hashThreadsFor(2, 2)).toBe(1);
    expect(hashThreadsFor(1, 1)).toBe(1);
    expect(hashThreadsFor(3, 2)).toBe(1);
    expect(hashThreadsFor(4, 2)).toBe(2);
    expect(hashThreadsFor(64, 64)).toBe(1);
    expect(hashThreadsFor(64, 3)).toBe(2);
  });

  it("verify as before after the pool shrinks, its surplus thread ended", async () => {
    const hash = bcrypt.hashSync("secret", 4);
    const valid = async (password: string) => (await verifyPassword(password, hash)).valid;
    sizeHashWorkers(2, 1);
    await expect(Promise.all([valid("secret"), valid("wrong")])).resolves.toEqual([true, false]);
    expect(hashWorkerThreads()).toEqual({ size: 2, running: 2 });
    // Shrunk while idle: the surplus thread ends at once; the rest verify in turn.
    sizeHashWorkers(2, 2);
    expect(hashWorkerThreads()).toEqual({ size: 1, running: 1 });
    await expect(Promise.all([valid("secret"), valid("secret"), valid("nope")])).resolves.toEqual([true, true, false]);
    expect(hashWorkerThreads()).toEqual({ size: 1, running: 1 });
  });
});
