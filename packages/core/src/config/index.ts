export * from './check-url';
