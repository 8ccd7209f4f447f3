package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
)

const (
	// maxField bounds the value of an SSE id, event or retry field; a longer
	// one is dropped.
	maxField = 4 << 10
	// maxOtherData bounds the data of an event that is not a JSON-RPC
	// message (the legacy transport's "endpoint" event carries a URL).
	maxOtherData = 64 << 10
)

type sseField uint8

const (
	fieldIgnore sseField = iota
	fieldData
	fieldID
	fieldEvent
	fieldRetry
)

// sseFilter rewrites a text/event-stream body event by event, so that what
// go-sdk's event scanner reads is bounded like a stdio line:
//
//   - a "message" event (or one without a name) carries a JSON-RPC message
//     in its data; the data is bounded by a frame (per-call limit by id, else
//     max) and re-emitted as one data line, or replaced by a refusal, or
//     dropped (an over-long notification, non-JSON data);
//   - an "endpoint" event keeps its data if it is at most maxOtherData;
//   - other events lose their data, which go-sdk ignores anyway (streamable)
//     or would fail to decode, ending the session (legacy SSE);
//   - id and retry fields are kept (at most maxField bytes) so that
//     resumption works, also for events whose data was dropped; comments,
//     unknown fields and lines without a colon are dropped.
//
// It holds at most one event's data up to its limit, plus small fields.
type sseFilter struct {
	src   io.ReadCloser
	br    *bufio.Reader
	f     *frame
	log   *slog.Logger
	noise noise

	// The line being read.
	midLine bool // the line's start has been seen, its end not yet
	field   sseField
	small   []byte // value of an id, event or retry field
	long    bool   // that value passed maxField

	// The event being read.
	dataLines int
	other     []byte // the data's first maxOtherData bytes, for non-messages
	otherLong bool
	name      []byte
	id, retry []byte
	hasName   bool
	hasID     bool
	hasRetry  bool

	out [][]byte // the rewritten event, not yet read
	err error    // the source has ended

	// endpoint, when set, checks the data of an "endpoint" event; an error
	// ends the stream with it.
	endpoint func(data string) error
	fail     error
	// notes, when set, rate-limits messages that carry a method.
	notes *notifyLimiter
}

func newSSEFilter(src io.ReadCloser, max int64, limits *limitTable, log *slog.Logger) *sseFilter {
	return &sseFilter{
		src:   src,
		br:    bufio.NewReaderSize(src, readBufSize),
		f:     newFrame(max, limits),
		log:   log,
		noise: noise{log: log},
	}
}

func (s *sseFilter) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.next()
	}
	n := copy(p, s.out[0])
	if s.out[0] = s.out[0][n:]; len(s.out[0]) == 0 {
		s.out = s.out[1:]
	}
	return n, nil
}

func (s *sseFilter) Close() error { return s.src.Close() }

// next reads lines until an event has been rewritten into s.out, or the
// source ends; it then returns the source's error (the last event, if the
// source ended without a blank line, is in s.out).
func (s *sseFilter) next() error {
	for {
		chunk, err := s.br.ReadSlice('\n')
		complete := err == nil
		if !errors.Is(err, bufio.ErrBufferFull) {
			chunk = trimEOL(chunk)
		}
		if !s.midLine {
			if complete && len(chunk) == 0 {
				s.dispatch()
				if s.fail != nil {
					return s.fail
				}
				if len(s.out) > 0 {
					return nil
				}
				continue
			}
			chunk = s.startLine(chunk)
		}
		s.value(chunk)
		s.midLine = errors.Is(err, bufio.ErrBufferFull)
		if !s.midLine {
			s.endLine()
		}
		if err != nil && !s.midLine {
			if !errors.Is(err, io.EOF) {
				// The read failed inside an event (the body cut by a
				// cancelled call or a stopping mount, the connection
				// reset): what arrived is not what the server sent, so
				// it is dropped without blaming the server, which a
				// "non-JSON-RPC message" warning did at every stop with
				// reads in flight.
				if !s.f.empty() {
					s.log.Debug("SSE event cut off by a failed read dropped", "op", "read", "excerpt", s.f.excerpt(), "err", err)
				}
				s.clear()
				return err
			}
			// As go-sdk does, a stream that ends inside an event ends it.
			s.dispatch()
			if s.fail != nil {
				return s.fail
			}
			return err
		}
	}
}

