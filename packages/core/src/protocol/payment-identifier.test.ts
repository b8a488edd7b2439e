import { describe, expect, it } from 'vitest';
import {
  declarePaymentIdentifier,
  PAYMENT_IDENTIFIER,
  PAYMENT_IDENTIFIER_JSON_SCHEMA,
  readPaymentIdentifier,
} from './payment-identifier';

/** An identifier as the official client's `generatePaymentId()` makes it. */
const ID = 'pay_7d5d747be160e280504c099d984bcfe0';
const NOT_AN_INFO_OBJECT = 'extensions["payment-identifier"] must be an object with an info object';
const BAD_ID = 'the payment identifier must be 16-128 characters of A-Z, a-z, 0-9, "-" and "_"';

/** Extensions carrying the extension as the client echoes it, `info` being `info`. */
const carrying = (info: unknown) => ({ [PAYMENT_IDENTIFIER]: { info } });

describe('declarePaymentIdentifier', () => {
  it('advertises an optional identifier by default, with the JSON schema of info', () => {
    expect(declarePaymentIdentifier()).toStrictEqual({
      info: { required: false },
      schema: PAYMENT_IDENTIFIER_JSON_SCHEMA,
    });
  });

  it('advertises a required identifier when asked', () => {
    expect(declarePaymentIdentifier(true)).toStrictEqual({
      info: { required: true },
      schema: PAYMENT_IDENTIFIER_JSON_SCHEMA,
    });
  });
});

describe('readPaymentIdentifier', () => {
  it.each([
    ['the 32-hex-digit identifier of the official client', ID],
    ['16 characters, the shortest allowed', 'a'.repeat(16)],
    ['128 characters, the longest allowed', 'Z'.repeat(128)],
    ['every allowed kind of character', 'AZaz09-_AZaz09-_'],
  ])('reads %s as present', (_what, id) => {
    expect(readPaymentIdentifier(carrying({ required: true, id }))).toStrictEqual({ kind: 'present', id });
  });

  it.each([
    ['no extensions', undefined],
    ['null extensions', null],
    ['extensions that are not an object', 'payment-identifier'],
    ['extensions without the extension', { other: { info: { id: ID } } }],
    ['the extension set to null', { [PAYMENT_IDENTIFIER]: null }],
    ['an info without id', carrying({ required: false })],
    ['an info whose id is null', carrying({ required: false, id: null })],
  ])('reads %s as absent', (_what, extensions) => {
    expect(readPaymentIdentifier(extensions)).toStrictEqual({ kind: 'absent' });
  });

  it.each([
    ['a string', 'x'],
    ['a number', 7],
    ['an object without info', {}],
    ['an object whose info is null', { info: null }],
    ['an object whose info is a string', { info: ID }],
    ['an object whose info is an array', { info: [ID] }],
  ])('refuses an extension that is %s, saying it needs an info object', (_what, extension) => {
    expect(readPaymentIdentifier({ [PAYMENT_IDENTIFIER]: extension })).toStrictEqual({
      kind: 'malformed',
      message: NOT_AN_INFO_OBJECT,
    });
  });

  it('takes extensions and the extension only as objects, not as a function carrying the same keys', () => {
    const extensions = Object.assign(() => undefined, carrying({ id: ID }));
    expect(readPaymentIdentifier(extensions)).toStrictEqual({ kind: 'absent' });
    const extension = Object.assign(() => undefined, { info: { id: ID } });
    expect(readPaymentIdentifier({ [PAYMENT_IDENTIFIER]: extension })).toStrictEqual({
      kind: 'malformed',
      message: NOT_AN_INFO_OBJECT,
    });
  });

  it.each([
    ['15 characters, one too short', 'a'.repeat(15)],
    ['129 characters, one too long', 'a'.repeat(129)],
    ['an empty string', ''],
    ['a forbidden character', `${ID.slice(0, -1)}!`],
    ['a space', `${ID.slice(0, 10)} ${ID.slice(11)}`],
    ['a non-ASCII letter', `${ID.slice(0, -1)}é`],
    ['a number', 1234567890123456],
    ['an object', { id: ID }],
  ])('refuses an identifier of %s, saying what one looks like', (_what, id) => {
    expect(readPaymentIdentifier(carrying({ id }))).toStrictEqual({ kind: 'malformed', message: BAD_ID });
  });
});
