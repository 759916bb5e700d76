// Repeated keys in JSON text. JSON.parse keeps the last value of a key an object gives twice and
// says nothing; for what a person writes (a `put` line, a schema file, config.json, a contract) a
// repeated key is a mistake (two sources pasted together, an edit), so the readers of such text
// ask these scanners and refuse it. Both make one pass over valid JSON text, strings skipped,
// keys with escapes decoded. Pure; no import (every core folder may use it).

/**
 * The index of the quote that closes the string opening at `open`: the next one after an even run
 * of backslashes, or -1 (indexOf: strings are most of a line, and put runs this on every line).
 */
export function closingQuote(text: string, open: number): number {
  let j = text.indexOf('"', open + 1);
  while (j >= 0) {
    let k = j - 1;
    while (text.charCodeAt(k) === 0x5c) k--;
    if ((j - 1 - k) % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
  return -1;
}

/**
 * The first key an object of `text` (valid JSON) gives twice, and the column it is in when that
 * object is a column's value (a MAP's JSON object), or undefined. JSON.parse keeps the last value
 * of a repeated key and says nothing, so `{"item":"a","qty":1,"qty":2}` was written as qty 2: a
 * line that gives a column twice is a mistake (two sources pasted together, an edit), not a
 * choice (put's lines, get's --key). One pass over the characters, strings skipped; keys with
 * escapes are decoded.
 */
export function repeatedKey(text: string): { key: string; column: string | undefined } | undefined {
  const objects: (Set<string> | null)[] = []; // per open bracket: its keys, or null for an array
  let column: string | undefined;
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const j = closingQuote(text, i);
      if (j < 0) return undefined;
      if (expectKey) {
        let key = text.slice(i + 1, j);
        if (key.includes('\\')) key = JSON.parse(text.slice(i, j + 1)) as string;
        const keys = objects[objects.length - 1]!;
        if (keys.has(key)) return { key, column: objects.length === 1 ? undefined : column };
        keys.add(key);
        if (objects.length === 1) column = key;
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b) {
      objects.push(new Set());
      expectKey = true;
    } else if (c === 0x5b) objects.push(null);
    else if (c === 0x7d || c === 0x5d) objects.pop();
    else if (c === 0x2c) expectKey = objects[objects.length - 1] != null;
    i++;
  }
  return undefined;
}

/**
 * Where the first key an object of `text` (valid JSON) gives twice is, as a path from the top:
 * `options.bucket`, `fields[1].type`, `options["merge-engine"]`… (a key that is not a plain
 * name is written as a JSON string), or undefined; `join` writes a path as its caller writes
 * paths elsewhere (ingest's envelope refusals). For a file read once (a schema file), or an event,
 * where the path is what finds the key; put's per-line check stays `repeatedKey`, which keeps no path.
 */
export function repeatedKeyPath(text: string, join: (path: string, key: string | number) => string = pathJoin): string | undefined {
  // Per open bracket: an object's keys, or null for an array; and where in it the scan is (the
  // object's latest key, the array's element index).
  const keys: (Set<string> | null)[] = [];
  const at: (string | number)[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const j = closingQuote(text, i);
      if (j < 0) return undefined;
      if (expectKey) {
        let key = text.slice(i + 1, j);
        if (key.includes('\\')) key = JSON.parse(text.slice(i, j + 1)) as string;
        const top = keys.length - 1;
        if (keys[top]!.has(key)) {
          at[top] = key;
          return at.reduce<string>((path, p) => join(path, p), '');
        }
        keys[top]!.add(key);
        at[top] = key;
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b) {
      keys.push(new Set());
      at.push('');
      expectKey = true;
    } else if (c === 0x5b) {
      keys.push(null);
      at.push(0);
    } else if (c === 0x7d || c === 0x5d) {
      keys.pop();
      at.pop();
    } else if (c === 0x2c) {
      const top = keys.length - 1;
      expectKey = keys[top] != null;
      if (!expectKey) at[top] = (at[top] as number) + 1;
    }
    i++;
  }
  return undefined;
}

/** A key a path shows as it is (`options.bucket`); any other is shown as a JSON string. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `repeatedKeyPath`'s own way to add a key or an index to a path: `options.bucket`, `fields[1]`, `options["a b"]`. */
function pathJoin(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (PLAIN_KEY.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}
