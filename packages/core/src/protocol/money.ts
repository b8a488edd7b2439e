import { TollboothError } from '../errors/tollbooth-error';

const DECIMAL = /^(\d+)(?:\.(\d*))?$|^\.(\d+)$/;

/**
 * Converts a decimal price (`"$0.001"`, `"0.001"`, `0.001`) to a decimal string of atomic units
 * with `decimals` digits, exactly: digits beyond `decimals` are truncated, never rounded.
 *
 * @throws TollboothError `invalid_amount` for negatives, NaN, infinities, exponents or garbage.
 * @example
 * toAtomicAmount('$0.001', 6) // '1000'
 */
export function toAtomicAmount(price: string | number, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new TollboothError('invalid_amount', `decimals must be an integer 0..255, got ${decimals}`);
  }
  let text: string;
  if (typeof price === 'number') {
    if (!Number.isFinite(price) || price < 0) {
      throw new TollboothError('invalid_amount', `price must be a finite non-negative number, got ${price}`);
    }
    // Shortest round-trip form; refuses exponent notation (1e-7, 1e21) rather than guessing.
    text = String(price);
    if (/e/i.test(text)) {
      throw new TollboothError('invalid_amount', `price ${text} is too small or large; pass it as a string`);
    }
  } else if (typeof price === 'string') {
    text = price.trim();
    if (text.startsWith('$')) text = text.slice(1);
    text = text.replaceAll('_', '');
  } else {
    throw new TollboothError('invalid_amount', `price must be a string or number, got ${typeof price}`);
  }
  const match = DECIMAL.exec(text);
  if (!match) {
    throw new TollboothError(
      'invalid_amount',
      `price ${JSON.stringify(price)} is not a non-negative decimal`,
    );
  }
  const whole = match[1] ?? '0';
  const fraction = (match[2] ?? match[3] ?? '').slice(0, decimals).padEnd(decimals, '0');
  return (BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction === '' ? '0' : fraction)).toString();
}

/**
 * Formats atomic units as a decimal string for display, exactly, without trailing zeros.
 *
 * @example
 * fromAtomicAmount('1000', 6) // '0.001'
 */
export function fromAtomicAmount(amount: string | bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new TollboothError('invalid_amount', `decimals must be an integer 0..255, got ${decimals}`);
  }
  if (typeof amount === 'string' && !/^\d+$/.test(amount)) {
    throw new TollboothError('invalid_amount', `amount ${JSON.stringify(amount)} is not a decimal string`);
  }
  const value = BigInt(amount);
  if (value < 0n) throw new TollboothError('invalid_amount', 'amount must not be negative');
  if (decimals === 0) return value.toString();
  const scale = 10n ** BigInt(decimals);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}
