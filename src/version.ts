/**
 * The operator's version, as `--version` prints it and as metrics and the User-Agent report it.
 *
 * A release build sets it with esbuild's `--define:__ECHOPERATOR_VERSION__='"1.2.3"'`, which
 * replaces the identifier with a string literal. Running from source (tsx) there is no define, so
 * the version comes from package.json through a JSON import: the bundler inlines that import, so
 * the bundle never reads a file at run time, and the `typeof` guard keeps an undefined identifier
 * from throwing a ReferenceError.
 */
import packageJson from '../package.json' with { type: 'json' };

declare const __ECHOPERATOR_VERSION__: string | undefined;

function resolveVersion(): string {
  if (typeof __ECHOPERATOR_VERSION__ === 'string' && __ECHOPERATOR_VERSION__ !== '') return __ECHOPERATOR_VERSION__;
  const fromPackage = (packageJson as { version?: unknown }).version;
  return typeof fromPackage === 'string' && fromPackage !== '' ? fromPackage : '0.0.0-dev';
}

export const VERSION: string = resolveVersion();
