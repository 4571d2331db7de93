import net from "node:net";

export interface InFlightRequest {
  /** What the server has answered so far (the interim 100 Continue left out). */
  readonly response: string;
  /** When the first byte of the answer came, 0 before. */
  readonly answeredAt: number;
  /** Sends the rest of the body. */
  finish(): void;
  /** Resolves when the server closes the connection. */
  readonly closed: Promise<void>;
}

/**
 * An HTTP/1.1 request held in flight: the headers and the first `sent` characters of the body are sent, and
 * this resolves once the server has read the headers (it answers `Expect: 100-continue` then), so a signal sent
 * next finds the call in progress, however busy the machine. `head` is the request line and headers without
 * Content-Length, each line ending in CRLF.
 */
export async function requestInFlight(port: number, head: string, body: string, sent: number): Promise<InFlightRequest> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise((r) => socket.once("connect", r));
  let response = "";
  let answeredAt = 0;
  let continued = false;
  let headersRead!: () => void;
  const inFlight = new Promise<void>((r) => (headersRead = r));
  socket.on("data", (d) => {
    response += d.toString();
    if (!continued && response.startsWith("HTTP/1.1 100")) {
      const end = response.indexOf("\r\n\r\n");
      if (end < 0) return;
      response = response.slice(end + 4);
      continued = true;
      headersRead();
    }
    if (response) answeredAt ||= Date.now();
  });
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, sent)}`);
  await Promise.race([inFlight, closed.then(() => Promise.reject(new Error(`closed before the headers were read: ${response}`)))]);
  return {
    get response() {
      return response;
    },
    get answeredAt() {
      return answeredAt;
    },
    finish: () => socket.write(body.slice(sent)),
    closed,
  };
}
