export * from './adapter-helpers';
export * from './buffer-response';
export * from './peek-body';
