/**
 * The logging interface every part takes. Fields are structured (a log pipeline indexes them);
 * child() binds fields such as controller or namespace/name to every line after it.
 */
export type LogFields = Record<string, unknown>;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/** Discards everything: the default for parts under test. */
export const nopLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => nopLogger,
};
