export * from './codes';
export * from './error-body';
export * from './tollbooth-error';
