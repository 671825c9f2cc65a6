package modelapi

import (
	"context"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The APIs a request can be in (Request.API).
const (
	Anthropic = "anthropic"
	Responses = "responses"
	Gemini    = "gemini"
)

// Usage is what every reply reports of its tokens, in each API's terms.
const (
	InputTokens    = 120
	CachedTokens   = 20
	OutputTokens   = 30
	ThinkingTokens = 8
	// A request beside the turn (Gemini CLI's routing classifier).
	SideInputTokens  = 12
	SideOutputTokens = 6
)

// Request is one request the Server answered.
type Request struct {
	API    string // Anthropic, Responses or Gemini; "" for none of them
	Method string
	Path   string // without the query
	Model  string // the model it asks for, "" when it names none
	// Reply is the index of the script's reply it got; -1 for a request
	// beside the turn (a HEAD, a token count, a routing classifier) or
	// one the exhausted script could not answer.
	Reply int
	// Exhausted reports that it came after the script's last reply.
	Exhausted bool
	// Tools are the names of the tools it offers the model (nested ones
	// included), ToolResults the text of every tool result it carries
	// back, in order: each request carries the whole conversation.
	Tools       []string
	ToolResults []string
	// Status is the HTTP status it was answered with.
	Status int
}

// Server is a model API on the loopback that plays a Script.
type Server struct {
	script Script
	vars   map[string]string
	ln     net.Listener
	srv    *http.Server
	// quit ends every stalled stream when the server closes.
	quit     chan struct{}
	quitOnce sync.Once

	mu       sync.Mutex
	requests []Request
	turns    int // the model requests so far
	// first is when the first reply of each kind went out, by Reply.Error
	// ("" for a stream).
	first map[string]time.Time
}

// Start serves script on 127.0.0.1 (a port of the OS's choosing) until
// Close. vars are the {{NAME}} placeholders of its texts and calls (the
// workspace's path, say).
func Start(script Script, vars map[string]string) (*Server, error) {
	if err := script.Check(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{script: script, vars: vars, ln: ln, quit: make(chan struct{}), first: map[string]time.Time{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base address: http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close ends every stream and connection at once and stops the server.
func (s *Server) Close() error {
	s.quitOnce.Do(func() { close(s.quit) })
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Requests returns every request answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Turns returns how many model requests took a reply of the script.
func (s *Server) Turns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(s.turns, s.scriptLen())
}

// FirstSent returns when the first reply with Error errName (or "", a
// stream) began to go out, and whether one did.
func (s *Server) FirstSent(errName string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.first[errName]
	return t, ok
}

func (s *Server) scriptLen() int {
	n := 0
	for _, r := range s.script.Replies {
		n += max(r.Times, 1)
	}
	return n
}

// take returns the next reply of the script, its index, and false once
// the script is exhausted.
func (s *Server) take() (Reply, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, i, ok := s.script.at(s.turns)
	s.turns++
	if ok {
		if _, seen := s.first[r.Error]; !seen {
			s.first[r.Error] = time.Now()
		}
	}
	return r.expand(s.vars), i, ok
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// maxBody bounds a request body: the CLIs send their whole conversation,
// system prompt and tool schemas, some hundreds of kilobytes.
const maxBody = 32 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "cannot read the request", http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Reply: -1}
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		req.Status = rec.status()
		s.record(req)
	}()
	switch {
	case r.Method == http.MethodHead || r.Method == http.MethodGet && r.URL.Path == "/":
		rec.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		req.API = Anthropic
		writeJSON(rec, http.StatusOK, map[string]any{"input_tokens": InputTokens})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		req.API = Anthropic
		var in anthropicRequest
		_ = json.Unmarshal(body, &in)
		req.Model, req.Tools, req.ToolResults = in.Model, in.toolNames(), in.toolResults()
		s.answer(r.Context(), rec, &req, anthropicDialect{model: in.Model, stream: in.Stream})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		req.API = Responses
		var in responsesRequest
		_ = json.Unmarshal(body, &in)
		req.Model, req.Tools, req.ToolResults = in.Model, in.toolNames(), in.toolResults()
		s.answer(r.Context(), rec, &req, responsesDialect{model: in.Model})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		req.API = Gemini
		model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
		var in geminiRequest
		_ = json.Unmarshal(body, &in)
		req.Model, req.Tools, req.ToolResults = model, in.toolNames(), in.toolResults()
		switch method {
		case "streamGenerateContent":
			s.answer(r.Context(), rec, &req, geminiDialect{model: model})
		case "generateContent":
			writeJSON(rec, http.StatusOK, in.sideAnswer(model))
		case "countTokens":
			writeJSON(rec, http.StatusOK, map[string]any{"totalTokens": InputTokens})
		default:
			writeGeminiError(rec, http.StatusNotFound, "NOT_FOUND", "the stand-in has no method "+method)
		}
	default:
		http.Error(rec, "the stand-in serves no "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

// dialect writes one reply in one API's terms.
type dialect interface {
	// fail answers with the API's HTTP error for Reply.Error.
	fail(w http.ResponseWriter, r Reply)
	// exhausted answers a request the script has no reply for.
	exhausted(w http.ResponseWriter)
	// play writes the reply's stream to st (calling st.firstPart after
	// the stream's first part, where a fault breaks it); n is the
	// reply's index in the script, which the stream's ids carry.
	play(st *sse, r Reply, n int)
}

// answer gives the request the script's next reply.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, req *Request, d dialect) {
	r, i, ok := s.take()
	if !ok {
		req.Exhausted = true
		d.exhausted(w)
		return
	}
	req.Reply = i
	if r.Error != "" {
		if r.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(r.RetryAfter))
		}
		d.fail(w, r)
		return
	}
	st := newSSE(w, func() { s.fault(ctx, w, r.Fault) })
	d.play(st, r, i)
}

// fault breaks a stream after its first part as the reply says: a
// malformed event, a stall until the client leaves or the server closes,
// or a dropped connection (the handler aborts: net/http closes the
// connection without ending the response).
func (s *Server) fault(ctx context.Context, w http.ResponseWriter, fault string) {
	flush(w)
	switch fault {
	case FaultMalformed:
		_, _ = io.WriteString(w, "event: message\ndata: {\"type\": \"cut off\n\n")
		flush(w)
	case FaultStall:
		select {
		case <-ctx.Done():
		case <-s.quit:
		}
		panic(http.ErrAbortHandler)
	case FaultDrop:
		panic(http.ErrAbortHandler)
	}
}

// sse writes server-sent events.
type sse struct {
	w       http.ResponseWriter
	started bool
	// first runs once, at the first call of firstPart.
	first func()
}

func newSSE(w http.ResponseWriter, first func()) *sse {
	return &sse{w: w, first: first}
}

// event writes one event: "event: NAME" (when name is not "") and its
// data, v as JSON.
func (s *sse) event(name string, v any) {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
	data, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(fmt.Sprintf("modelapi: an event of %T does not marshal: %v", v, err))
	}
	if name != "" {
		_, _ = io.WriteString(s.w, "event: "+name+"\n")
	}
	_, _ = io.WriteString(s.w, "data: "+string(data)+"\n\n")
	flush(s.w)
}

// firstPart marks the end of the stream's first part: the reply's fault,
// if any, happens here, once.
func (s *sse) firstPart() {
	if f := s.first; f != nil {
		s.first = nil
		f()
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(fmt.Sprintf("modelapi: a body of %T does not marshal: %v", v, err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// statusRecorder remembers the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() { flush(r.ResponseWriter) }

func (r *statusRecorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// httpStatus is the status of an error reply; overloaded is 529 for
// Anthropic, 503 elsewhere.
func httpStatus(errName, api string) int {
	switch errName {
	case ErrRateLimit:
		return http.StatusTooManyRequests
	case ErrUnauthorized:
		return http.StatusUnauthorized
	case ErrForbidden:
		return http.StatusForbidden
	case ErrOverloaded:
		if api == Anthropic {
			return 529
		}
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
