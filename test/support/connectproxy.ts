/**
 * A forward proxy that speaks HTTP CONNECT, as corporate proxies do, and remembers what it was
 * asked: every tunnel's target and the local port of its own connection onward, so a test can
 * tell which connections reaching the API server came through it. Names in `hosts` resolve to
 * the given address (a name the test machine itself cannot resolve, so that only the proxy can
 * reach it). Everything it opened is closed when the test ends.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { pipeline } from 'node:stream';

export interface ConnectProxy {
  url: string;
  /** The request-target of every CONNECT, in order ("host:port"). */
  targets: string[];
  /** Local ports of the proxy's onward connections (the API server side sees them as remote ports). */
  onwardPorts: Set<number>;
  /** Ends every open tunnel (clients must connect again). */
  cut(): void;
}

export async function connectProxy(t: { after(fn: () => unknown): void }, hosts: Record<string, string> = {}): Promise<ConnectProxy> {
  const targets: string[] = [];
  const onwardPorts = new Set<number>();
  const open = new Set<Socket>();
  const server = createServer((_req, res) => {
    res.writeHead(405).end('CONNECT only\n');
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    targets.push(target);
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const onward = connect(Number(m[2]), hosts[m[1]!] ?? m[1]!);
    client.once('error', () => onward.destroy());
    onward.once('connect', () => {
      onwardPorts.add(onward.localPort!);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) onward.write(head);
      joined(client, onward, open);
    });
    onward.once('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = (): void => {
    for (const s of open) s.destroy();
    open.clear();
  };
  t.after(() => {
    cut();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, targets, onwardPorts, cut };
}

/** Bytes both ways until either side ends; both are tracked in `open` while they live. */
function joined(a: Socket, b: Socket, open: Set<Socket>): void {
  open.add(a).add(b);
  pipeline(a, b, a, () => {
    a.destroy();
    b.destroy();
    open.delete(a);
    open.delete(b);
  });
}

export interface Forwarder {
  /** host:port it listens on. */
  address: string;
  /** Remote ports of the connections it accepted. */
  remotePorts: number[];
}

/** A plain TCP forwarder on `host` to `to` (e.g. the API server from a non-loopback address). */
export async function forwarder(
  t: { after(fn: () => unknown): void },
  host: string,
  to: { host: string; port: number },
): Promise<Forwarder> {
  const remotePorts: number[] = [];
  const open = new Set<Socket>();
  const server = createTcpServer((client: Socket) => {
    remotePorts.push(client.remotePort!);
    joined(client, connect(to.port, to.host), open);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(() => {
    for (const s of open) s.destroy();
    server.close();
  });
  return { address: `${host}:${(server.address() as { port: number }).port}`, remotePorts };
}
