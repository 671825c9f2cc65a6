// Package settingsapi is cursorkit's settings validation endpoint as an
// http.Handler an orchestrator can mount in its own server; `cursorkit serve`
// mounts it on a loopback listener. docs/contract.md ("The settings
// validation endpoint") states its routes, token, shapes and statuses:
//
//	GET /healthz                 no token; {"status":"ok"}
//	GET /v1/cursor-cli/settings  {"binaryPath": string|null}
//	PUT /v1/cursor-cli/settings  {"binaryPath": string|null}; see Handler
//	GET /v1/cursor-cli/status    the status --json object
//	GET /v1/cursor-cli/models    the models --json object (?refresh=true refreshes the cache)
//
// HEAD is answered on every route as GET is, without the body (net/http's
// server drops what a handler writes for HEAD and keeps Content-Length).
// Errors are {"error":{"kind","message","diagnostics":[]}}; a failed status
// or models request also carries the partial report under "status" or
// "models", as the CLI's --json output does.
package settingsapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/probe"
)

// MaxBodyBytes is the largest request body accepted (64 KiB); larger bodies
// get 413.
const MaxBodyBytes = 64 << 10

// Bounds on the diagnostics an error response carries.
const (
	maxDiagnostics    = 20
	maxDiagnosticLen  = 512
	maxReasonLen      = 1024
	saveFailurePrefix = "Cannot save Cursor CLI binary path: "
)

// store holds the configured Cursor CLI binary path (the settings file's
// cursorCliBinaryPath, "" for none): fileStore, or a fake in tests. The
// Handler serializes its own calls to setBinaryPath.
type store interface {
	binaryPath() (string, error)
	setBinaryPath(path string) error
}

// prober runs the Cursor CLI probes behind the endpoint: probeBackend, or
// a fake in tests. Reports are the values the CLI's --json prints; with an
// error, status and models may also return what was learned before the
// failure (nil when nothing was), which the response carries beside it.
type prober interface {
	// probeExact runs exactly the binary at path with --version: never a
	// PATH candidate in its place.
	probeExact(ctx context.Context, path string) (verdict, error)
	// status is `cursorkit status --json` for the configured binary.
	status(ctx context.Context) (any, error)
	// models is `cursorkit models --json`; refresh bypasses the cache.
	models(ctx context.Context, refresh bool) (any, error)
}

// verdict is the outcome of probing one candidate path.
type verdict struct {
	report      any      // the probe object returned with 200 when the path is saved
	ok          bool     // the candidate ran and its build is usable
	exact       bool     // the binary that ran is the candidate itself, not a PATH fallback
	cursorBuild bool     // its --version printed a Cursor build identifier: it is the Cursor CLI
	version     string   // what its --version printed (bounded, for the refusal)
	reason      string   // why the candidate is not usable, when not ok
	diagnostics []string // bounded lines (candidates tried, stderr tail) shown with a refusal
}

// Options configure a Handler.
type Options struct {
	// SettingsPath is the settings file holding cursorCliBinaryPath; it is
	// replaced atomically on every save, keeping its other members.
	// Required.
	SettingsPath string
	// Probe configures the probes; its Override is replaced by the
	// configured path (or the path being validated) on every request.
	Probe probe.Config
	// Token is the bearer token every route but /healthz requires; it must
	// not be empty.
	Token string
	// ProbeContext bounds every probe the handler starts. Probes are shared
	// between concurrent requests, so they do not run under any one
	// request's context; cancel ProbeContext to stop in-flight probes (and
	// their process trees) at shutdown. Nil means context.Background().
	ProbeContext context.Context
}

