// What the ledger tells of the payments it resolves: the gate's hooks and the reconciler's share these two.
import type { RequestView } from '../http/types';
import type { PaymentIdentity } from '../scheme';
import type { LedgerEntry, LedgerResolution } from './types';

/** A transfer the ledger learnt of: one per payment that moved money, whoever confirmed it. */
export interface TransferEvent {
  /** The payment identity (ledger id). */
  id: PaymentIdentity;
  /** Route key. */
  route: string;
  network: string;
  payer?: string | undefined;
  transaction?: string | undefined;
  /**
   * Who confirmed it: `request` (the paying request's own settle), `retry` (a retry of an
   * uncertain payment: found on chain or settled again), `reconciler` (the background job).
   */
  via: 'request' | 'retry' | 'reconciler';
  /** The request whose settle or retry confirmed it; absent for the reconciler. */
  request?: RequestView | undefined;
}

/** The hooks called when the ledger records a transfer or resolves an entry, from a request or the reconciler. */
export interface LedgerHooks {
  /** Once per transfer, when the ledger records it as settled (metrics: transfers apart from replays). */
  onTransfer?(event: TransferEvent): void;
  /** The reconciler or a retry resolved an entry its own request could not (see `LedgerResolution`). */
  onResolved?(
    entry: Pick<LedgerEntry, 'id' | 'route' | 'network' | 'payer'>,
    resolution: LedgerResolution,
  ): void;
}
