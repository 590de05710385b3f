/**
 * The operator's configuration: the settings table (settings.ts), how flags and environment
 * become Settings (parse.ts), and the value parsers behind both (parsers.ts).
 */
export { SETTINGS, type DefaultContext, type LogFormat, type SettingSpec, type Settings, type SettingsTable } from './settings.js';
export { SettingsError, invalidValueMessage, parseSettings, parseSettingsOrExit, type ParseOptions } from './parse.js';
