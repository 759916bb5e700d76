// The TLS options of the site's internal MQTT client (the `tilstand` principal: resync requests,
// write-back commands), which connects to the broker the site itself started or was given.
//
// Embedded broker with `broker.tls`: the client connects to the site's own listener, by
// `broker.host` (127.0.0.1, or an address the certificate was not made for), so the host name check
// cannot hold and the certificate may be self-signed. It used to connect with
// `rejectUnauthorized: false`, accepting whatever answered on the port. Now it accepts exactly the
// certificate the site gave the broker: the configured file is the trust list, and
// `checkServerIdentity` compares the presented leaf's SHA-256 fingerprint with the file's first
// certificate in place of the host name check.
//
// What it assumes of `broker.tls.certPath` (as Node's `cert` option does, which the broker is given):
// PEM, the leaf first, then any intermediates. Node calls checkServerIdentity only once the chain
// has verified, so the chain must verify against the file alone: a self-signed leaf is its own
// root; for a CA-issued one `allowPartialTrustChain` (Node ≥ 20.18; older ones ignore it and then
// need the root in the file too) lets a certificate of the file end the chain without its root.
// That trusts nothing more than the file: the pin still requires the very leaf.
//
// Embedded without TLS: plain MQTT on the listener, no options. External broker: the client
// verifies as the MqttSource on the same URL does (Node's default CAs and the host name).

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import { ConfigError, type BrokerConfig } from './config.ts';

export interface InternalClientTls {
  readonly ca?: string[];
  readonly allowPartialTrustChain?: boolean;
  readonly rejectUnauthorized?: boolean;
  readonly checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** Options that accept exactly the leaf of `pem` (a certificate file: leaf first, then its chain). */
export function pinnedCertificateTls(pem: string, source: string): InternalClientTls {
  const chain = pem.match(PEM_CERTIFICATE) ?? [];
  if (chain.length === 0) throw new ConfigError('broker.tls.certPath', `${source} holds no PEM certificate`);
  let leaf: string;
  try {
    leaf = new X509Certificate(chain[0]!).fingerprint256;
  } catch (e) {
    throw new ConfigError('broker.tls.certPath', `${source}: its first certificate cannot be read (${(e as Error).message})`);
  }
  return {
    ca: chain,
    allowPartialTrustChain: true,
    rejectUnauthorized: true,
    checkServerIdentity: (_host, cert) =>
      cert.fingerprint256 === leaf ? undefined : new Error(`the broker presented certificate ${cert.fingerprint256}, not the one in ${source} (${leaf})`),
  };
}

/** The internal client's TLS options for `broker` (see above); reads `broker.tls.certPath`. */
export function internalClientTls(broker: BrokerConfig): InternalClientTls {
  if (broker.mode !== 'embedded' || broker.tls === null) return {};
  const path = broker.tls.certPath;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError('broker.tls.certPath', `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return pinnedCertificateTls(pem, path);
}
