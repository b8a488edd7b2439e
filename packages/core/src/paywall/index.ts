export * from './create-browser-paywall';
export * from './paywall-options';
export * from './prefers-html';
export { PAYWALL_CSP, payableIndex, renderPaywallPage } from './render-paywall-page';
