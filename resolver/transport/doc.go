// Package transport owns the byte level of skillfs's MCP client connections:
// it carries JSON-RPC messages between a go-sdk ClientSession and a server,
// and bounds every inbound message before anything decodes it.
//
// go-sdk's own transports bound a message too, but end the session when a
// server exceeds the bound. A skills server that sends one file larger than
// it declared (threat model T6) must cost the caller that one read, not the
// connection. This package therefore replaces an over-long response by a
// JSON-RPC error response for the same request id, with code
// [CodeResponseTooLarge]; the session sees an ordinary failed call and goes
// on. [IsResponseTooLarge] recognises the error the SDK hands back.
//
// Two limits apply to a response. Options.MaxFrame caps every inbound
// message. [WithResponseLimit] puts a smaller limit on the context of one
// call (resources/read of a file whose size is declared); go-sdk passes the
// call's context to Connection.Write and, over HTTP, to the POST, where the
// limit is recorded against the request id and applied to the response with
// that id. The limit counts the raw bytes of the JSON-RPC message (the line
// without its newline, the SSE event's data, the HTTP JSON body).
//
// A third thing a call's context may carry: [WithContents] has the
// transport decode the text and blob strings of a resources/read result
// itself, once, from the frame it holds anyway, and hand go-sdk the message
// with "" in their place (contents.go). A message it does not follow
// exactly goes to go-sdk as it came. A plain application/json body is
// always left to go-sdk.
//
// The transports:
//
//   - [Command] runs a stdio server in its own process group and speaks
//     newline-delimited JSON over its stdin and stdout; its stderr goes to
//     the logger, and when it ends on its own, its exit status and the
//     last lines of its stderr (at most 20 and 4 KiB) go to
//     Options.OnExit. [Stream] speaks the same framing over any byte stream.
//     Their line reader holds at most one message up to its limit; past the
//     limit it stops buffering and keeps only a small scanner's state (the
//     top-level "id" and whether "method" appeared) to the end of the line.
//     Lines that are not JSON-RPC (a server logging to stdout) are dropped.
//   - [HTTPClient] returns an *http.Client for go-sdk's streamable HTTP and
//     legacy SSE client transports. Its RoundTripper adds configured headers,
//     learns the id and limit of each POSTed call, bounds application/json
//     bodies, and rewrites text/event-stream bodies event by event with the
//     same bounding. Limits are kept in one table per client, so a response
//     that arrives on the legacy SSE GET stream finds the limit its POST set.
//
// Every HTTP client talks to one origin, the configured URL's (scheme, host,
// port): same-origin redirects are followed (at most 5), and a redirect to
// another origin, a legacy SSE "endpoint" event naming one, or any other
// request elsewhere fails with [ErrCrossOrigin] before it is sent — so
// configured headers never leave the origin, and another server's answers
// never land under this origin's label.
//
// Messages from the server that carry a method (notifications, and
// requests to skillfs) pass at most notifyRate a second, in bursts of up to
// notifyBurst, per connection; the rest are dropped as soon as they are
// scanned, before decoding, with one warning per storm, and the reader
// pauses a millisecond after each drop so that a flood backs up into the
// server instead of costing the daemon a core. A dropped message that may
// have been list_changed calls Options.OnListChanged.
//
// Messages dropped rather than refused (no id, a notification, a server
// request, garbage) are logged at Warn. Nothing in this package allocates
// much more than twice the applicable limit for one message.
package transport
