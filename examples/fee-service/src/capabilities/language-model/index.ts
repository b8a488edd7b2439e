export * from './grounding';
export * from './model';
export * from './prose';
export * from './tool-loop';
