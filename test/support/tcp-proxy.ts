import { createServer, type Socket, connect } from "node:net";

/**
 * A TCP proxy on a free loopback port to `127.0.0.1:<targetPort>` whose network can go dark: `blackhole` drops
 * everything from then on, both ways, on the connections made and on new ones (accepted, never answered), as a
 * host that vanished or a firewall that drops packets does. Nothing is refused or reset, so only a timeout
 * notices. `heal` forwards again, on every connection still open.
 */
export interface TcpProxy {
  port: number;
  blackhole(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let dark = false;
  const pairs = new Set<[Socket, Socket]>();
  /** Forwards what arrives while the network is up; what arrives in the dark is lost, as dropped packets are. */
  const pipe = (from: Socket, to: Socket) =>
    from.on("data", (chunk) => {
      if (!dark) to.write(chunk);
    });
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    pipe(client, upstream);
    pipe(upstream, client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // A close at one end reaches the other only while the network is up; in the dark the other end never hears.
    for (const socket of pair)
      socket
        .on("error", () => {})
        .on("close", () => {
          if (!dark) end();
        });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : 0,
    blackhole: () => {
      dark = true;
    },
    heal: () => {
      dark = false;
      // What was closed at one end in the dark is closed at the other now, as the first packet would tell it.
      for (const pair of pairs) if (pair.some((socket) => socket.destroyed)) for (const socket of pair) socket.destroy();
    },
    close: async () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
