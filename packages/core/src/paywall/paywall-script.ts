/**
 * The paywall page's browser script, as text: this project's TypeScript has no DOM types, and the
 * page must work with no bundler and no network. It reads the challenge and its settings from the
 * page's JSON elements, talks to the wallet through EIP-1193 (`window.ethereum`), signs one
 * EIP-3009 `TransferWithAuthorization` with `eth_signTypedData_v4`, and sends it in
 * `PAYMENT-SIGNATURE` to the page's own URL.
 *
 * What it does better than a plain "sign and fetch": it checks the chain and the token balance
 * before asking for a signature (nothing is signed that cannot pay); it keeps the signed payment
 * (in memory and in `sessionStorage`) until the server gives a final answer, so a 502, a lost
 * connection or a reload retries the same payload — the server's ledger answers a settled one
 * with the stored response — and never asks for a second signature; every failure says whether
 * anything was paid. The body carries `data-paywall-state` and the status `data-code` so tests
 * and scripts can follow it.
 */
export const PAYWALL_SCRIPT = `(function () {
  'use strict';
  var challenge = JSON.parse(document.getElementById('x402-challenge').textContent);
  var settings = JSON.parse(document.getElementById('x402-paywall').textContent);
  var requirement = settings.index >= 0 ? challenge.accepts[settings.index] : undefined;
  var byId = function (id) { return document.getElementById(id); };
  var statusBox = byId('paywall-status');
  var payButton = byId('paywall-pay');
  var switchButton = byId('paywall-switch');
  var retryButton = byId('paywall-retry');
  var storageKey = 'x402-paywall:' + location.href.split('#')[0];
  var signed = loadSigned();
  var busy = false;

  function setState(state, code, message) {
    document.body.setAttribute('data-paywall-state', state);
    statusBox.setAttribute('data-code', code || '');
    statusBox.className = 'status ' + (state === 'error' || state === 'retry' ? 'status-error' : state === 'paid' ? 'status-ok' : '');
    statusBox.textContent = message || '';
  }
  function show(button, visible) { button.hidden = !visible; }
  function chainName(id) {
    var known = settings.chainNames[String(id)];
    return known ? known + ' (chain ' + id + ')' : 'chain ' + id;
  }
  function formatUnits(value) {
    if (settings.decimals == null) return value.toString() + ' atomic units of ' + settings.token;
    var d = settings.decimals, s = value.toString().padStart(d + 1, '0');
    var whole = s.slice(0, s.length - d), fraction = s.slice(s.length - d).replace(/0+$/, '');
    return (fraction ? whole + '.' + fraction : whole) + ' ' + settings.token;
  }
  function loadSigned() {
    try {
      var saved = JSON.parse(sessionStorage.getItem(storageKey) || 'null');
      return saved && typeof saved.header === 'string' ? saved : null;
    } catch (e) { return null; }
  }
  function keepSigned(value) {
    signed = value;
    try {
      if (value) sessionStorage.setItem(storageKey, JSON.stringify(value));
      else sessionStorage.removeItem(storageKey);
    } catch (e) { /* private mode: memory only */ }
  }
  function base64(text) {
    var bytes = new TextEncoder().encode(text), binary = '';
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary);
  }
  function unbase64Json(value) {
    try {
      var binary = atob(value), bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) { return undefined; }
  }
  function hex(bytes) {
    return '0x' + Array.prototype.map.call(bytes, function (b) { return b.toString(16).padStart(2, '0'); }).join('');
  }
  function walletFailure(error, step) {
    var code = error && error.code;
    if (code === 4001) {
      if (step === 'sign') return setState('error', 'signature_refused', 'You declined the signature in your wallet. Nothing was signed or paid; press "Pay with wallet" to try again.');
      if (step === 'switch') return setState('error', 'switch_refused', 'You declined the network switch. Nothing was paid. This payment is on ' + chainName(settings.chainId) + '.');
      return setState('error', 'connection_refused', 'You declined to connect your wallet. Nothing was paid.');
    }
    if (code === -32002) return setState('error', 'wallet_busy', 'Your wallet already has a request waiting: open the wallet and answer it, then try again. Nothing was paid.');
    if (code === 4902 && step === 'switch') return unknownChain();
    var message = error && error.message ? error.message : String(error);
    setState('error', 'wallet_error', 'Your wallet answered with an error (' + message + '). Nothing was paid.');
  }
  function unknownChain() {
    if (!settings.addChain) {
      return setState('error', 'unknown_chain', 'Your wallet does not know ' + chainName(settings.chainId) + '. Add that network in your wallet, then press "Pay with wallet" again. Nothing was paid.');
    }
    var params = Object.assign({ chainId: '0x' + settings.chainId.toString(16) }, settings.addChain);
    return ethereum().request({ method: 'wallet_addEthereumChain', params: [params] })
      .then(function () { return pay(); }, function (error) { walletFailure(error, 'switch'); });
  }
  function ethereum() { return window.ethereum; }

  async function currentChain(wallet) {
    return parseInt(await wallet.request({ method: 'eth_chainId' }), 16);
  }
  async function balanceOf(wallet, owner) {
    try {
      var data = '0x70a08231' + owner.slice(2).toLowerCase().padStart(64, '0');
      var answer = await wallet.request({ method: 'eth_call', params: [{ to: requirement.asset, data: data }, 'latest'] });
      return typeof answer === 'string' && answer.length > 2 ? BigInt(answer) : undefined;
    } catch (e) { return undefined; } // the server judges the balance then
  }

  async function pay() {
    if (busy) return;
    if (signed) return send();
    if (!requirement) return setState('error', 'no_payment_option', 'This page cannot pay any of the payment options the server offers. Nothing was paid.');
    var wallet = ethereum();
    if (!wallet || typeof wallet.request !== 'function') {
      return setState('error', 'no_wallet', 'No browser wallet was found. Install a wallet extension that supports Ethereum (EIP-1193), reload this page and pay again. Nothing was paid.');
    }
    busy = true;
    payButton.disabled = true;
    try {
      setState('connecting', 'connecting', 'Asking your wallet for an account…');
      var accounts;
      try { accounts = await wallet.request({ method: 'eth_requestAccounts' }); }
      catch (error) { return walletFailure(error, 'connect'); }
      var from = accounts && accounts[0];
      if (!from) return setState('error', 'no_account', 'Your wallet gave no account. Unlock it and try again. Nothing was paid.');
      var chain;
      try { chain = await currentChain(wallet); } catch (error) { return walletFailure(error, 'connect'); }
      if (chain !== settings.chainId) {
        show(switchButton, true);
        return setState('error', 'wrong_chain', 'Your wallet is on ' + chainName(chain) + ', but this payment is on ' + chainName(settings.chainId) + '. Press "' + switchButton.textContent + '" and then pay. Nothing was paid.');
      }
      show(switchButton, false);
      var amount = BigInt(requirement.amount);
      setState('checking', 'checking', 'Checking your balance…');
      var balance = await balanceOf(wallet, from);
      if (balance !== undefined && balance < amount) {
        return setState('error', 'insufficient_balance', 'Your account ' + from + ' holds ' + formatUnits(balance) + ', and this costs ' + formatUnits(amount) + '. Add funds on ' + chainName(settings.chainId) + ' and try again. Nothing was signed or paid.');
      }
      var now = Math.floor(Date.now() / 1000);
      var authorization = {
        from: from,
        to: requirement.payTo,
        value: requirement.amount,
        validAfter: '0',
        validBefore: String(now + requirement.maxTimeoutSeconds),
        nonce: hex(crypto.getRandomValues(new Uint8Array(32))),
      };
      var typedData = {
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' }, { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' },
          ],
          TransferWithAuthorization: [
            { name: 'from', type: 'address' }, { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' }, { name: 'validAfter', type: 'uint256' },
            { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        domain: {
          name: requirement.extra && requirement.extra.name,
          version: requirement.extra && requirement.extra.version,
          chainId: settings.chainId,
          verifyingContract: requirement.asset,
        },
        message: authorization,
      };
      setState('signing', 'signing', 'Confirm the signature in your wallet: ' + formatUnits(amount) + ' to ' + requirement.payTo + '.');
      var signature;
      try { signature = await wallet.request({ method: 'eth_signTypedData_v4', params: [from, JSON.stringify(typedData)] }); }
      catch (error) { return walletFailure(error, 'sign'); }
      var payload = { x402Version: 2, payload: { signature: signature, authorization: authorization }, resource: challenge.resource, accepted: requirement };
      if (challenge.extensions) payload.extensions = challenge.extensions;
      keepSigned({ header: base64(JSON.stringify(payload)), validBefore: Number(authorization.validBefore) });
    } finally {
      busy = false;
      payButton.disabled = false;
    }
    return send();
  }

  async function send() {
    if (busy || !signed) return;
    busy = true;
    payButton.disabled = true;
    retryButton.disabled = true;
    show(retryButton, false);
    setState('paying', 'paying', 'Sending your signed payment…');
    try {
      var response;
      try {
        response = await fetch(location.href.split('#')[0], {
          headers: { 'PAYMENT-SIGNATURE': signed.header, Accept: 'application/json' },
          cache: 'no-store',
          credentials: 'same-origin',
        });
      } catch (error) {
        show(retryButton, true);
        return setState('retry', 'network_error', 'The server could not be reached after you signed. Press "Retry": the same signed payment is sent again, you are not asked to sign again and cannot be charged twice.');
      }
      if (response.ok) return paid(response);
      var body = await response.json().catch(function () { return undefined; });
      var error = body && typeof body.error === 'object' ? body.error : undefined;
      var code = error ? error.code : body && typeof body.error === 'string' ? body.error : undefined;
      var message = error && error.message ? error.message : response.statusText;
      var sameAgain = (error && error.retry && error.retry.instruction === 'retry_exact_payment_payload') || response.status === 502;
      if (sameAgain) {
        show(retryButton, true);
        return setState('retry', 'settlement_uncertain', 'Your signed payment reached the server, but its settlement is not confirmed yet (HTTP ' + response.status + (code ? ', ' + code : '') + '). Press "Retry": the same signed payment is sent again, you are not asked to sign again and cannot be charged twice.');
      }
      if (response.status === 402) {
        keepSigned(null); // refused for good: a new payment needs a new signature
        var receipt = unbase64Json(response.headers.get('PAYMENT-RESPONSE') || '');
        var reason = (receipt && receipt.errorReason) || code || 'payment_refused';
        if (/insufficient/.test(reason)) {
          return setState('error', 'insufficient_balance', 'The payment was refused: your account does not hold ' + formatUnits(BigInt(requirement.amount)) + ' on ' + chainName(settings.chainId) + '. Nothing was charged.');
        }
        return setState('error', 'payment_refused', 'The server refused the payment (' + reason + '). Nothing was charged; press "Pay with wallet" to sign a new one.');
      }
      var answered = 'The server answered HTTP ' + response.status + (code ? ' (' + code + ')' : '') + ': ' + message + '.';
      if (response.status >= 500) {
        // A server failure may come after the transfer: only the codes said before any payment
        // mean nothing was charged, and the same signed payment is kept for a retry either way.
        show(retryButton, true);
        var before = code === 'facilitator_unavailable' || code === 'ledger_unavailable';
        return setState('retry', 'http_' + response.status, answered + (before ? ' Nothing was charged.' : '') + ' Press "Retry": the same signed payment is sent again, you are not asked to sign again and cannot be charged twice.');
      }
      keepSigned(null);
      setState('error', 'http_' + response.status, answered + ' Nothing was charged.');
    } finally {
      busy = false;
      payButton.disabled = false;
      retryButton.disabled = false;
    }
  }

  async function paid(response) {
    keepSigned(null);
    var receipt = unbase64Json(response.headers.get('PAYMENT-RESPONSE') || '') || {};
    var transaction = receipt.transaction || '';
    var link = byId('paywall-transaction');
    link.textContent = transaction || '(no transaction in the receipt)';
    if (transaction && settings.explorerTxUrl) link.setAttribute('href', settings.explorerTxUrl.replace('{hash}', transaction));
    else link.removeAttribute('href');
    var type = response.headers.get('content-type') || '';
    var answer = byId('paywall-answer');
    if (/^image\\//.test(type)) {
      var image = document.createElement('img');
      image.alt = 'The paid answer';
      image.src = URL.createObjectURL(await response.blob());
      answer.replaceWith(image);
    } else {
      var text = await response.text();
      if (/json/.test(type)) { try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* as sent */ } }
      answer.textContent = text;
    }
    byId('paywall-offer').hidden = true;
    byId('paywall-title').textContent = 'Paid';
    byId('paywall-result').hidden = false;
    setState('paid', 'paid', 'Paid. Transaction ' + (transaction || 'not reported') + '.');
    byId('paywall-result-heading').focus();
  }

  payButton.addEventListener('click', function () { pay(); });
  retryButton.addEventListener('click', function () { send(); });
  switchButton.addEventListener('click', async function () {
    var wallet = ethereum();
    if (!wallet) return pay();
    try {
      await wallet.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: '0x' + settings.chainId.toString(16) }] });
    } catch (error) { return walletFailure(error, 'switch'); }
    show(switchButton, false);
    setState('idle', 'switched', 'Your wallet is on ' + chainName(settings.chainId) + ' now.');
    return pay();
  });
  if (window.ethereum && typeof window.ethereum.on === 'function') {
    window.ethereum.on('chainChanged', function (id) {
      if (parseInt(id, 16) === settings.chainId && statusBox.getAttribute('data-code') === 'wrong_chain') {
        show(switchButton, false);
        setState('idle', 'switched', 'Your wallet is on ' + chainName(settings.chainId) + ' now: press "Pay with wallet".');
      }
    });
  }
  if (signed) {
    show(retryButton, true);
    setState('retry', 'pending_payment', 'A payment you signed for this page has no final answer yet. Press "Retry" to send the same signed payment again (no new signature, no second charge).');
  } else {
    setState('idle', '', '');
  }
})();
`;
