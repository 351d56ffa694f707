'use strict'
// The MCP TypeScript SDK (`@modelcontextprotocol/sdk`), both sides.
//
// Host side, `auditClient`: every `tools/list` the client requests feeds
// the catalogue (every page; `notifications/tools/list_changed` forgets it),
// and each `tools/call` is audited before it is sent, unchanged.
//
// Server side, `auditServer`: each incoming `tools/call` request is audited
// as it arrives, before the SDK parses it and before an `McpServer`'s zod
// schema strips the keys it does not declare, against the server's own
// listing (read from its own `tools/list` handler, again after
// `sendToolListChanged`). The handler receives exactly what it did before.
//
// Both hook the SDK's `Protocol` where every message passes (`request`,
// `_onnotification`, `_onrequest`): the SDK version this is tested against
// is pinned in package.json.
const { auditorFor, auditorOf, auditors, quietly } = require('./common.js')

const LIST_CHANGED = 'notifications/tools/list_changed'

/**
 * Audits a `Client`'s tool calls; returns the same client.
 * @param {import('@modelcontextprotocol/sdk/client/index.js').Client} client
 */
function auditClient(client, options = {}) {
  const auditor = auditorFor(options)
  // `listTools`, `callTool` and a host's own requests all go through
  // `request`: each listing page feeds the catalogue, each call is audited
  // before it is sent.
  const request = client.request
  client.request = function (message, ...rest) {
    const params = message?.params
    if (message?.method === 'tools/call') quietly(() => auditor.audit(params?.name, params?.arguments ?? {}))
    const answered = request.call(this, message, ...rest)
    if (message?.method !== 'tools/list') return answered
    return answered.then((result) => {
      quietly(() => auditor.listPage(result, { first: !params?.cursor, more: Boolean(result?.nextCursor) }))
      return result
    })
  }
  const onnotification = client._onnotification
  client._onnotification = function (notification) {
    if (notification?.method === LIST_CHANGED) auditor.clearCatalog()
    return onnotification.call(this, notification)
  }
  auditors.set(client, auditor)
  return client
}

/** How long the server's own listing is awaited by default, in milliseconds. */
const LISTING_TIMEOUT_MS = 5000
/** The most calls that await the server's own listing at once. */
const MAX_WAITING_CALLS = 1000

/**
 * Audits the tool calls an `McpServer` or a `Server` receives; returns the
 * same server.
 *
 * A call that arrives before the server's own listing is read waits for
 * it, off the call's path (the call goes on at once), for at most
 * `options.listingTimeout` milliseconds (5000), and at most 1000 calls
 * wait. A listing that fails, or does not answer in time, and calls past
 * that bound are said once on stderr, and those calls are counted as
 * unaudited with reason `no_catalogue` (the catalogue is forgotten until
 * a listing is read): coverage never says complete for them.
 */
function auditServer(server, options = {}) {
  const auditor = auditorFor(options)
  const protocol = server.server ?? server
  const timeout = options.listingTimeout ?? LISTING_TIMEOUT_MS
  const sayOnce = onceEach()
  // The catalogue is the server's own listing, read again when it changes.
  let ready = null
  let listings = 0
  let waiting = 0
  const relist = () => {
    const listing = ++listings
    auditor.clearCatalog()
    const listed = listOwnTools(protocol, auditor, () => listing === listings).then(
      () => 'listed',
      () => {
        if (listing === listings) auditor.clearCatalog()
        return 'failed'
      },
    )
    let timer
    const late = new Promise((resolve) => {
      timer = setTimeout(resolve, timeout, 'late')
      timer.unref?.()
    })
    return Promise.race([listed, late]).then((how) => {
      clearTimeout(timer)
      if (how === 'failed') sayOnce("the server's own tools/list failed; its calls go on unaudited (no_catalogue) until its tools change")
      if (how === 'late') sayOnce(`the server's own tools/list has not answered in ${timeout} ms; its calls go on unaudited (no_catalogue) until it does`)
    })
  }
  for (const target of new Set([server, protocol])) {
    const sendToolListChanged = target.sendToolListChanged
    if (typeof sendToolListChanged !== 'function') continue
    target.sendToolListChanged = function (...args) {
      ready = null
      return sendToolListChanged.apply(this, args)
    }
  }
  const onrequest = protocol._onrequest
  protocol._onrequest = function (request, extra) {
    if (request?.method === 'tools/call') {
      // Held as it arrived: what the SDK parses is a copy of it.
      const params = request.params
      const audit = () => quietly(() => auditor.audit(params?.name, params?.arguments ?? {}, request.id))
      ready ??= relist()
      if (waiting < MAX_WAITING_CALLS) {
        waiting++
        ready.then(() => {
          waiting--
          audit()
        })
      } else {
        sayOnce(`${MAX_WAITING_CALLS} calls await the server's own tools/list; further calls go on unaudited (no_catalogue) until it answers`)
        audit()
      }
    }
    return onrequest.call(this, request, extra)
  }
  auditors.set(server, auditor)
  if (protocol !== server) auditors.set(protocol, auditor)
  return server
}

/** Says each text once on stderr. */
function onceEach() {
  const said = new Set()
  return (text) => {
    if (said.has(text)) return
    said.add(text)
    process.stderr.write(`mcp-unknown-keys: ${text}\n`)
  }
}

/**
 * Every page of the server's own listing, from its own handler, each fed
 * to the auditor while `current()` (a later listing has not begun).
 */
async function listOwnTools(protocol, auditor, current) {
  const handler = protocol._requestHandlers?.get('tools/list')
  if (!handler) throw new Error('no tools/list handler')
  const signal = new AbortController().signal
  let cursor
  let first = true
  do {
    const request = { jsonrpc: '2.0', id: 'mcp-unknown-keys', method: 'tools/list', params: cursor ? { cursor } : {} }
    const result = await handler(request, { signal, requestId: request.id, sendNotification: async () => {}, sendRequest: async () => { throw new Error('not in a session') } })
    if (!current()) return
    auditor.listPage(result, { first, more: Boolean(result?.nextCursor) })
    cursor = result?.nextCursor
    first = false
  } while (cursor)
}

module.exports = { auditClient, auditServer, auditorOf }
