package modelapi

import (
	"bytes"
	"context"
	"encoding/json/v2"
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

// The tokens every reply reports, in each API's terms; Side* those of a
// request beside the turn (Gemini CLI's routing classifier).
const (
	InputTokens      = 120
	CachedTokens     = 20
	OutputTokens     = 30
	ThinkingTokens   = 8
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
	// beside the turn or one after the script's last reply (Exhausted).
	Reply     int
	Exhausted bool
	// Tools are the names of the tools it offers the model (nested ones
	// included), ToolResults the text of every tool result it carries
	// back, in order: each request carries the whole conversation.
	Tools       []string
	ToolResults []string
	// Mentioned are the script's watched words its body holds, in the
	// script's order.
	Mentioned []string
	Status    int // the HTTP status it was answered with
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
	turns    int                  // the model requests so far, answered or not
	first    map[string]time.Time // by Reply.Error: when the first went out
}

// Start serves script on 127.0.0.1 (a port the OS chooses) until Close.
// vars are its texts' and calls' {{NAME}} placeholders (the workspace's
// path, say).
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
	return s.srv.Close()
}

// Requests returns every request answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// FirstSent returns when the first reply with Error errName (or "", a
// stream) began to go out, and whether one did.
func (s *Server) FirstSent(errName string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.first[errName]
	return t, ok
}

// take returns the script's next reply, its index, and false once none
// is left.
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
	for _, w := range s.script.Watch {
		if bytes.Contains(body, []byte(w)) {
			req.Mentioned = append(req.Mentioned, w)
		}
	}
	rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
	defer func() {
		req.Status = rec.code
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
	}()
	switch {
	case r.Method == http.MethodHead || r.Method == http.MethodGet && r.URL.Path == "/":
		rec.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		req.API = Anthropic
		writeJSON(rec, http.StatusOK, map[string]any{"input_tokens": InputTokens})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		var in anthropicRequest
		req.read(Anthropic, body, &in)
		s.answer(r.Context(), rec, &req, anthropicDialect{model: in.Model, stream: in.Stream})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		var in responsesRequest
		req.read(Responses, body, &in)
		s.answer(r.Context(), rec, &req, responsesDialect{model: in.Model})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
		in := geminiRequest{model: model}
		req.read(Gemini, body, &in)
		switch method {
		case "streamGenerateContent":
			s.answer(r.Context(), rec, &req, geminiDialect{model: model})
		case "generateContent":
			writeJSON(rec, http.StatusOK, in.sideAnswer())
		case "countTokens":
			writeJSON(rec, http.StatusOK, map[string]any{"totalTokens": InputTokens})
		default:
			writeGeminiError(rec, http.StatusNotFound, "NOT_FOUND", "the stand-in has no method "+method)
		}
	default:
		http.Error(rec, "the stand-in serves no "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

// modelRequest is what the stand-in reads of a model request's body.
type modelRequest interface {
	modelName() string
	toolNames() []string
	toolResults() []string
}

// read records what body, a request of api, says (a body that does not
// parse says nothing).
func (req *Request) read(api string, body []byte, in modelRequest) {
	_ = json.Unmarshal(body, in)
	req.API, req.Model, req.Tools, req.ToolResults = api, in.modelName(), in.toolNames(), in.toolResults()
}

// dialect writes one reply in one API's terms: fail its HTTP error for
// Reply.Error, exhausted its answer once the script has none left, play
// its stream (calling st.firstPart where a fault breaks it; the ids
// carry n, the reply's index).
type dialect interface {
	fail(w http.ResponseWriter, r Reply)
	exhausted(w http.ResponseWriter)
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
	d.play(&sse{w: w, first: func() { s.fault(ctx, w, r.Fault) }}, r, i)
}

// fault breaks a stream after its first part (Reply.Fault); to drop the
// connection the handler aborts: net/http closes it without ending the
// response.
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
	first   func() // run by the first firstPart
}

// event writes one event: "event: NAME" unless name is "", and v as data.
func (s *sse) event(name string, v any) {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
	if name != "" {
		_, _ = io.WriteString(s.w, "event: "+name+"\n")
	}
	_, _ = io.WriteString(s.w, "data: "+string(marshal(v))+"\n\n")
	flush(s.w)
}

// firstPart marks the end of the stream's first part.
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
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(v))
}

// marshal is v as JSON, its members sorted: the same bytes every run.
func marshal(v any) []byte {
	data, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(fmt.Sprintf("modelapi: %T does not marshal: %v", v, err))
	}
	return data
}

// statusRecorder remembers the status a handler answered with (every
// answer writes its header at most once).
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() { flush(r.ResponseWriter) }

// apiError is one Reply.Error in each API's own terms.
type apiError struct {
	status int // Anthropic answers an overload with 529 instead
	// Anthropic's error type and message.
	anthropicType, anthropicMsg string
	// OpenAI's error type, code and message.
	openaiType, openaiCode, openaiMsg string
	// Gemini's status and message.
	geminiStatus, geminiMsg string
}

// apiErrorOf is Reply.Error errName in each API's terms.
func apiErrorOf(errName string) apiError {
	switch errName {
	case ErrRateLimit:
		return apiError{http.StatusTooManyRequests,
			"rate_limit_error", "This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.",
			"requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s.",
			"RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."}
	case ErrUnauthorized:
		return apiError{http.StatusUnauthorized,
			"authentication_error", "invalid x-api-key",
			"invalid_request_error", "invalid_api_key", "Incorrect API key provided.",
			"UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."}
	case ErrForbidden:
		return apiError{http.StatusForbidden,
			"permission_error", "Your API key does not have permission to use the specified resource.",
			"invalid_request_error", "unsupported_country_region_territory", "Country, region, or territory not supported",
			"PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
	case ErrOverloaded:
		return apiError{http.StatusServiceUnavailable,
			"overloaded_error", "Overloaded",
			"server_error", "server_is_overloaded", "The server is overloaded. Please try again later.",
			"UNAVAILABLE", "The model is overloaded. Please try again later."}
	}
	return apiError{http.StatusInternalServerError,
		"api_error", "Internal server error",
		"server_error", "server_error", "The server had an error while processing your request.",
		"INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"}
}
