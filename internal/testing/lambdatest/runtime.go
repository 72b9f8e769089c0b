// Package lambdatest runs a built Lambda function the way the Lambda service does: as its own
// process that pulls events from the Runtime API and posts back answers. Runtime is a small fake
// of that API, served on 127.0.0.1, since the official emulator cannot be installed here; Build
// and Start compile and launch a function under it against the local AWS stand-ins. Tests use
// it to prove that a function starts, reads its configuration and answers a real event, which
// in-process handler tests cannot show.
//
// The package is for Linux (and other Unix) test machines: it runs each function in its own
// process group so that nothing it starts outlives the test.
package lambdatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// apiPrefix is the Runtime API's version path, which the aws-lambda-go client hard-codes.
const apiPrefix = "/2018-06-01/runtime"

// MaxResponseBytes is Lambda's limit on a synchronous invocation's response. A larger answer
// fails the invocation here as it would in AWS, so a test cannot pass with a response that
// API Gateway would never deliver.
const MaxResponseBytes = 6 << 20

// DefaultTimeout is the invocation deadline handed to the function when Invoke's context has
// none. It is generous because the machines that run the tests are small and shared.
const DefaultTimeout = 30 * time.Second

// Runtime is a fake of the AWS Lambda Runtime API for one function process at a time. Invoke
// hands it an event; the function takes it from /invocation/next and answers through
// /invocation/{id}/response or /invocation/{id}/error.
type Runtime struct {
	srv *httptest.Server

	// pending hands queued invocations to the function's long-polling /next request. It is
	// unbuffered: an Invoke waiting to send is the queue, and one that gives up simply leaves it.
	pending chan *invocation
	closed  chan struct{}
	close   sync.Once

	mu       sync.Mutex
	inflight map[string]*invocation // queued or handed out, not yet answered
	initErr  *FunctionError
	initDone chan struct{} // closed when the function reports an init error
}

// invocation is one event and, once the function answers, its outcome.
type invocation struct {
	id       string
	event    []byte
	deadline time.Time
	done     chan struct{} // closed when response or err is set
	response []byte
	err      error
}

// FunctionError is a failure the function reported to the Runtime API: for one invocation
// (POST /invocation/{id}/error) or while starting (POST /init/error).
type FunctionError struct {
	Init    bool   // reported through /init/error: the function could not start
	Type    string // errorType, e.g. "errorString" or "Runtime.ExitError"
	Message string // errorMessage
	Body    []byte // the report as the function sent it
}

func (e *FunctionError) Error() string {
	where := "invocation"
	if e.Init {
		where = "init"
	}
	return fmt.Sprintf("function %s error %s: %s", where, e.Type, e.Message)
}

// New starts a Runtime on 127.0.0.1, stopped when the test ends.
func New(t testing.TB) *Runtime {
	t.Helper()
	r := &Runtime{
		pending:  make(chan *invocation),
		closed:   make(chan struct{}),
		inflight: map[string]*invocation{},
		initDone: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"/invocation/next", r.next)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/response", r.response)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/error", r.invocationError)
	mux.HandleFunc("POST "+apiPrefix+"/init/error", r.initError)
	// httptest listens on 127.0.0.1 only, so the fake is never reachable from elsewhere.
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.Close)
	return r
}

// Addr is the host:port to give a function as AWS_LAMBDA_RUNTIME_API.
func (r *Runtime) Addr() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// Close stops the Runtime; pending and later Invokes fail. Calling it again does nothing.
func (r *Runtime) Close() {
	r.close.Do(func() {
		// Release the function's long-polling /next first: httptest's Close waits for every
		// request in progress, and /next would otherwise wait for an event forever.
		close(r.closed)
		r.srv.Close()
	})
}

