// The adapter contract: what an adapter hands the gate (`RequestView`) and what it sends back
// (`GateResponse`), the handler's answer as the adapter captured it (`HandlerResponse`) and as the
// ledger stores it (`StoredResponse`). The bottom of the gate's world: it imports nothing.

/** What an adapter tells the gate about a request. */
export interface RequestView {
  /** Upper-case HTTP method. */
  method: string;
  /**
   * The request URL as received, made absolute (`https://host/path?query`), **not** decoded or
   * normalised by the framework: the gate does its own decoding so path tricks cannot bypass a
   * paid route.
   */
  url: string;
  /** Case-insensitive header lookup; multiple values joined with `, `. */
  header(name: string): string | undefined;
  /** The framework's own request object, for hooks. */
  raw?: unknown;
  /**
   * The request body's bytes, read without consuming them (later parsers still read the body).
   * The gate asks for it only for a payment carrying a payment identifier (its request fingerprint
   * hashes the body), with the most bytes it takes; past them it throws `request_body_too_large`.
   * Without it the body counts as empty.
   */
  body?(maxBytes: number): Promise<Uint8Array>;
}

/** An HTTP response exactly as it was (or will be) sent: replayed byte for byte. */
export interface StoredResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** What a handler produced, as an adapter captured it: the answer the ledger stores once paid. */
export interface HandlerResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string | string[]>;
  body: Uint8Array;
}

/** A response the gate wants sent. Header names are lower-case; the body is exact bytes. */
export type GateResponse = StoredResponse;
