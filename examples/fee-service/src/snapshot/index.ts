export * from './clock';
export * from './digest';
export * from './schemas';
export * from './service';
export * from './types';
export * from './validate';
