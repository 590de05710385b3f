package main

// The advised style's three habits (PEER_STYLE=advised), each where controller-runtime's docs and
// the kubebuilder book put it for an action that must not repeat:
//
//   - uncached reads where the cache may be stale: before a create or a delete of a previous
//     message's Job (either cannot be undone), the Echo is read through the manager's APIReader
//     (controller-runtime's "use the API reader when you need a read that is not served from the
//     cache"), and a cache behind the server requeues; before a create, the Job too;
//   - the run claimed before the create: status.jobName and a Pending phase written with the
//     Echo's resourceVersion (an Update, so a concurrent writer's change fails it with a 409);
//   - every status write so locked: Update, not a merge patch without the resourceVersion.
//
// What it cannot avoid: a run whose Job finished and was removed (a TTL) before its end was
// recorded in status is created again; nothing on the server remembers it any more.

import (
	"context"
	"errors"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// errCacheBehind: the server holds a newer Echo than the cache; the reconcile requeues after
// cacheBehindRetry instead of acting on the stale copy.
var errCacheBehind = errors.New("the cache is behind the server")

const cacheBehindRetry = 200 * time.Millisecond

// claimRun runs before a create the cache says is needed. It returns the Job when the server
// has it (the cache had not seen it yet), nil when the create may go ahead (echo then carries
// the claim), and errCacheBehind when the cache's Echo is older than the server's. A claim that
// loses a race fails with a conflict and is retried with the queue's backoff.
func (r *EchoReconciler) claimRun(ctx context.Context, echo *Echo, jobName string) (*batchv1.Job, error) {
	if err := r.confirmFresh(ctx, echo, "create"); err != nil {
		return nil, err
	}
	var job batchv1.Job
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: echo.Namespace, Name: jobName}, &job)
	if err == nil {
		return &job, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if echo.Status.JobName == jobName {
		return nil, nil // claimed already (by an earlier pass, maybe of another replica): the create is this run's
	}
	echo.Status.JobName = jobName
	echo.Status.Phase = "Pending"
	echo.Status.ObservedGeneration = echo.Generation
	echo.Status.StartTime, echo.Status.CompletionTime = nil, nil
	return nil, r.Status().Update(ctx, echo)
}

// confirmFresh: nil when the server's Echo is the cached one (same resourceVersion), else
// errCacheBehind (or the read's error). A lagging Echo watch would otherwise take the current
// message's Job for a previous one and delete it, or start a run the server knows happened.
func (r *EchoReconciler) confirmFresh(ctx context.Context, echo *Echo, before string) error {
	if !r.Advised {
		return nil
	}
	var live Echo
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(echo), &live); err != nil {
		return err
	}
	if live.ResourceVersion != echo.ResourceVersion {
		log.FromContext(ctx).Info("the cache is behind the server: requeue", "before", before, "cached", echo.ResourceVersion, "live", live.ResourceVersion)
		return errCacheBehind
	}
	return nil
}

// writeStatus writes echo.Status: naive, a merge patch from `before` without the
// resourceVersion (the last writer wins); advised, an Update carrying it (a 409 if the Echo
// changed since it was read).
func (r *EchoReconciler) writeStatus(ctx context.Context, echo, before *Echo) error {
	if r.Advised {
		return r.Status().Update(ctx, echo)
	}
	return r.Status().Patch(ctx, echo, client.MergeFrom(before))
}
