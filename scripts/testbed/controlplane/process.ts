/**
 * The cluster's processes: started with their output in the cluster folder's logs/, and stopped
 * only while their command line still names that folder, which guards against a pid reused by an
 * unrelated process.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { isAlive } from '../../ship/gobuild.js';
import { ControlPlaneError, formatDuration } from '../../ship/errors.js';

/** True when pid is alive and its command line names our folder (not a reused pid). */
export function ownsProcess(pid: number, dir: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return true; // no /proc: trust the pid
  }
}

export interface Launched {
  pid: number;
  exited: () => { code: number | null; signal: string | null } | undefined;
  logPath: string;
}

/** Starts bin with its output appended to dir/logs/NAME.log; `env` is added to this process's environment. */
export function launch(name: string, bin: string, args: string[], dir: string, detached: boolean, env?: NodeJS.ProcessEnv): Launched {
  const logPath = join(dir, 'logs', `${name}.log`);
  const fd = openSync(logPath, 'a');
  const child = spawn(bin, args, { detached, stdio: ['ignore', fd, fd], ...(env ? { env: { ...process.env, ...env } } : {}) });
  closeSync(fd);
  let exit: { code: number | null; signal: string | null } | undefined;
  child.on('exit', (code, signal) => (exit = { code, signal }));
  child.on('error', () => (exit = { code: -1, signal: null }));
  if (detached) child.unref();
  if (child.pid === undefined) throw new ControlPlaneError(`Could not start ${name} (${bin}).`);
  return { pid: child.pid, exited: () => exit, logPath };
}

export function logTail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n  ');
  } catch {
    return '(no log)';
  }
}

export class PortInUse extends Error {}

export function earlyExitError(name: string, proc: Launched, port: number): Error {
  const tail = logTail(proc.logPath);
  if (/address already in use/i.test(tail)) {
    return new PortInUse(`${name} could not bind 127.0.0.1:${port}: address already in use`);
  }
  const exit = proc.exited();
  return new ControlPlaneError(
    `${name} exited during start (code ${exit?.code ?? '?'}${exit?.signal ? `, signal ${exit.signal}` : ''}).`,
    `Last lines of ${proc.logPath}:\n  ${tail}`,
  );
}

export async function waitFor(what: string, proc: Launched, port: number, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exited()) throw earlyExitError(what, proc, port);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new ControlPlaneError(
        `${what} was not ready after ${formatDuration(timeoutMs)}.`,
        `Last lines of ${proc.logPath}:\n  ${logTail(proc.logPath)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function httpOk(url: string, tls: { ca?: string; cert?: string; key?: string } = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { ...tls, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export async function terminate(pid: number, dir: string, graceMs = 10_000): Promise<void> {
  if (!ownsProcess(pid, dir)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && !isZombie(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid) && !isZombie(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

/** An exited child not yet reaped by its parent: dead for our purposes. */
export function isZombie(pid: number): boolean {
  try {
    return /\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Every process below `pid` (children, theirs, and so on), as it stands now. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // After the command's closing parenthesis: state, then parent.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length;) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** GET a JSON document with the given TLS client identity; undefined on any failure. */
export function httpJson<T>(url: string, tls: { ca?: string; cert?: string; key?: string } = {}): Promise<T | undefined> {
  return new Promise((resolve) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { ...tls, timeout: 2000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) return resolve(undefined);
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
        } catch {
          resolve(undefined);
        }
      });
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** The pids of live processes whose command line contains needle (zombies excluded). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle) && !isZombie(Number(entry))) pids.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return pids;
}
