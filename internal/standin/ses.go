// Package standin starts the local stand-ins that run as child processes of the local service
// and the tests: the SES v2 stand-in (npm aws-ses-v2-local, pinned in layers/standins).
// DynamoDB Local and the SQS stand-in outlive a single process and are started by
// layers/standins/standins.sh instead.
package standin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// SESScript is the stand-in's command-line program, relative to the repository.
const SESScript = "layers/standins/node_modules/aws-ses-v2-local/dist/cli.js"

// SES is a running SES v2 stand-in: SendEmail is accepted at URL, and Mailbox reads what was
// sent.
type SES struct {
	URL string
	cmd *exec.Cmd
}

// StartSES starts the stand-in from the repository at root on 127.0.0.1:port (0: a free port)
// and returns once it answers. It dies with this process (Linux), and Stop ends it.
func StartSES(ctx context.Context, root string, port int) (*SES, error) {
	script := filepath.Join(root, SESScript)
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("the SES stand-in is not installed (make deps-local): %w", err)
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	cmd := exec.Command("node", script, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.SysProcAttr = sysProcAttr()
	s := &SES{URL: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	// The parent-death signal follows the thread that started the child, not the process:
	// that thread stays locked to this goroutine, which waits for the stand-in, so that no
	// other goroutine's locked exit (the browser launcher's) takes it and the stand-in along.
	started, exited := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start the SES stand-in: %w", err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the SES stand-in exited at start (port %d in use?): %v", port, err)
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(s.URL + "/health-check"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.Stop()
	return nil, errors.New("the SES stand-in did not answer within 15 s")
}

// Root finds the repository: the working directory or the nearest above it that holds
// layers/standins (make run works from the repository, tests from their package).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "layers", "standins")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the openvitals repository (no layers/standins above the working directory)")
		}
		dir = parent
	}
}

// Stop ends the stand-in.
func (s *SES) Stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// Client is an SES v2 client sending to the stand-in (which checks no credentials).
func (s *SES) Client() *sesv2.Client {
	return sesv2.New(sesv2.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

// Email is a message the stand-in received.
type Email struct {
	// MessageID is the ID SendEmail answered; Headers the custom headers sent with it.
	MessageID string `json:"messageId"`
	Headers   []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers"`
	Subject     string `json:"subject"`
	Destination struct {
		To []string `json:"to"`
	} `json:"destination"`
	From string `json:"from"`
	Body struct {
		Text string `json:"text"`
		HTML string `json:"html"`
	} `json:"body"`
}

// Mailbox returns every message the stand-in received.
func (s *SES) Mailbox(ctx context.Context) ([]Email, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/store", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var store struct {
		Emails []Email `json:"emails"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&store); err != nil {
		return nil, fmt.Errorf("read the SES stand-in's mailbox: %w", err)
	}
	return store.Emails, nil
}
