// Types for the `snappyjs` package (raw Snappy, pure JS; ships none). Used only by the tests, as
// an independent decoder and encoder to cross-check snappy.ts.
declare module 'snappyjs' {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
}
