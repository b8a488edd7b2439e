/** Block subsidy in sats at a height: 50 BTC halved every 210,000 blocks (3.125 BTC from 840,000). */
export function subsidyAt(height: number): number {
  const halvings = Math.floor(height / 210_000);
  return halvings >= 64 ? 0 : Math.floor(5_000_000_000 / 2 ** halvings);
}
