export * from './adapter-helpers';
export * from './buffer-response';