// Invoke queues event for the function, as a synchronous (RequestResponse) invocation, and
// waits for the answer: the response payload, a *FunctionError the function reported, or the
// context's error. The invocation's deadline is the context's, or DefaultTimeout from now.
func (r *Runtime) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultTimeout)
	}
	inv := &invocation{id: newRequestID(), event: event, deadline: deadline, done: make(chan struct{})}
	r.mu.Lock()
	r.inflight[inv.id] = inv
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.inflight, inv.id)
		r.mu.Unlock()
	}()

	select {
	case r.pending <- inv:
	case <-r.initDone:
		return nil, r.initErr
	case <-r.closed:
		return nil, errors.New("lambdatest: runtime closed")
	case <-ctx.Done():
		return nil, fmt.Errorf("lambdatest: event not taken by the function: %w", context.Cause(ctx))
	}

	select {
	case <-inv.done:
		return inv.response, inv.err
	case <-r.initDone:
		return nil, r.initErr
	case <-r.closed:
		return nil, errors.New("lambdatest: runtime closed")
	case <-ctx.Done():
		// The answer may have arrived together with the cancellation (a function that answers
		// and then exits): an answer wins.
		select {
		case <-inv.done:
			return inv.response, inv.err
		default:
		}
		return nil, fmt.Errorf("lambdatest: no answer from the function: %w", context.Cause(ctx))
	}
}

// next is GET /invocation/next: it blocks until an event is queued, as in Lambda, where the
// process is frozen between invocations.
func (r *Runtime) next(w http.ResponseWriter, req *http.Request) {
	select {
	case inv := <-r.pending:
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:lambdatest")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-"+strings.ReplaceAll(inv.id, "-", "")[:24]+";Sampled=0")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(inv.event)
	case <-req.Context().Done():
	case <-r.closed:
		// A non-200 answer makes the aws-lambda-go client exit, which is what a test that is
		// over wants from a function still waiting for work.
		http.Error(w, "runtime closed", http.StatusServiceUnavailable)
	}
}

// response is POST /invocation/{id}/response.
func (r *Runtime) response(w http.ResponseWriter, req *http.Request) {
	inv, ok := r.lookup(w, req)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxResponseBytes+1))
	if err != nil {
		http.Error(w, "read response: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > MaxResponseBytes {
		inv.finish(nil, &FunctionError{Type: "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("response payload larger than %d bytes", MaxResponseBytes)})
		writeAPIStatus(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge")
		return
	}
	inv.finish(body, nil)
	writeAPIStatus(w, http.StatusAccepted, "OK")
}

// invocationError is POST /invocation/{id}/error.
func (r *Runtime) invocationError(w http.ResponseWriter, req *http.Request) {
	inv, ok := r.lookup(w, req)
	if !ok {
		return
	}
	inv.finish(nil, readFunctionError(req, false))
	writeAPIStatus(w, http.StatusAccepted, "OK")
}

// initError is POST /init/error: every pending and later invocation fails with it.
func (r *Runtime) initError(w http.ResponseWriter, req *http.Request) {
	fe := readFunctionError(req, true)
	r.mu.Lock()
	if r.initErr == nil {
		r.initErr = fe
		close(r.initDone)
	}
	r.mu.Unlock()
	writeAPIStatus(w, http.StatusAccepted, "OK")
}

// lookup finds the invocation a POST names; an unknown or already answered one is a 400, as in
// Lambda, so that a function answering twice shows up as an error in its own output.
func (r *Runtime) lookup(w http.ResponseWriter, req *http.Request) (*invocation, bool) {
	r.mu.Lock()
	inv, ok := r.inflight[req.PathValue("id")]
	if ok {
		delete(r.inflight, inv.id)
	}
	r.mu.Unlock()
	if !ok {
		writeAPIStatus(w, http.StatusBadRequest, "InvalidRequestID")
	}
	return inv, ok
}

func (inv *invocation) finish(response []byte, err error) {
	inv.response, inv.err = response, err
	close(inv.done)
}

// readFunctionError reads the error document aws-lambda-go and other runtimes post:
// {"errorMessage": ..., "errorType": ..., "stackTrace": [...]}.
func readFunctionError(req *http.Request, init bool) *FunctionError {
	body, _ := io.ReadAll(io.LimitReader(req.Body, MaxResponseBytes))
	var doc struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}
	_ = json.Unmarshal(body, &doc) // a malformed report still fails the invocation
	fe := &FunctionError{Init: init, Type: doc.Type, Message: doc.Message, Body: body}
	if fe.Type == "" {
		fe.Type = req.Header.Get("Lambda-Runtime-Function-Error-Type")
	}
	if fe.Message == "" {
		fe.Message = string(body)
	}
	return fe
}

func writeAPIStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, "{\"status\":%q}\n", status)
}

