/** The package version, read once from package.json beside dist/. */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const VERSION: string = (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
