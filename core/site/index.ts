// core/site — the composition root. This file names its public surface.
export { Site, SiteError, type SiteStartOptions } from './site.ts';
export { parseConfig, readConfig, writeConfig, defaultConfig, dataPaths, ConfigError, SITE_TABLES, DEFAULT_DATA_DIR, type SiteConfig, type BrokerConfig, type TableBudget } from './config.ts';
export { initDataDir, InitError, type InitOptions, type ModuleSecrets } from './init.ts';
export { controlRequest, ControlError } from './control.ts';
export { statusFromDirectory, formatStatus, type SiteStatus, type TableState } from './status.ts';
export { runDemoModules, readModuleSecrets, type DemoModules } from './demo/run.ts';
