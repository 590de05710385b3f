/**
 * The operator image's base for one platform, laid out as distroless lays its Debian images out:
 * the files of the locked Debian packages (lock.ts) as `dpkg-deb -x` unpacks them, less their
 * documentation (manuals, changelogs, lintian and gdb files: the copyright files stay), a package
 * database that scanners read (`/var/lib/dpkg/status.d/<package>`, the package's control file
 * marked installed, and `<package>.md5sums` for the files the image keeps), the CA bundle that
 * ca-certificates' postinst would write, Node's official binary at /nodejs/bin/node with its
 * LICENSE, and distroless' users and folders. Nothing comes from the machine that builds it.
 *
 * The layout is a function of the unpacked inputs (walked in sorted order, owners root, modes
 * as packed), so the same lock gives the same entries everywhere.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { baseEntries, withParents, type ImageEntry } from './images.js';
import type { LockedDeb, LockedNode, Platform } from './lock.js';

/** Where Node lives in the image, as in distroless' nodejs images. */
export const NODE_PATH = 'nodejs/bin/node';
export const NODE_LICENSE_PATH = 'nodejs/LICENSE';
export const CA_BUNDLE_PATH = 'etc/ssl/certs/ca-certificates.crt';
const STATUS_DIR = 'var/lib/dpkg/status.d';
const CA_SOURCES = 'usr/share/ca-certificates/';

/** Package paths the image leaves out, as Debian's minimized images do (dpkg path-exclude). */
const EXCLUDED = [/^usr\/share\/(man|info|lintian|gdb|gcc|locale)(\/|$)/, /^usr\/share\/doc\/[^/]+\/(?!copyright$)/];
export const isExcluded = (path: string): boolean => EXCLUDED.some((re) => re.test(path));

/** One package as unpacked (inputs.ts): its files and its control files. */
export interface BaseInput {
  deb: LockedDeb;
  data: string;
  control: string;
}

export interface BasePackage {
  deb: LockedDeb;
  /** The image paths of the package's regular files and links that the image keeps. */
  files: string[];
}

export interface BaseLayer {
  platform: Platform;
  /** Every entry of the base, parents first (the bundle and the config are added by the operator image). */
  entries: ImageEntry[];
  packages: BasePackage[];
  node: LockedNode & { binary: string };
}

/** The unpacked tree under `root`, sorted, as image entries (root-owned, the packed modes). */
export function walkPackage(root: string): ImageEntry[] {
  const out: ImageEntry[] = [];
  const visit = (rel: string): void => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (isExcluded(path)) continue;
      const full = join(root, path);
      const st = lstatSync(full);
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) out.push({ path, type: 'symlink', target: readlinkSync(full), mode: 0o777, uid: 0, gid: 0 });
      else if (st.isDirectory()) {
        out.push({ path, type: 'dir', mode, uid: 0, gid: 0 });
        visit(path);
      } else if (st.isFile()) out.push({ path, type: 'file', source: full, mode, uid: 0, gid: 0 });
      else throw new Error(`${full}: neither a file, a folder nor a link`);
    }
  };
  visit('');
  return out;
}

/** The package's database entry: its control file, marked installed (dpkg's status format). */
export function statusEntry(control: string): string {
  const text = control.trimEnd();
  if (!/^Package: /m.test(text)) throw new Error('a control file without Package:');
  return `${text.replace(/^(Package: .*)$/m, '$1\nStatus: install ok installed')}\n`;
}

/** md5sums lines for the files kept (dpkg's format: `<md5>  <path>`). */
export function keptMd5sums(md5sums: string, kept: ReadonlySet<string>): string {
  return md5sums
    .split('\n')
    .filter((line) => kept.has(line.slice(34)))
    .map((line) => `${line}\n`)
    .join('');
}

/** The CA bundle as update-ca-certificates writes it: every certificate ca-certificates ships, by name. */
export function caBundle(certificates: Array<{ path: string; pem: string }>): string {
  return [...certificates]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((c) => (c.pem.endsWith('\n') ? c.pem : `${c.pem}\n`))
    .join('');
}

const text = (path: string, content: string, mode = 0o644): ImageEntry => ({ path, type: 'file', content, mode, uid: 0, gid: 0 });

/** The base of one platform from its unpacked packages and Node. */
export function baseLayer(platform: Platform, inputs: BaseInput[], node: LockedNode & { binary: string; license: string }): BaseLayer {
  const byPath = new Map<string, ImageEntry>();
  const owner = new Map<string, string>();
  const packages: BasePackage[] = [];
  for (const input of inputs) {
    const files: string[] = [];
    for (const e of walkPackage(input.data)) {
      if (e.type !== 'dir') {
        const other = owner.get(e.path);
        if (other) throw new Error(`/${e.path} is in both ${other} and ${input.deb.name}`);
        owner.set(e.path, input.deb.name);
        files.push(e.path);
      }
      if (!byPath.has(e.path)) byPath.set(e.path, e);
    }
    packages.push({ deb: input.deb, files });
  }
  const database: ImageEntry[] = inputs.flatMap((input, i) => {
    const md5sums = readOptional(join(input.control, 'md5sums'));
    return [
      text(`${STATUS_DIR}/${input.deb.name}`, statusEntry(readFileSync(join(input.control, 'control'), 'utf8'))),
      text(`${STATUS_DIR}/${input.deb.name}.md5sums`, keptMd5sums(md5sums, new Set(packages[i]!.files))),
    ];
  });
  const certificates = [...byPath.values()]
    .filter((e) => e.type === 'file' && e.path.startsWith(CA_SOURCES) && e.path.endsWith('.crt'))
    .map((e) => ({ path: e.path, pem: readFileSync(e.source!, 'utf8') }));
  if (certificates.length === 0) throw new Error(`no certificates under /${CA_SOURCES}: is ca-certificates in the lock?`);
  const own: ImageEntry[] = [
    ...baseEntries(),
    ...database,
    text(CA_BUNDLE_PATH, caBundle(certificates)),
    { path: NODE_PATH, type: 'file', source: node.binary, mode: 0o755, uid: 0, gid: 0 },
    { path: NODE_LICENSE_PATH, type: 'file', source: node.license, mode: 0o644, uid: 0, gid: 0 },
  ];
  // Ours over the packages' (base-files' /tmp and /home are distroless' here).
  for (const e of own) byPath.set(e.path, e);
  const { license: _license, ...lockedNode } = node;
  return { platform, entries: withParents([...byPath.values()]), packages, node: lockedNode };
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
