export { FAULT_AUDITS } from './audits';
export { type FaultKit, type StartFaultKitOptions, startFaultKit } from './kit';
export { type FaultTarget, type RunFaultAuditsOptions, runFaultAudits } from './run';
export { paymentFor, receiptOf, type ServerPayment } from './server-payment';
export type { FaultAudit, FaultAuditContext, FaultExpectation, FaultSwitch } from './types';
