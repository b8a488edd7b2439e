/**
 * Whether an `Accept` header asks for a page rather than data: it names `text/html` (or
 * `application/xhtml+xml`) with a quality above zero, and does not name `application/json`. A
 * browser navigation sends `text/html,…,*\/*;q=0.8`; machine clients send `*\/*`,
 * `application/json` or nothing, so they keep the JSON 402 whatever their User-Agent.
 *
 * @example
 * prefersHtml('text/html,application/xhtml+xml,*\/*;q=0.8') // true
 * prefersHtml('application/json, text/html') // false
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  let html = false;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const media = type.trim().toLowerCase();
    if (media !== 'text/html' && media !== 'application/xhtml+xml' && media !== 'application/json') continue;
    let quality = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name?.trim().toLowerCase() === 'q') quality = Number(value?.trim());
    }
    if (!(quality > 0)) continue;
    if (media === 'application/json') return false;
    html = true;
  }
  return html;
}
