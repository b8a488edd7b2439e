export * from './buffer-response';