// Handler serves the settings validation endpoint. Create it with New; it is
// safe for concurrent use.
//
// PUT /v1/cursor-cli/settings saves a non-empty, absolute path only when
// that candidate alone (probe.ProbeExact; concurrent requests for one path
// share one probe) runs and its --version prints a Cursor build identifier
// not older than tested: 200 with the probe report. Otherwise it is 400
// "Cannot save Cursor CLI binary path: <reason>" with bounded diagnostics,
// and the file is not touched. An empty or null path clears the override.
// Saves are serialized.
type Handler struct {
	store    store
	prober   prober
	tokenSum [sha256.Size]byte
	probeCtx context.Context

	// saveMu serializes settings writes so concurrent saves never race on
	// the file's read-modify-replace.
	saveMu  sync.Mutex
	probes  flight[verdict]
	reports flight[any]
}

// New returns a Handler, or an input error when an option is missing.
func New(opts Options) (*Handler, error) {
	if opts.SettingsPath == "" {
		return nil, failure.New(failure.Input, "settingsapi: a settings file path is required")
	}
	files := fileStore{path: opts.SettingsPath}
	return newHandler(opts, files, probeBackend{store: files, cfg: opts.Probe})
}

// newHandler is New with the store and prober given (fakes, in tests).
func newHandler(opts Options, s store, p prober) (*Handler, error) {
	if opts.Token == "" {
		return nil, failure.New(failure.Input, "settingsapi: a bearer token is required")
	}
	ctx := opts.ProbeContext
	if ctx == nil {
		ctx = context.Background()
	}
	return &Handler{
		store:    s,
		prober:   p,
		tokenSum: sha256.Sum256([]byte(opts.Token)),
		probeCtx: ctx,
	}, nil
}

// route is one path: whether it needs no token, and its handlers (HEAD
// is answered as GET is; put is nil where PUT is not allowed).
type route struct {
	public   bool
	get, put http.HandlerFunc
}

func (h *Handler) route(path string) (route, bool) {
	switch path {
	case "/healthz":
		return route{public: true, get: h.healthz}, true
	case "/v1/cursor-cli/settings":
		return route{get: h.getSettings, put: h.putSettings}, true
	case "/v1/cursor-cli/status":
		return route{get: h.status}, true
	case "/v1/cursor-cli/models":
		return route{get: h.models}, true
	}
	return route{}, false
}

// ServeHTTP authenticates, routes and answers one request. An unauthenticated
// request gets 401 for every path but /healthz, so routes cannot be probed
// without the token.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rt, found := h.route(r.URL.Path)
	if !(found && rt.public) && !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cursorkit"`)
		writeError(w, http.StatusUnauthorized, failure.New(failure.Auth, "missing or wrong bearer token"), nil)
		return
	}
	if !found {
		writeError(w, http.StatusNotFound, failure.New(failure.Input, "no such route"), nil)
		return
	}
	allow := "GET, HEAD"
	if rt.put != nil {
		allow += ", PUT"
	}
	serve := map[string]http.HandlerFunc{http.MethodGet: rt.get, http.MethodHead: rt.get, http.MethodPut: rt.put}[r.Method]
	if serve == nil {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, failure.New(failure.Input, "method %s not allowed; use %s", detail.Cut(r.Method, 16), allow), nil)
		return
	}
	serve(w, r)
}

// authorized compares the request's bearer token with the configured one in
// constant time; hashing first keeps the comparison's time independent of
// the tokens' lengths too.
func (h *Handler) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		token = ""
	}
	token = strings.TrimSpace(token)
	sum := sha256.Sum256([]byte(token))
	match := subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) == 1
	return match && token != ""
}

func (h *Handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// settingsBody is the settings resource: a null binaryPath means no override.
type settingsBody struct {
	BinaryPath *string `json:"binaryPath"`
}

func (h *Handler) getSettings(w http.ResponseWriter, _ *http.Request) {
	path, err := h.store.binaryPath()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err, nil)
		return
	}
	writeJSON(w, http.StatusOK, settingsView(path))
}

func settingsView(path string) settingsBody {
	if path == "" {
		return settingsBody{}
	}
	return settingsBody{BinaryPath: &path}
}

