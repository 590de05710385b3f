// echoperator-peer: the Echo controller written with controller-runtime, as the benchmarks'
// peer (npm run bench -- peers). It does the operator's work (src/controllers/echo) the way a
// controller-runtime user would: For(Echo).Owns(Job), the manager's cached client, a status
// patch, NUM_WORKERS concurrent reconciles, and every client and controller setting left at
// controller-runtime's default (no client-side rate limit, HTTP/2, protobuf off for custom
// resources, and since v0.23 the priority queue: adds from the initial list and resyncs of
// unchanged objects go behind fresh events).
//
// It reads the operator's environment variables that the benchmarks set: KUBECONFIG,
// WATCH_NAMESPACES (one or more, comma-separated; empty = all), NUM_WORKERS (4), JOB_IMAGE
// (busybox:1.37), HEALTH_PORT (/readyz answers 200 once the Echo and Job caches synced),
// METRICS_PORT (controller-runtime's metrics, the names the operator exports too) and LOG_LEVEL.
// Leader election is off unless LEADER_ELECTION=true (leaderelection.go, for the fault campaign).
// PEER_STYLE picks the reconciler's style: naive (default) or advised (reconciler.go, advised.go).
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"go.uber.org/zap/zapcore"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func envInt(name string, fallback int) int {
	v := env(name, strconv.Itoa(fallback))
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		fmt.Fprintf(os.Stderr, "error: %s must be a non-negative integer, got %q\n", name, v)
		os.Exit(2)
	}
	return n
}

func main() {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false), zap.Level(logLevel(env("LOG_LEVEL", "info")))))
	setupLog := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(addEchoTypes(scheme))

	cacheOpts := cache.Options{}
	if list := env("WATCH_NAMESPACES", ""); list != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(list, ",") {
			cacheOpts.DefaultNamespaces[strings.TrimSpace(ns)] = cache.Config{}
		}
	}
	cfg := ctrl.GetConfigOrDie()
	// Not a performance setting: lets the audit log tell the peer's requests apart.
	cfg.UserAgent = "echoperator-peer/controller-runtime"

	opts := ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: fmt.Sprintf(":%d", envInt("METRICS_PORT", 2112))},
		HealthProbeBindAddress: fmt.Sprintf(":%d", envInt("HEALTH_PORT", 8081)),
	}
	withLeaderElection(cfg, &opts)
	mgr, err := ctrl.NewManager(cfg, opts)
	must(err)
	ctx := ctrl.SetupSignalHandler()
	must(mgr.GetFieldIndexer().IndexField(ctx, &batchv1.Job{}, jobOwnerKey, jobOwnerIndex))

	// The informers the controller will use, so readiness can say when they synced.
	var synced []func() bool
	for _, obj := range []client.Object{&Echo{}, &batchv1.Job{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		must(err)
		synced = append(synced, inf.HasSynced)
	}
	must(mgr.AddReadyzCheck("informers-synced", func(*http.Request) error {
		for _, ok := range synced {
			if !ok() {
				return fmt.Errorf("caches not synced yet")
			}
		}
		return nil
	}))

	// The core/v1 Events recorder (deprecated since v0.23 for events.k8s.io/v1): the operator
	// writes core/v1 Events, so both write the same objects and the bench counts them alike.
	r := &EchoReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("echoperator-peer"), JobImage: env("JOB_IMAGE", "busybox:1.37")} //nolint:staticcheck
	switch style := env("PEER_STYLE", "naive"); style {
	case "naive":
	case "advised":
		r.Advised, r.APIReader = true, mgr.GetAPIReader()
	default:
		fail("PEER_STYLE must be naive or advised, got %q", style)
	}
	must(ctrl.NewControllerManagedBy(mgr).
		Named("echo").
		For(&Echo{}).
		Owns(&batchv1.Job{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: envInt("NUM_WORKERS", 4)}).
		Complete(r))

	setupLog.Info("starting echoperator-peer", "workers", envInt("NUM_WORKERS", 4), "namespaces", env("WATCH_NAMESPACES", "(all)"))
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func logLevel(s string) zapcore.Level {
	if s == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}

func must(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
