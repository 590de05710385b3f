/**
 * A forward proxy that speaks HTTP CONNECT, as corporate proxies do, and remembers what it was
 * asked: every tunnel's target and the local port of its own connection onward, so a test can
 * tell which connections reaching the API server came through it. Names in `hosts` resolve to
 * the given address (a name the test machine itself cannot resolve, so that only the proxy can
 * reach it). It can go silent (silence(true)), as a wedged proxy does: it keeps accepting
 * connections and never answers a CONNECT, and its open tunnels stop carrying bytes while their
 * sockets stay open (the kernel still acknowledges, so TCP keep-alive sees nothing wrong).
 * Everything it opened is closed when the test ends.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { trackPair } from './socketpair.js';

export interface ConnectProxy {
  url: string;
  /** The request-target of every CONNECT, in order ("host:port"). */
  targets: string[];
  /** Local ports of the proxy's onward connections (the API server side sees them as remote ports). */
  onwardPorts: Set<number>;
  /** Ends every open tunnel (clients must connect again). */
  cut(): void;
  /**
   * true: accept connections but answer no CONNECT, and carry no byte through open tunnels.
   * false: carry on; CONNECTs held meanwhile are answered if their client is still there.
   */
  silence(on: boolean): void;
}

/** Whether the tunnels carry bytes; shared by every tunnel of one proxy. */
interface Gate {
  silent: boolean;
}

export async function connectProxy(t: { after(fn: () => unknown): void }, hosts: Record<string, string> = {}): Promise<ConnectProxy> {
  const targets: string[] = [];
  const onwardPorts = new Set<number>();
  const open = new Set<Socket>();
  const gate: Gate = { silent: false };
  /** CONNECTs that came while silent, answered when the proxy speaks again. */
  let held: (() => void)[] = [];
  const unanswered = new Set<Socket>();
  const server = createServer((_req, res) => {
    res.writeHead(405).end('CONNECT only\n');
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => undefined);
    if (gate.silent) {
      unanswered.add(client);
      held.push(() => {
        unanswered.delete(client);
        if (!client.destroyed) tunnelTo(req, client, head);
      });
      return;
    }
    tunnelTo(req, client, head);
  });
  const tunnelTo = (req: IncomingMessage, client: Socket, head: Buffer): void => {
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
      joined(client, onward, open, gate);
    });
    onward.once('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = (): void => {
    for (const s of open) s.destroy();
    open.clear();
  };
  const silence = (on: boolean): void => {
    gate.silent = on;
    for (const s of open) {
      if (on) s.pause();
      else s.resume();
    }
    if (!on) {
      const waiting = held;
      held = [];
      for (const answer of waiting) answer();
    }
  };
  t.after(() => {
    held = [];
    for (const s of unanswered) s.destroy();
    cut();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, targets, onwardPorts, cut, silence };
}

/**
 * Bytes both ways until either side ends or fails, then both are destroyed; both are tracked in
 * `open` while they live. By hand rather than stream.pipeline, so that a silent gate can pause
 * them (a pipe resumes its source on its own).
 */
function joined(a: Socket, b: Socket, open: Set<Socket>, gate: Gate = { silent: false }): void {
  const close = trackPair(a, b, open);
  const relay = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!gate.silent) from.resume();
    });
    from.once('end', close);
    from.once('error', close);
    from.once('close', close);
  };
  relay(a, b);
  relay(b, a);
  if (gate.silent) {
    a.pause();
    b.pause();
  }
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