// putSettings saves a new binary path only when it is absolute and that
// exact candidate's --version probe succeeds with a Cursor build
// identifier. The probe runs outside the save lock (and is shared with
// concurrent requests for the same path); only the write is serialized.
func (h *Handler) putSettings(w http.ResponseWriter, r *http.Request) {
	path, status, err := readSettingsRequest(w, r)
	if err != nil {
		writeError(w, status, err, nil)
		return
	}
	answer := any(settingsView(""))
	if path != "" {
		if !filepath.IsAbs(path) {
			writeError(w, http.StatusBadRequest, refusal(failure.Input, "the path must be absolute; a relative path or a bare name would be resolved against the server's working directory or PATH, not what the settings screen shows"), nil)
			return
		}
		v, err := h.probe(r.Context(), path)
		if err != nil {
			status := http.StatusBadRequest
			if failure.KindOf(err) == failure.Cancelled {
				status = http.StatusServiceUnavailable
			}
			msg, detail := splitDetail(err)
			diags := v.diagnostics
			if detail != "" {
				diags = append([]string{detail}, diags...)
			}
			writeError(w, status, refusal(failure.KindOf(err), msg), diags)
			return
		}
		kind, reason := failure.Setup, ""
		switch {
		case !v.ok:
			reason = cmp.Or(v.reason, "the binary did not pass its --version probe")
		case !v.exact:
			kind, reason = failure.MissingCLI, "that path does not run; only a PATH fallback did, and a fallback is not the path asked for"
		case !v.cursorBuild:
			kind, reason = failure.MissingCLI, notCursor(v.version)
		}
		if reason != "" {
			writeError(w, http.StatusBadRequest, refusal(kind, reason), v.diagnostics)
			return
		}
		answer = v.report
	}
	if err := h.save(path); err != nil {
		writeError(w, http.StatusInternalServerError, err, nil)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// notCursor is the reason a binary whose --version printed version (the
// first token, bounded) is not saved.
func notCursor(version string) string {
	if version == "" {
		return "that program is not the Cursor CLI: its --version printed nothing, not a Cursor build identifier"
	}
	return fmt.Sprintf("that program is not the Cursor CLI: its --version printed %q, not a Cursor build identifier", version)
}

// refusal is the 400 error of a path that cannot be saved.
func refusal(kind failure.Kind, reason string) error {
	return failure.New(kind, "%s%s", saveFailurePrefix, detail.Cut(reason, maxReasonLen))
}

func (h *Handler) save(path string) error {
	h.saveMu.Lock()
	defer h.saveMu.Unlock()
	if err := h.store.setBinaryPath(path); err != nil {
		if failure.KindOf(err) == failure.Unclassified {
			return failure.Wrap(failure.Setup, err, "saving the settings file")
		}
		return err
	}
	return nil
}

// probe runs (or joins) the --version probe of path.
func (h *Handler) probe(ctx context.Context, path string) (verdict, error) {
	return coalesced(ctx, h, &h.probes, path, func(ctx context.Context) (verdict, error) {
		return h.prober.probeExact(ctx, path)
	})
}

// coalesced runs fn under the handler's ProbeContext, shared with every
// concurrent request for the same key. A request that goes away stops
// waiting and leaves the probe to the other waiters; once ProbeContext is
// cancelled no new probe starts.
func coalesced[T any](ctx context.Context, h *Handler, f *flight[T], key string, fn func(context.Context) (T, error)) (T, error) {
	v, err := f.do(ctx, key, func() (T, error) {
		if err := h.probeCtx.Err(); err != nil {
			var zero T
			return zero, failure.Wrap(failure.Cancelled, err, "the server is shutting down")
		}
		return fn(h.probeCtx)
	})
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return v, failure.Wrap(failure.Cancelled, err, "the request was cancelled")
	}
	return v, err
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, failure.New(failure.Input, "status takes no query parameters"), nil)
		return
	}
	h.report(w, r, "status", "status", h.prober.status)
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	refresh, err := parseRefresh(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, err, nil)
		return
	}
	key := "models"
	if refresh {
		key = "models?refresh"
	}
	h.report(w, r, "models", key, func(ctx context.Context) (any, error) { return h.prober.models(ctx, refresh) })
}

