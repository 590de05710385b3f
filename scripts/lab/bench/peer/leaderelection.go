package main

// Opt-in leader election, for the fault campaign (scripts/lab/faults), which runs several
// replicas of each program against one Lease. Off unless LEADER_ELECTION=true, so every other
// benchmark runs the peer exactly as before.
//
// When on, it is controller-runtime's own (ctrl.Options LeaderElection*: the manager's elector,
// caches started on every replica, controllers only on the leader, the process ends when the
// lease is lost), configured from:
//
//	LEASE_NAMESPACE          the Lease's namespace (required: the peer runs outside a pod)
//	LEASE_NAME               the Lease's name (echoperator-peer)
//	LEASE_DURATION_SECONDS   controller-runtime's LeaseDuration (15)
//	RENEW_DEADLINE_SECONDS   RenewDeadline (10)
//	RETRY_PERIOD_SECONDS     RetryPeriod (2); all three may be fractional, e.g. 0.5
//	HA_NODE_ID               the identity written into the Lease; unset: controller-runtime's own
//	                         (the hostname plus a UUID)
//
// ReleaseOnCancel stays false, controller-runtime's default: a stopped leader's term runs out
// instead of being handed over.

import (
	"fmt"
	"os"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// withLeaderElection fills in opts' leader election from the environment; a bad setting stops
// the process, naming the setting and what it accepts.
func withLeaderElection(cfg *rest.Config, opts *ctrl.Options) {
	switch v := env("LEADER_ELECTION", "false"); v {
	case "false":
		return
	case "true":
	default:
		fail("LEADER_ELECTION must be true or false, got %q", v)
	}
	namespace := env("LEASE_NAMESPACE", "")
	if namespace == "" {
		fail("LEASE_NAMESPACE must name the Lease's namespace when LEADER_ELECTION=true")
	}
	lease := envSeconds("LEASE_DURATION_SECONDS", 15*time.Second)
	renew := envSeconds("RENEW_DEADLINE_SECONDS", 10*time.Second)
	retry := envSeconds("RETRY_PERIOD_SECONDS", 2*time.Second)
	opts.LeaderElection = true
	opts.LeaderElectionNamespace = namespace
	opts.LeaderElectionID = env("LEASE_NAME", "echoperator-peer")
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &lease, &renew, &retry
	opts.LeaderElectionReleaseOnCancel = false
	if id := os.Getenv("HA_NODE_ID"); id != "" {
		opts.LeaderElectionResourceLockInterface = leaseLock(cfg, namespace, opts.LeaderElectionID, id, renew)
	}
}

// leaseLock is the Lease lock controller-runtime makes for itself (its leaderelection package:
// the "leader-election" User-Agent suffix, a request timeout of max(renewDeadline/2, 1s)), except
// for the identity, which it does not let a caller choose.
func leaseLock(cfg *rest.Config, namespace, name, identity string, renew time.Duration) resourcelock.Interface {
	lc := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	lc.Timeout = max(renew/2, time.Second)
	client, err := coordinationv1client.NewForConfig(lc)
	must(err)
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
		Client:     client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
}

func envSeconds(name string, fallback time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return fallback
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || !(s > 0) || s > 3600 {
		fail("%s must be a positive number of seconds up to 3600, e.g. 15 or 0.5, got %q", name, v)
	}
	return time.Duration(s * float64(time.Second))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	os.Exit(2)
}
