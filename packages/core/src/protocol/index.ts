export * from './codec';
export * from './money';
export * from './schemas';
