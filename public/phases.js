/**
 * The text of a game's phase on the dashboard, from its lifecycle messages:
 * betting (countdown to `betting_closes_at`), running (crash: the flight's multiplier from the
 * public formula m(t) = e^(0.00006 · speed · ms since betting closed); the other games draw), and
 * finished (until the next round opens). Times are the server's; the browser's clock is assumed in
 * step, as the latency figures assume.
 */

/** The crash multiplier `ms` after betting closed at ROUND_SPEED `speed`, floored to the cent. */
export function crashMultiplier(ms, speed = 1) {
  return Math.floor(Math.exp(0.00006 * speed * Math.max(0, ms)) * 100) / 100;
}

/**
 * @param {{phase: 'betting'|'running'|'finished', roundId: number, closesAt?: number, closedAt?: number, speed?: number} | null} p
 * @param {string} slug
 * @param {number} now Unix ms
 */
export function phaseText(p, slug, now) {
  if (!p) return '';
  if (p.phase === 'betting') {
    const left = Math.max(0, (p.closesAt ?? now) - now) / 1000;
    return `Betting · closes in ${left.toFixed(1)} s`;
  }
  if (p.phase === 'running') {
    if (slug === 'crash')
      return `Flying · ${crashMultiplier(now - (p.closedAt ?? now), p.speed).toFixed(2)}×`;
    return 'Betting closed · drawing';
  }
  return `Round ${p.roundId} finished · next soon`;
}
