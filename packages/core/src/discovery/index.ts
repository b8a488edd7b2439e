// @tollbooth/core/discovery: the catalog listing, the well-known payment document, OpenAPI and the
// bazaar extension, all built from the route table that drives the gate.

export {
  addBazaarExtensions,
  type BazaarExtension,
  type BazaarExtensionOptions,
  type BazaarInput,
  createBazaarExtension,
  toHeaderBazaarExtension,
} from './bazaar';
export {
  CATALOG_DEFAULTS,
  type CatalogAccept,
  type CatalogInput,
  type CatalogItem,
  type CatalogListing,
  type CatalogOutput,
  type CatalogQuery,
  CatalogQueryError,
  createResourceCatalog,
  type ResourceCatalog,
  type ResourceCatalogOptions,
} from './catalog';
export { createDiscovery, type Discovery, type DiscoveryOptions } from './create-discovery';
export { type JsonSchema, type ParameterDescriptor, type SchemaDirection, toJsonSchema } from './json-schema';
export {
  buildOpenApiDocument,
  createOpenApiDocument,
  type FreeRoute,
  OPENAPI_DEFAULTS,
  type OpenApiDocument,
  type OpenApiOptions,
  type OpenApiSource,
} from './openapi';
export { DEFAULT_DISCOVERY_PATHS, type DiscoveryPaths } from './paths';
export {
  createDiscoveryResponder,
  DISCOVERY_RESPONDER_DEFAULTS,
  type DiscoveryRequest,
  type DiscoveryResponder,
  type DiscoveryResponderOptions,
  type DiscoveryResponse,
} from './responder';
export {
  DEFAULT_USD_ASSETS,
  type DiscoverableRoute,
  type DiscoverableTable,
  priceUsdOf,
  type TableSource,
  toTemplatePath,
} from './route-view';
export {
  buildWellKnownDocument,
  createWellKnownDocument,
  type PaidEndpoint,
  WELL_KNOWN_DEFAULTS,
  type WellKnownDocument,
  type WellKnownOptions,
  type WellKnownSource,
} from './well-known';
