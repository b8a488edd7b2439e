import { describe, expect, it } from 'vitest';
import type { ChainStatus } from '../scheme';
import { ACCEPTS, createGateHarness } from '../test-support/gate-harness';
import type { SimpleScheme } from '../test-support/simple-scheme';

/** A gate selling on two networks, its scheme's chain status per network as given. */
function gateWith(status: (network: string) => Promise<ChainStatus>) {
  const h = createGateHarness({
    routes: {
      'GET /a': { accepts: ACCEPTS },
      'GET /b': { accepts: [ACCEPTS, { ...ACCEPTS, network: 'eip155:84532' }] },
    },
  });
  (h.scheme as SimpleScheme & { chainStatus?: unknown }).chainStatus = status;
  return h;
}

describe('gate.readiness', () => {
  it('is ready when the facilitator and the chain reader of every paid network answer, each network once', async () => {
    const asked: string[] = [];
    const h = gateWith(async (network) => {
      asked.push(network);
      return { ok: true, blockNumber: 1 };
    });
    expect(await h.gate.readiness()).toEqual({
      ready: true,
      facilitator: { ok: true },
      chain: { 'eip155:8453': { ok: true }, 'eip155:84532': { ok: true } },
    });
    expect(asked.sort()).toEqual(['eip155:8453', 'eip155:84532']);
  });

  it('is not ready when one network does not answer, and says why for that network', async () => {
    const h = gateWith(async (network) =>
      network === 'eip155:84532' ? { ok: false, message: 'node is syncing' } : { ok: true },
    );
    expect(await h.gate.readiness()).toEqual({
      ready: false,
      facilitator: { ok: true },
      chain: { 'eip155:8453': { ok: true }, 'eip155:84532': { ok: false, detail: 'node is syncing' } },
    });
  });

  it('reports a chain reader that throws with its message, or what it threw', async () => {
    const h = gateWith(async (network) => {
      if (network === 'eip155:8453') throw new Error('connection refused');
      throw 'gone';
    });
    expect((await h.gate.readiness()).chain).toEqual({
      'eip155:8453': { ok: false, detail: 'connection refused' },
      'eip155:84532': { ok: false, detail: 'gone' },
    });
  });

  it('is not ready when the facilitator does not answer, though every chain does', async () => {
    const h = gateWith(async () => ({ ok: true }));
    h.facilitator.supported = async () => {
      throw new Error('HTTP 503');
    };
    expect(await h.gate.readiness()).toEqual({
      ready: false,
      facilitator: { ok: false, detail: 'HTTP 503' },
      chain: { 'eip155:8453': { ok: true }, 'eip155:84532': { ok: true } },
    });
  });

  it('counts a network whose scheme has no chain reader as not ready', async () => {
    const h = createGateHarness({ routes: { 'GET /a': { accepts: ACCEPTS } } });
    expect(await h.gate.readiness()).toEqual({
      ready: false,
      facilitator: { ok: true },
      chain: { 'eip155:8453': { ok: false, detail: 'no chain reader for eip155:8453' } },
    });
  });
});
