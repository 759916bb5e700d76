import { describe, expect, it } from 'vitest';
import { rendererContentType } from './renderer-files.ts';

describe('rendererContentType', () => {
  it('names the renderer files by extension', () => {
    expect(rendererContentType('/r/index.html')).toBe('text/html; charset=utf-8');
    expect(rendererContentType('/r/assets/index-1a2b.js')).toBe('text/javascript; charset=utf-8');
    expect(rendererContentType('/r/assets/index.css')).toBe('text/css; charset=utf-8');
    expect(rendererContentType('/r/fonts/a.woff2')).toBe('font/woff2');
  });

  it('serves anything else as octet-stream, prototype names included', () => {
    for (const p of ['/r/data.bin', '/r/LICENSE', '/r/x.constructor', '/r/x.__proto__', '/r/x.toString']) {
      expect(rendererContentType(p), p).toBe('application/octet-stream');
    }
  });
});
