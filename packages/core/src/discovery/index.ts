// Discovery: the catalog listing, the well-known payment document, OpenAPI and the bazaar
// extension, all built from the route table that drives the gate.

export * from './bazaar';
export * from './catalog';
export * from './create-discovery';
export * from './json-schema';
export * from './openapi';
export * from './paths';
export * from './responder';
export {
  availabilityOf,
  DEFAULT_USD_ASSETS,
  type DiscoverableRoute,
  type DiscoverableTable,
  pathParamNames,
  priceUsdOf,
  type RouteFacts,
  routeFacts,
  type TableSource,
  toTemplatePath,
} from './route-view';
export * from './well-known';
