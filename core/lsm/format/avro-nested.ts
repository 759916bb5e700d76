// ARRAY and MAP in Avro data files (paimon-format.md §5.1, Paimon's AvroSchemaConverter):
//   ARRAY<T>            → {"type":"array","items":T'}
//   MAP<string-ish, V>  → {"type":"map","values":V'}
//   MAP<K, V> otherwise → {"type":"array","items":{"type":"record","name":…,"fields":[
//                            {"name":"key","type":K},{"name":"value","type":V'}]}}
// where T'/V' is ["null", T] for a nullable element/value and the bare type otherwise; map keys are
// never null. Arrays and maps are written as one block (count, items, 0); readers accept any
// block split, including negative counts with a byte size.
//
// Reading follows the writer schema from the file header; the requested type must be the same
// shape (ARRAY ↔ array, MAP ↔ map or array of key/value records), otherwise NotSupported.

import { LsmError } from '../errors.ts';
import { isStringType, withNullable, type DataType } from '../types.ts';
import { avroFieldType, decoder, describeWriterField, skipper, valueWriter, type Decoder, type ValueWriter, type WriterField } from './avro-data.ts';

const unsupported = (what: string, path: string) => new LsmError('NotSupported', `Avro data: ${what}`, { path });

function nullable(t: DataType, name: string): unknown {
  const a = avroFieldType(withNullable(t, false), name);
  return t.nullable ? ['null', a] : a;
}

/** The Avro schema of an ARRAY or MAP column (without the column's own null union). */
export function nestedAvroType(t: DataType, name: string): unknown {
  if (t.root === 'ARRAY') return { type: 'array', items: nullable(t.element!, `${name}_element`) };
  if (isStringType(t.key!)) return { type: 'map', values: nullable(t.value!, `${name}_value`) };
  return {
    type: 'array',
    items: {
      type: 'record',
      name,
      fields: [
        { name: 'key', type: avroFieldType(withNullable(t.key!, false), `${name}_key`) },
        t.value!.nullable ? { name: 'value', type: nullable(t.value!, `${name}_value`), default: null } : { name: 'value', type: nullable(t.value!, `${name}_value`) },
      ],
    },
  };
}

function itemWriter(t: DataType): ValueWriter {
  const w = valueWriter(withNullable(t, false));
  if (!t.nullable) return w;
  return (o, v) => {
    o.ensure(1);
    if (v === null || v === undefined) o.buf[o.pos++] = 0;
    else {
      o.buf[o.pos++] = 2;
      w(o, v);
    }
  };
}

export function nestedAvroWriter(t: DataType): ValueWriter {
  if (t.root === 'ARRAY') {
    const item = itemWriter(t.element!);
    return (o, v) => {
      const a = v as unknown[];
      if (a.length > 0) {
        o.long(a.length);
        for (const e of a) item(o, e);
      }
      o.long(0);
    };
  }
  const key = valueWriter(withNullable(t.key!, false));
  const value = itemWriter(t.value!);
  return (o, v) => {
    const m = v as Map<unknown, unknown>;
    if (m.size > 0) {
      o.long(m.size);
      for (const [k, x] of m) {
        key(o, k);
        value(o, x);
      }
    }
    o.long(0);
  };
}

export function isNestedAvroSchema(s: unknown): boolean {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return false;
  const t = (s as { type?: unknown }).type;
  return t === 'array' || t === 'map';
}

/** A pseudo writer field for an item schema (possibly a ["null", T] union). */
function itemField(schema: unknown, name: string, path: string): WriterField {
  return describeWriterField({ name, type: schema }, path);
}

function withNull(w: WriterField, d: Decoder): Decoder {
  const nb = w.nullBranch;
  if (nb < 0) return d;
  return (i) => {
    const b = i.long();
    if (b === nb) return null;
    if (b !== 1 - nb) i.fail(`union branch ${b} out of range`);
    return d(i);
  };
}

