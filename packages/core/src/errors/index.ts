export * from './codes';
export * from './config-error';
export * from './error-body';
export * from './tollbooth-error';
export * from './walk';
