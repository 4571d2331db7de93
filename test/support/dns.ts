import dns2 from "dns2";

/** A real DNS server on loopback (UDP) answering A and TXT questions from `records`; other names get no answer. */
export class DnsServer {
  readonly records = new Map<string, { a?: string[]; txt?: string[] }>();
  port = 0;
  private server?: ReturnType<typeof dns2.createServer>;

  async start(): Promise<this> {
    const { Packet } = dns2;
    this.server = dns2.createServer({
      udp: true,
      handle: (request, send) => {
        const response = Packet.createResponseFromRequest(request);
        for (const q of request.questions) {
          const r = this.records.get(q.name.toLowerCase());
          if (q.type === Packet.TYPE.A)
            for (const address of r?.a ?? [])
              response.answers.push(new Packet.Resource({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 1, address }));
          if (q.type === Packet.TYPE.TXT)
            for (const data of r?.txt ?? [])
              response.answers.push(new Packet.Resource({ name: q.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data }));
        }
        send(response);
      },
    });
    const addresses = await this.server.listen({ udp: { port: 0, address: "127.0.0.1" } });
    this.port = addresses.udp!.port;
    return this;
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}