// newRequestID returns a random request ID in the UUID form Lambda uses.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ---- building and starting functions -------------------------------------------------------

// builds holds one *build per function name, so that each test binary compiles a function once.
var builds sync.Map

type build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// BuildFlags are the `go build` flags of every function, the Makefile's LAMBDA_GOFLAGS (a test
// keeps the two in step): lambda.norpc leaves out aws-lambda-go's net/rpc entry point, which
// only the retired go1.x runtime used.
var BuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// Build compiles the function in ./functions/<name> of this module, once per test binary, the
// way `make build` does for deployment (GOOS=linux, CGO_ENABLED=0, BuildFlags, named bootstrap)
// but for the architecture of the machine that runs the tests (Lambda's is arm64), so that
// what the tests start is what Lambda would run. It returns the binary's path. The binaries
// live in a temporary directory that outlives single tests; Main deletes them.
func Build(t testing.TB, name string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() { b.dir, b.path, b.err = compile(name) })
	if b.err != nil {
		t.Fatalf("build function %s: %v", name, b.err)
	}
	return b.path
}

func compile(name string) (dir, path string, err error) {
	root, err := moduleRoot()
	if err != nil {
		return "", "", err
	}
	dir, err = os.MkdirTemp("", "lambdatest-"+name+"-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", append(append([]string{"build"}, BuildFlags...), "-o", path, "./functions/"+name)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return "", "", fmt.Errorf("go build ./functions/%s: %v\n%s", name, err, out)
	}
	return dir, path, nil
}

// moduleRoot asks the go command where this module's go.mod is, so that Build works from any
// package's test directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("go env GOMOD: not inside a module")
	}
	return filepath.Dir(gomod), nil
}

// Functions lists the deployed functions: the directories under functions/ with a main.go, as
// `make build` and the CDK stack find them.
func Functions(t testing.TB) []string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mains {
		names = append(names, filepath.Base(filepath.Dir(m)))
	}
	if len(names) == 0 {
		t.Fatal("no functions/*/main.go found")
	}
	return names
}

// Main runs a test binary's tests, then deletes the binaries Build compiled for them and exits:
// a TestMain's one line. The binaries are shared by every test of the binary, so no single
// test's cleanup may remove them.
func Main(m *testing.M) {
	code := m.Run()
	removeBuilds()
	os.Exit(code)
}

// removeBuilds deletes the binaries Build compiled.
func removeBuilds() {
	builds.Range(func(_, v any) bool {
		if b := v.(*build); b.dir != "" {
			_ = os.RemoveAll(b.dir)
		}
		return true
	})
}

// Config is the function's configuration: what CDK would set in its environment.
type Config struct {
	// Env are the KEY=value entries of its environment beyond the runtime's and the stand-ins'
	// (which Start sets): its table, buckets and queues (service.Config.ResourceEnv) and its
	// other settings. They win over the ones Start sets.
	Env []string
}

// Function is a started function process.
type Function struct {
	rt     *Runtime
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been reaped
	err    error         // cmd.Wait's result, set before exited closes
	output awstest.Output
	stop   sync.Once
}

