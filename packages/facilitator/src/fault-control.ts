import { type FacilitatorFaultMode, type FacilitatorFaultSetting, toFaultSetting } from './fault-modes';
import { FACILITATOR_FAULT_PROXY_DEFAULTS, type FacilitatorFaultProxyStats } from './fault-proxy';

/** Drives a fault proxy running in another process through its control endpoint. */
export interface FacilitatorFaultControl {
  setMode(mode: FacilitatorFaultMode | FacilitatorFaultSetting): Promise<FacilitatorFaultProxyStats>;
  stats(): Promise<FacilitatorFaultProxyStats>;
}

/**
 * A client for the control endpoint of a fault proxy (one started by the
 * `tollbooth-facilitator-fault-proxy` command, say).
 *
 * @example
 * const control = createFacilitatorFaultControl({ url: 'http://127.0.0.1:4022' });
 * await control.setMode({ mode: 'frozen', operations: ['settle'] });
 */
export function createFacilitatorFaultControl(options: {
  /** The proxy's base URL. */
  url: string;
  /** Default `/__fault`. */
  controlPath?: string;
}): FacilitatorFaultControl {
  const endpoint = `${options.url.replace(/\/+$/, '')}${options.controlPath ?? FACILITATOR_FAULT_PROXY_DEFAULTS.controlPath}`;
  const call = async (init?: RequestInit): Promise<FacilitatorFaultProxyStats> => {
    const response = await fetch(endpoint, init);
    const json = (await response.json()) as FacilitatorFaultProxyStats & { error?: string };
    if (!response.ok) throw new Error(`fault proxy control: HTTP ${response.status} ${json.error ?? ''}`);
    return json;
  };
  return {
    setMode: (mode) =>
      call({
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(toFaultSetting(mode)),
      }),
    stats: () => call(),
  };
}
