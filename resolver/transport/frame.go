package transport

import "github.com/modelcontextprotocol/go-sdk/jsonrpc"

// excerptLen is how much of a dropped message is kept for the log line.
const excerptLen = 120

// keepBuf is the largest buffer a frame keeps for the next message; a larger
// one is left to the garbage collector rather than pinned for the session.
const keepBuf = 64 << 10

// A frame accumulates one inbound message, fed in pieces, and decides what
// becomes of it: delivered as is, replaced by a refusal, or dropped.
//
// It buffers at most the limit that applies to the message. That limit is
// max (MaxFrame) until the scanner has seen the message's id and a "result"
// or "error" member — then it is the smaller limit its call registered, if
// any. Past the limit the frame releases its buffer and only scans on.
type frame struct {
	max    int64
	limits *limitTable

	buf   []byte
	n     int64 // bytes of the message fed so far
	over  bool  // n exceeded the limit; buf has been released
	limit int64
	sc    idScanner

	key  scanKey // scanner state the limit was last computed for
	id   jsonrpc.ID
	idOK bool

	head  [excerptLen]byte
	headN int

	// peak is the largest buffer capacity this frame has held; tests read it.
	peak int
}

func newFrame(max int64, limits *limitTable) *frame {
	return &frame{max: max, limits: limits, limit: max}
}

// reset readies f for the next message, keeping a small buffer.
func (f *frame) reset() {
	buf := f.buf[:0]
	if cap(buf) > keepBuf {
		buf = nil
	}
	*f = frame{max: f.max, limits: f.limits, limit: f.max, buf: buf, peak: f.peak}
}

// empty says nothing but white space has been fed.
func (f *frame) empty() bool { return f.sc.phase == phStart }

func (f *frame) write(p []byte) {
	f.n += int64(len(p))
	if f.headN < len(f.head) {
		f.headN += copy(f.head[f.headN:], p)
	}
	if !f.sc.done() {
		f.sc.feed(p)
	}
	f.refreshLimit()
	switch {
	case f.over:
	case f.n > f.limit:
		f.over = true
		f.buf = nil
	case f.sc.bad:
		// Not JSON-RPC: nothing of it will be decoded, so nothing of it
		// needs keeping.
		f.buf = nil
	default:
		f.buf = appendCapped(f.buf, p, f.limit)
		f.peak = max(f.peak, cap(f.buf))
	}
}

// scanKey is what the limit of a message depends on.
type scanKey struct {
	idGen            int
	response, method bool
}

// refreshLimit applies the limit registered for the message's id once the
// message shows itself to be a response.
func (f *frame) refreshLimit() {
	k := scanKey{f.sc.idGen, f.sc.response, f.sc.method}
	if f.limits == nil || k == f.key {
		return
	}
	if k.idGen != f.key.idGen {
		f.idOK = false
		if raw, ok := f.sc.usableID(); ok {
			f.id, f.idOK = parseID(raw)
		}
	}
	f.key = k
	f.limit = f.max
	if f.idOK && k.response && !k.method {
		if l, ok := f.limits.get(f.id); ok && l < f.limit {
			f.limit = l
		}
	}
}

type verdict uint8

const (
	deliver  verdict = iota // data is the message, within its limit
	refuse                  // data is a refusal in place of an over-long response
	dropLong                // over the limit, and no id to answer: dropped
	dropBad                 // not a JSON object or array: dropped
)

// finish decides the message's fate once all of it has been written. For a
// response it also forgets the registered limit of its id. (A response whose
// "result" came before its "id" was bounded by max until the id appeared,
// and is checked against its own limit as soon as it did.)
func (f *frame) finish() (data []byte, v verdict) {
	var sink *Contents
	if f.limits != nil && f.idOK && !f.sc.method {
		sink = f.limits.take(f.id)
	}
	raw, answerable := f.sc.usableID()
	if answerable {
		// The refusal must decode to the same id, or go-sdk would end the
		// session over it (a number like 1e999 is valid JSON but no id).
		_, answerable = parseID(raw)
	}
	switch {
	case f.over && answerable:
		return refusal(raw, f.limit), refuse
	case f.sc.bad:
		return nil, dropBad
	case f.over:
		return nil, dropLong
	case sink != nil && f.sc.response:
		return takeContents(f.buf, sink), deliver
	}
	return f.buf, deliver
}

// excerpt is the start of the message, for a log line.
func (f *frame) excerpt() string { return string(f.head[:f.headN]) }

// appendCapped appends p to buf, growing it at most to limit bytes so that a
// message near the limit does not make append double past it. The caller
// guarantees len(buf)+len(p) <= limit.
func appendCapped(buf, p []byte, limit int64) []byte {
	need := len(buf) + len(p)
	if need > cap(buf) {
		c := max(2*cap(buf), need, 4096)
		if int64(c) > limit {
			c = int(limit)
		}
		nb := make([]byte, len(buf), c)
		copy(nb, buf)
		buf = nb
	}
	return append(buf, p...)
}
