/**
 * Bodies the gate sends again and again (a route's 402 challenge) with their text, kept when the
 * body is made: the adapters then write that string (head and body in one piece) without checking
 * and decoding the bytes on every answer. Only ASCII text is kept, so the string stands for exactly
 * the same bytes in UTF-8 and Latin-1.
 */
const texts = new WeakMap<Uint8Array, string>();

/** Kept up to this size, as adapters send bodies as text (`sendableBody` in `@tollbooth/core/node`). */
export const KNOWN_TEXT_MAX_BYTES = 16 * 1024;

/** Remembers the text of a body that will be sent many times; a non-ASCII text is not kept. */
export function rememberBodyText(body: Uint8Array, text: string): void {
  // As many UTF-8 bytes as UTF-16 units: every character is ASCII (any other takes two bytes or more per unit).
  if (text.length === body.byteLength && body.byteLength <= KNOWN_TEXT_MAX_BYTES) texts.set(body, text);
}

/** The text remembered for exactly this body object, if any. */
export function knownBodyText(body: Uint8Array): string | undefined {
  return texts.get(body);
}