// startLine reads the field name at the start of a line and returns the rest
// of the chunk, the start of the value.
func (s *sseFilter) startLine(chunk []byte) []byte {
	s.field = fieldIgnore
	name, value, found := bytes.Cut(chunk, []byte{':'})
	if !found || len(name) == 0 {
		// A comment (":…"), or a line go-sdk would call malformed (and end
		// the session for), or a field name longer than the read buffer.
		return nil
	}
	switch string(name) {
	case "data":
		s.field = fieldData
		if s.dataLines > 0 {
			s.data([]byte{'\n'})
		}
		s.dataLines++
	case "id":
		s.field = fieldID
	case "event":
		s.field = fieldEvent
	case "retry":
		s.field = fieldRetry
	}
	s.small, s.long = s.small[:0], false
	// As the SSE spec says; go-sdk trims all white space, which for JSON
	// data and for these fields comes to the same.
	value, _ = bytes.CutPrefix(value, []byte{' '})
	return value
}

// value takes the next piece of the current line's value.
func (s *sseFilter) value(v []byte) {
	switch s.field {
	case fieldData:
		s.data(v)
	case fieldID, fieldEvent, fieldRetry:
		if len(s.small)+len(v) > maxField {
			s.long = true
			return
		}
		s.small = append(s.small, v...)
	}
}

func (s *sseFilter) data(v []byte) {
	s.f.write(v)
	if len(s.other)+len(v) > maxOtherData {
		s.otherLong = true
	} else if !s.otherLong {
		s.other = append(s.other, v...)
	}
}

func (s *sseFilter) endLine() {
	if s.long {
		s.log.Warn("over-long SSE field dropped", "op", "read", "field", [...]string{fieldID: "id", fieldEvent: "event", fieldRetry: "retry"}[s.field])
	} else {
		v := bytes.TrimSpace(s.small)
		switch s.field {
		case fieldID:
			s.id, s.hasID = bytes.Clone(v), true
		case fieldEvent:
			s.name, s.hasName = bytes.Clone(v), true
		case fieldRetry:
			s.retry, s.hasRetry = bytes.Clone(v), true
		}
	}
	s.field = fieldIgnore
}

// dispatch rewrites the event read so far into s.out and starts the next.
func (s *sseFilter) dispatch() {
	var hdr []byte
	if s.hasName {
		hdr = append(append(append(hdr, "event: "...), s.name...), '\n')
	}
	if s.hasID {
		hdr = append(append(append(hdr, "id: "...), s.id...), '\n')
	}
	if s.hasRetry {
		hdr = append(append(append(hdr, "retry: "...), s.retry...), '\n')
	}
	var data [][]byte
	switch name := string(s.name); {
	case s.dataLines == 0 || s.f.empty():
	case name == "" || name == "message":
		data = s.message()
	case name == "endpoint" && !s.otherLong:
		if s.endpoint != nil {
			if err := s.endpoint(string(bytes.TrimSpace(s.other))); err != nil {
				s.log.Warn("SSE endpoint refused", "op", "connect", "err", err)
				s.fail, s.out = err, nil
				return
			}
		}
		for line := range bytes.SplitSeq(s.other, []byte{'\n'}) {
			data = append(data, []byte("data: "), bytes.TrimSpace(line), []byte{'\n'})
		}
	default:
		s.log.Debug("data of SSE event dropped", "op", "read", "event", name)
	}
	if len(hdr) > 0 || len(data) > 0 {
		s.out = append(append(s.out, hdr), data...)
		s.out = append(s.out, []byte{'\n'})
	}
	s.clear()
}

// clear forgets the event read so far.
func (s *sseFilter) clear() {
	s.f.reset()
	s.dataLines, s.other, s.otherLong = 0, s.other[:0], false
	s.name, s.id, s.retry = nil, nil, nil
	s.hasName, s.hasID, s.hasRetry = false, false, false
}

// message decides the fate of a JSON-RPC message event's data and returns
// its data line, or nothing.
func (s *sseFilter) message() [][]byte {
	if s.notes != nil && s.f.sc.method && !s.f.sc.bad && !s.notes.allow(s.f.head[:s.f.headN]) {
		return nil
	}
	data, v := s.f.finish()
	switch v {
	case refuse:
		refusedDebug(s.log, s.f)
	case dropLong:
		dropLongWarn(s.log, s.f)
		return nil
	case dropBad:
		s.noise.drop(s.f, nil)
		return nil
	case deliver:
		if !validJSON(data) {
			s.noise.drop(s.f, errors.New("invalid JSON"))
			return nil
		}
		// Data spread over several lines was joined with newlines, which
		// are white space between JSON tokens (a JSON string cannot hold
		// one): one line carries the same message.
		for rest := data; ; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			rest[i] = ' '
			rest = rest[i+1:]
		}
	}
	return [][]byte{[]byte("data: "), data, []byte{'\n'}}
}
