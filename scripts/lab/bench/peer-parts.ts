/** The parts of the peers bench, which `--parts` picks from (all by default). */
export const PEER_PARTS = ['idle', 'backlog', 'live', 'memory'] as const;
export type PeerPart = (typeof PEER_PARTS)[number];

export function peerPart(v: string): PeerPart {
  if ((PEER_PARTS as readonly string[]).includes(v)) return v as PeerPart;
  throw new Error(`--parts: unknown part ${JSON.stringify(v)}; choose from ${PEER_PARTS.join(', ')}`);
}
