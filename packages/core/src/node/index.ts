// @tollbooth/core/node: what an adapter for a Node HTTP framework is built from. Applications do
// not need it: the adapters (`@tollbooth/express`, `@tollbooth/fastify`, `@tollbooth/koa`) use it.

export { knownBodyText } from '../http/known-text';
export {
  applyGateHeaders,
  asBuffer,
  type HeaderTarget,
  headerNamesOf,
  sendableBody,
  toBodyBytes,
  toHandlerHeaders,
  toOriginForm,
} from './adapter-helpers';
export {
  captureResponse,
  type NodeRequestViewOptions,
  nodeHeaderTarget,
  type ResponseCapture,
  toRequestView,
  writeGateResponse,
} from './buffer-response';
export { peekRequestBody } from './peek-body';
export { asteriskFormRefusal } from './request-target';
