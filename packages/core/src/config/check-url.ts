/** What `checkHttpUrl` accepts beyond a bare origin. */
export interface CheckHttpUrlOptions {
  /** Allow a query string (a facilitator or RPC URL may carry an API key there). Default false. */
  allowQuery?: boolean;
}

/**
 * Says what is wrong with a URL a setting must hold, or `undefined` when it is an absolute
 * http(s) URL without credentials or fragment (and without query unless allowed). The sentence
 * starts with `name` so it reads as one line of a configuration error.
 *
 * @example
 * checkHttpUrl('baseUrl', 'api.example.com') // 'baseUrl "api.example.com" is not an absolute http(s) URL'
 */
export function checkHttpUrl(
  name: string,
  value: unknown,
  options: CheckHttpUrlOptions = {},
): string | undefined {
  const shown = JSON.stringify(value);
  if (typeof value !== 'string' || !URL.canParse(value))
    return `${name} ${shown} is not an absolute http(s) URL`;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `${name} ${shown} is not an absolute http(s) URL`;
  if (url.username !== '' || url.password !== '')
    return `${name} ${shown} must not carry credentials (use the client's auth headers)`;
  if (value.includes('#')) return `${name} ${shown} must not have a fragment`;
  if (!options.allowQuery && value.includes('?')) return `${name} ${shown} must not have a query string`;
  return undefined;
}
