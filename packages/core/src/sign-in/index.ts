export type { CompiledSignIn } from './compile-sign-in';
export { declareSignIn, SIGN_IN_PROOF_JSON_SCHEMA } from './declaration';
export { createNonceIssuer, type NonceIssuer } from './nonce';
export {
  readSignInProof,
  SIGN_IN_EXTENSION,
  SIGN_IN_HEADER,
  type SignInProof,
  SignInProofSchema,
} from './proof';
export {
  type SchemeSignIn,
  SIGN_IN_DEFAULTS,
  type SignInOptions,
  type SignInPolicy,
  type SignInVerdict,
} from './types';