// Start starts the function binary under rt, configured by cfg and pointed at the local AWS
// stand-ins named by this process's AWS_ENDPOINT_URL_* variables. The process is killed when
// the test ends, or earlier by Stop; if the test failed, its output is logged.
//
// The child gets a small environment like Lambda's rather than this process's, so that it
// cannot pick up real credentials or profiles: fixed test credentials, and endpoints that must
// be on loopback.
func Start(t testing.TB, binary string, rt *Runtime, cfg Config) *Function {
	t.Helper()
	env, err := functionEnv(rt, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &Function{rt: rt, exited: make(chan struct{})}
	cmd := exec.Command(binary)
	// Lambda runs bootstrap from its task root; running from the build directory also keeps the
	// SDK's relative fallbacks (no HOME) away from any .aws directory of the project.
	cmd.Dir = filepath.Dir(binary)
	cmd.Env = append(env, "LAMBDA_TASK_ROOT="+cmd.Dir)
	cmd.Env = append(cmd.Env, cfg.Env...)
	cmd.Stdout, cmd.Stderr = &f.output, &f.output
	// Its own process group, so that Stop also reaches anything the function starts.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Should a grandchild escape the group with the output pipe, Wait still returns.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", binary, err)
	}
	f.cmd = cmd
	go func() {
		f.err = cmd.Wait()
		close(f.exited)
	}()
	t.Cleanup(func() {
		f.Stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", binary, f.Output())
		}
	})
	return f
}

// functionEnv is the environment Lambda would give the function, with the stand-ins' endpoints.
func functionEnv(rt *Runtime, cfg Config) ([]string, error) {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	env := []string{
		"AWS_LAMBDA_RUNTIME_API=" + rt.Addr(),
		"AWS_LAMBDA_FUNCTION_NAME=lambdatest",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
		"AWS_REGION=" + region,
		"AWS_DEFAULT_REGION=" + region,
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_EC2_METADATA_DISABLED=true",
		"TZ=:UTC",
	}
	for _, name := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_S3"} {
		v := os.Getenv(name)
		if v == "" && name == "AWS_ENDPOINT_URL_S3" {
			// Tests keep S3 in-process (gofakes3), out of the function's reach; a closed local
			// port makes any S3 call fail fast instead of going to AWS.
			v = "http://127.0.0.1:9"
		}
		if err := checkLocal(name, v); err != nil {
			return nil, err
		}
		env = append(env, name+"="+v)
	}
	return env, nil
}

// checkLocal refuses an endpoint that is not on loopback, so a function under test can
// never reach a real AWS account.
func checkLocal(name, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s is not set: run the tests with `make test`, which starts the local stand-ins", name)
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" {
		return fmt.Errorf("%s=%s is not a local stand-in; tests never use real AWS", name, endpoint)
	}
	return nil
}

// Invoke sends event to the function and waits for its answer (see Runtime.Invoke). It fails
// at once, with the function's output, if the process exits before answering.
func (f *Function) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-f.exited:
			cancel(fmt.Errorf("function exited (%v) before answering; output:\n%s", f.err, f.Output()))
		case <-ctx.Done():
		}
	}()
	return f.rt.Invoke(ctx, event)
}

// PID is the function's process ID.
func (f *Function) PID() int { return f.cmd.Process.Pid }

// Exited is closed once the process has ended.
func (f *Function) Exited() <-chan struct{} { return f.exited }

// Output is what the function has written to stdout and stderr so far.
func (f *Function) Output() string { return f.output.String() }

// Stop kills the function and its process group and waits for it to end. Calling it again
// does nothing.
func (f *Function) Stop() {
	f.stop.Do(func() {
		pid := f.cmd.Process.Pid
		// The group first (its ID is the function's PID, thanks to Setpgid), then the process
		// itself in case it left the group.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = f.cmd.Process.Kill()
		<-f.exited
	})
}