interface KeyValueRecord {
  key: WriterField;
  value: WriterField;
}

function keyValueRecord(items: unknown, name: string, path: string): KeyValueRecord | undefined {
  const r = items as { type?: unknown; fields?: unknown };
  if (!r || r.type !== 'record' || !Array.isArray(r.fields)) return undefined;
  const fields = r.fields as Array<{ name?: unknown; type?: unknown }>;
  const key = fields.find((f) => f.name === 'key');
  const value = fields.find((f) => f.name === 'value');
  if (!key || !value || fields.length !== 2) return undefined;
  return { key: itemField(key.type, `${name}.key`, path), value: itemField(value.type, `${name}.value`, path) };
}

export function nestedAvroDecoder(w: WriterField, t: DataType, path: string): Decoder {
  const schema = w.nested as { type: string; items?: unknown; values?: unknown } | undefined;
  if (!schema) throw unsupported(`field '${w.name}' is '${w.prim}' in the file, which cannot be read as ${t.root}`, path);
  if (t.root === 'ARRAY' && schema.type === 'array' && !keyValueRecord(schema.items, w.name, path)) {
    const iw = itemField(schema.items, `${w.name}[]`, path);
    const d = withNull(iw, decoder(iw, { name: iw.name, type: t.element! }, path));
    return (i) => {
      const out: unknown[] = [];
      i.blocks('Avro array or map', () => out.push(d(i)));
      return out;
    };
  }
  if (t.root === 'MAP' && schema.type === 'map') {
    const vw = itemField(schema.values, `${w.name}{}`, path);
    const d = withNull(vw, decoder(vw, { name: vw.name, type: t.value! }, path));
    const kd = decoder({ name: `${w.name}.key`, prim: 'string', logical: undefined, size: undefined, nullBranch: -1 }, { name: 'key', type: withNullable(t.key!, false) }, path);
    return (i) => {
      const out = new Map<unknown, unknown>();
      i.blocks('Avro array or map', () => {
        const k = kd(i);
        out.set(k, d(i));
      });
      return out;
    };
  }
  if (t.root === 'MAP' && schema.type === 'array') {
    const kv = keyValueRecord(schema.items, w.name, path);
    if (kv) {
      const kd = withNull(kv.key, decoder(kv.key, { name: 'key', type: withNullable(t.key!, false) }, path));
      const vd = withNull(kv.value, decoder(kv.value, { name: 'value', type: t.value! }, path));
      return (i) => {
        const out = new Map<unknown, unknown>();
        i.blocks('Avro array or map', () => {
          const k = kd(i);
          if (k === null) i.fail(`null map key in '${w.name}'`);
          out.set(k, vd(i));
        });
        return out;
      };
    }
  }
  throw unsupported(`field '${w.name}' has Avro type '${schema.type}', which cannot be read as ${t.root}`, path);
}

export function nestedAvroSkipper(nested: unknown, name: string, path: string): Decoder {
  const schema = nested as { type: string; items?: unknown; values?: unknown };
  if (schema.type === 'map') {
    const v = itemField(schema.values, `${name}{}`, path);
    const sv = withNull(v, skipper(v, path));
    return (i) => {
      i.blocks('Avro array or map', () => {
        i.take(i.long());
        sv(i);
      });
      return null;
    };
  }
  const kv = keyValueRecord(schema.items, name, path);
  if (kv) {
    const sk = withNull(kv.key, skipper(kv.key, path));
    const sv = withNull(kv.value, skipper(kv.value, path));
    return (i) => {
      i.blocks('Avro array or map', () => {
        sk(i);
        sv(i);
      });
      return null;
    };
  }
  const it = itemField(schema.items, `${name}[]`, path);
  const si = withNull(it, skipper(it, path));
  return (i) => {
    i.blocks('Avro array or map', () => si(i));
    return null;
  };
}
