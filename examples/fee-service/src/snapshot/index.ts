export * from './clock';
export * from './digest';
export * from './service';
export * from './types';
export * from './validate';
