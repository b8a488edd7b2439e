// @tollbooth/core/testing: doubles for testing code built on the gate. The scripted facilitator
// stands in for an outside service; the simple scheme checks payloads structurally only.

export * from './response-head';
export * from './scripted-facilitator';
export * from './simple-scheme';
