// The built renderer's files, as both UI transports serve them: the headless server
// (ui-server.ts) and the Electron shell's app:// protocol (electron/shell.ts).

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/** The Content-Type of a renderer file by its extension; anything else is application/octet-stream. */
export function rendererContentType(path: string): string {
  const ext = path.slice(path.lastIndexOf('.'));
  return Object.hasOwn(CONTENT_TYPES, ext) ? CONTENT_TYPES[ext]! : 'application/octet-stream';
}