// report answers with the report fn makes (shared as key by concurrent
// requests), or its error with the partial report, if any, under name, as
// `cursorkit status --json` and `models --json` print it:
// {"error":{...},"status":{...}}.
func (h *Handler) report(w http.ResponseWriter, r *http.Request, name, key string, fn func(context.Context) (any, error)) {
	report, err := coalesced(r.Context(), h, &h.reports, key, fn)
	switch {
	case err != nil && report != nil:
		writeJSON(w, statusFor(err), map[string]any{"error": newErrorDetail(err, nil), name: report})
	case err != nil:
		writeError(w, statusFor(err), err, nil)
	default:
		writeJSON(w, http.StatusOK, report)
	}
}

// parseRefresh accepts an empty query or refresh=true|false|1|0.
func parseRefresh(rawQuery string) (bool, error) {
	if rawQuery == "" {
		return false, nil
	}
	key, value, _ := strings.Cut(rawQuery, "=")
	if key != "refresh" || strings.Contains(value, "&") {
		return false, failure.New(failure.Input, "models takes only the query parameter refresh=true|false")
	}
	switch value {
	case "", "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, failure.New(failure.Input, "refresh must be true or false")
}

// statusFor maps a failure kind to an HTTP status: the request's fault is
// 400, the Cursor CLI's failure 502, a timeout 504, shutdown 503.
func statusFor(err error) int {
	switch failure.KindOf(err) {
	case failure.Input:
		return http.StatusBadRequest
	case failure.Timeout:
		return http.StatusGatewayTimeout
	case failure.Cancelled:
		return http.StatusServiceUnavailable
	case failure.Unclassified, failure.Resource:
		return http.StatusInternalServerError
	}
	return http.StatusBadGateway
}

// errorDetail is the "error" member of the endpoint's JSON error shape
// (docs/contract.md).
type errorDetail struct {
	Kind        failure.Kind `json:"kind"`
	Message     string       `json:"message"`
	Diagnostics []string     `json:"diagnostics"`
}

// writeError writes err as the JSON error shape. Diagnostics are bounded in
// count and length; detail from a *failure.Error joins them.
func writeError(w http.ResponseWriter, status int, err error, diagnostics []string) {
	writeJSON(w, status, map[string]any{"error": newErrorDetail(err, diagnostics)})
}

func newErrorDetail(err error, diagnostics []string) errorDetail {
	msg, head := splitDetail(err)
	if head != "" {
		diagnostics = append([]string{head}, diagnostics...)
	}
	return errorDetail{
		Kind:        failure.KindOf(err),
		Message:     detail.Cut(msg, maxReasonLen+len(saveFailurePrefix)),
		Diagnostics: boundDiagnostics(diagnostics),
	}
}

// splitDetail returns err's message without the detail of a *failure.Error
// at its head, and that detail, which belongs in the diagnostics.
func splitDetail(err error) (msg, detail string) {
	var fe *failure.Error
	if errors.As(err, &fe) && fe == err && fe.Detail != "" {
		msg = fe.Message
		if msg == "" {
			msg = string(fe.Kind)
		}
		return msg, fe.Detail
	}
	return err.Error(), ""
}

// boundDiagnostics drops repeated lines (an error's detail often repeats a
// report's diagnostic) and bounds the count and each line's length.
func boundDiagnostics(lines []string) []string {
	out := make([]string, 0, min(len(lines), maxDiagnostics+1))
	seen := make(map[string]bool, len(lines))
	unique := 0
	for _, line := range lines {
		if seen[line] {
			continue
		}
		seen[line] = true
		unique++
		if unique <= maxDiagnostics {
			out = append(out, detail.Cut(line, maxDiagnosticLen))
		}
	}
	if unique > maxDiagnostics {
		out = append(out, fmt.Sprintf("… %d more", unique-maxDiagnostics))
	}
	return out
}

// writeJSON writes v and a newline. Map members are sorted, so an error
// comes before the partial report beside it; nil slices are [] (the
// contract's shapes are arrays, never null); invalid UTF-8 (a path, an
// agent's words) becomes U+FFFD rather than failing the response. A value
// that cannot be written at all is a 500 error object instead.
func writeJSON(w http.ResponseWriter, status int, v any) {
	opts := json.JoinOptions(json.Deterministic(true), jsontext.AllowInvalidUTF8(true))
	body, err := json.Marshal(v, opts)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(map[string]any{"error": newErrorDetail(failure.Wrap(failure.Unclassified, err, "writing the response"), nil)}, opts)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n')) // the client is gone when this fails; nothing to tell it
}

// jsonMediaType reports whether a Content-Type header value is
// application/json or *+json, parameters allowed; a missing one is not.
func jsonMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// readSettingsRequest reads a PUT body, at most MaxBodyBytes, and returns the
// trimmed binary path ("" clears), or the error and its HTTP status. The
// Content-Type must be present and application/json or *+json: a body is
// never guessed to be JSON.
func readSettingsRequest(w http.ResponseWriter, r *http.Request) (path string, status int, err error) {
	if !jsonMediaType(r.Header.Get("Content-Type")) {
		return "", http.StatusUnsupportedMediaType,
			failure.New(failure.Input, "the request body must be sent with Content-Type: application/json")
	}
	var buf []byte
	if r.ContentLength <= MaxBodyBytes {
		buf, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	}
	var tooBig *http.MaxBytesError
	switch {
	case r.ContentLength > MaxBodyBytes || errors.As(err, &tooBig):
		return "", http.StatusRequestEntityTooLarge, failure.New(failure.Input, "request body exceeds %d bytes", MaxBodyBytes)
	case err != nil:
		return "", http.StatusBadRequest, failure.Wrap(failure.Input, err, "reading the request body")
	}
	path, err = decodeSettings(buf)
	return path, http.StatusBadRequest, err
}

// decodeSettings parses a PUT /v1/cursor-cli/settings body: exactly one JSON
// object, valid UTF-8, whose only key is "binaryPath" (matched
// case-sensitively, once), holding a string or null. It returns the trimmed
// path; "" means clear. Every error is of kind input and never echoes more
// than a bounded field name.
func decodeSettings(body []byte) (string, error) {
	if !utf8.Valid(body) {
		return "", failure.New(failure.Input, "the request body is not valid UTF-8")
	}
	// binaryPath given twice and an escaped lone surrogate in it (raw
	// invalid UTF-8 was refused above) are refused below, each by name;
	// inside a value that is not a string neither matters.
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", failure.New(failure.Input, "the request body must be a JSON object")
	}
	var raw jsontext.Value
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", malformed()
		}
		if key := tok.String(); key != "binaryPath" {
			return "", failure.New(failure.Input, "unknown field %q; the only field is binaryPath", detail.Cut(key, 64))
		}
		if raw != nil {
			return "", failure.New(failure.Input, "binaryPath appears more than once")
		}
		if raw, err = dec.ReadValue(); err != nil {
			return "", malformed()
		}
		raw = raw.Clone()
	}
	if _, err := dec.ReadToken(); err != nil { // the closing '}'
		return "", malformed()
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return "", failure.New(failure.Input, "the request body must hold exactly one JSON object")
	}
	switch raw.Kind() {
	case 0:
		return "", failure.New(failure.Input, "binaryPath is required (null or \"\" clears it)")
	case 'n':
		return "", nil
	case '"':
		var path string
		if json.Unmarshal(raw, &path) != nil {
			return "", failure.New(failure.Input, "binaryPath holds an escaped lone surrogate (\\uD800 to \\uDFFF), which is no character")
		}
		path = strings.TrimSpace(path)
		if strings.ContainsFunc(path, unicode.IsControl) {
			return "", failure.New(failure.Input, "binaryPath must not contain control characters")
		}
		return path, nil
	}
	return "", failure.New(failure.Input, "binaryPath must be a string or null") // the contract's exact words
}

func malformed() error {
	return failure.New(failure.Input, "the request body is not valid JSON")
}
