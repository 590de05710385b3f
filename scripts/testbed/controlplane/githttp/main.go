// Command githttp serves the bare git repositories in a folder over git's smart HTTP protocol,
// on a loopback address only, for the local cluster's GitOps tooling (Flux's source-controller
// clones from it; tests push to it).
//
// Nothing of the protocol is written here: git's own server side, `git http-backend`, answers
// every request, run as a CGI program by Go's net/http/cgi, the two maintained pieces that
// together are what git's documentation describes for serving over HTTP. Pushes are enabled
// (http.receivepack) without authentication, which is why it listens on loopback only.
//
// It writes the address it listens on to -address-file once it accepts connections (so the
// caller can ask for port 0 and never race for a port), and on SIGTERM or SIGINT stops
// accepting, lets requests in flight finish, and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	root := flag.String("root", "", "folder holding the bare repositories (NAME.git), served as /NAME.git")
	listen := flag.String("listen", "127.0.0.1:0", "loopback address and port to listen on (port 0: any free port)")
	addressFile := flag.String("address-file", "", "file to write the address listened on to, once listening")
	flag.Parse()
	if err := run(*root, *listen, *addressFile); err != nil {
		fmt.Fprintf(os.Stderr, "githttp: %v\n", err)
		os.Exit(2)
	}
}

func run(root, listen, addressFile string) error {
	if root == "" {
		return errors.New("-root is required: the folder holding the bare repositories")
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-listen %q: must be a loopback IP address (pushes are not authenticated), e.g. 127.0.0.1:0", listen)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return fmt.Errorf("git is not installed: %w", err)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	handler := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + absRoot,
			"GIT_HTTP_EXPORT_ALL=1",
			// Pushes without REMOTE_USER, for every repository under the root.
			"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=http.receivepack",
			"GIT_CONFIG_VALUE_0=true",
		},
		InheritEnv: []string{"PATH", "HOME", "TMPDIR"},
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	if addressFile != "" {
		// Written whole, then renamed: a reader never sees half an address.
		tmp := addressFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, addressFile); err != nil {
			return err
		}
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return server.Shutdown(shutdown)
	}
}
