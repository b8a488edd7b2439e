export * from './caip2';
export * from './codec';
export * from './money';
export * from './payment-identifier';
export * from './schemas';
export * from './well-formed-payload';
